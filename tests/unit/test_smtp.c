/* test_smtp: the SMTP client state machine (engine/smtp.c) against scripted server
 * replies over an in-memory connection (session_script.h): the exchange in lockstep
 * and pipelined, what the ledger learns from the end-of-data reply, and how
 * refusals, a 421 and replies nobody asked for are counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "session_script.h"

#define SMTP_ARGS(pipelining)                                                                   \
    "--smtp", "127.0.0.1:25", "--readers", "0", "--msgs-per-conn", "1", "--size", "100",       \
        "--set", "users.count=3", "--pipelining", pipelining

/* The session's message up to its final dot; 1 if it carried our headers. */
static int take_body(struct script *sc)
{
    char line[2048];
    int ours = 0;
    for (;;) {
        script_line(sc, line, sizeof line);
        if (!strcmp(line, "."))
            return ours;
        ours |= !strncmp(line, "X-Mailsoak-Id: ", 15) && !strncmp(line + 15, sc->run->run_id, 8);
    }
}

static struct ledger_entry *first_entry(struct script *sc)
{
    return ledger_get(&sc->run->ledger, ledger_seq(0, 0));
}

static void a_message_in_lockstep(void **state)
{
    const char *argv[] = { SMTP_ARGS("off") };
    struct script *sc = script_new(&smtp_ops, sizeof argv / sizeof *argv, argv);
    script_say(sc, "220 test ESMTP\r\n");
    script_expect(sc, "EHLO mailsoak.test");
    script_say(sc, "250-test\r\n250 PIPELINING\r\n");
    script_expect(sc, "MAIL FROM:<mailsoak@test.local>");
    script_quiet(sc, 20);                        /* lockstep: RCPT waits for MAIL's reply */
    script_say(sc, "250 ok\r\n");
    script_expect(sc, "RCPT TO:<user000");
    script_say(sc, "250 ok\r\n");
    script_expect(sc, "DATA");
    assert_null(first_entry(sc));                /* no ledger entry before the body */
    script_say(sc, "354 go ahead\r\n");
    assert_true(take_body(sc));
    struct ledger_entry *e = first_entry(sc);
    assert_non_null(e);
    assert_false(atomic_load(&e->state) & LS_ACCEPTED);    /* not before the reply */
    script_say(sc, "250 queued as 1\r\n");
    script_expect(sc, "QUIT");
    assert_true(atomic_load(&e->state) & LS_ACCEPTED);
    assert_int_equal(sc->st->c.sent, 1);
    assert_int_equal(atomic_load(&sc->run->accepted), 1);
    assert_int_equal(sc->st->total[LAT_SMTP_EOD].count, 1);
    assert_int_equal(sc->st->nerr, 0);
    /* The senders' window closes: after its QUIT the session connects no more. */
    atomic_store(&sc->run->phase, PH_DRAIN);
    session_set_phase(&sc->set, PH_DRAIN);
    script_say(sc, "221 bye\r\n");
    script_run(sc, 50);
    assert_int_equal(sc->st->c.smtp_sessions, 1);
    assert_int_equal(sc->dials, 1);
    assert_int_equal(session_set_open(&sc->set), 0);
    script_free(sc);
}

/* With PIPELINING the transaction goes out as one group, and QUIT rides behind the
 * final dot (RFC 2920). */
static void a_pipelined_message(void **state)
{
    const char *argv[] = { SMTP_ARGS("auto") };
    struct script *sc = script_new(&smtp_ops, sizeof argv / sizeof *argv, argv);
    script_say(sc, "220 test ESMTP\r\n");
    script_expect(sc, "EHLO");
    script_say(sc, "250-test\r\n250 PIPELINING\r\n");
    script_expect(sc, "MAIL FROM:");
    script_expect(sc, "RCPT TO:");
    script_expect(sc, "DATA");
    script_say(sc, "250 ok\r\n250 ok\r\n354 go ahead\r\n");
    assert_true(take_body(sc));
    script_expect(sc, "QUIT");                   /* before the reply to the dot */
    script_say(sc, "250 queued\r\n221 bye\r\n");
    script_run(sc, 20);
    assert_true(atomic_load(&first_entry(sc)->state) & LS_ACCEPTED);
    assert_int_equal(sc->st->c.sent, 1);
    assert_int_equal(sc->st->nerr, 0);
    script_free(sc);
}

/* A refused recipient fails the transaction: it is counted by stage and code, no
 * body goes out, the session resets and sends nothing more. */
static void a_refused_recipient(void **state)
{
    const char *argv[] = { SMTP_ARGS("off") };
    struct script *sc = script_new(&smtp_ops, sizeof argv / sizeof *argv, argv);
    script_say(sc, "220 test ESMTP\r\n");
    script_expect(sc, "EHLO");
    script_say(sc, "250 test\r\n");
    script_expect(sc, "MAIL FROM:");
    script_say(sc, "250 ok\r\n");
    script_expect(sc, "RCPT TO:");
    script_say(sc, "550 no such user\r\n");
    script_expect(sc, "RSET");
    script_say(sc, "250 reset\r\n");
    script_expect(sc, "QUIT");
    assert_int_equal(script_errors(sc, "smtp_rcpt_550"), 1);
    assert_null(first_entry(sc));
    assert_int_equal(sc->st->c.sent, 0);
    assert_int_equal(atomic_load(&sc->run->accepted), 0);
    script_free(sc);
}

/* The end-of-data refusal is the ledger's: the message is rejected, not lost. */
static void a_refused_message(void **state)
{
    const char *argv[] = { SMTP_ARGS("off") };
    struct script *sc = script_new(&smtp_ops, sizeof argv / sizeof *argv, argv);
    script_say(sc, "220 test ESMTP\r\n");
    script_expect(sc, "EHLO");
    script_say(sc, "250 test\r\n");
    script_expect(sc, "MAIL FROM:");
    script_say(sc, "250 ok\r\n");
    script_expect(sc, "RCPT TO:");
    script_say(sc, "250 ok\r\n");
    script_expect(sc, "DATA");
    script_say(sc, "354 go ahead\r\n");
    take_body(sc);
    script_say(sc, "554 rejected: spam\r\n");
    script_expect(sc, "QUIT");
    uint32_t st = atomic_load(&first_entry(sc)->state);
    assert_true(st & LS_REJECTED);
    assert_false(st & LS_ACCEPTED);
    assert_int_equal(sc->st->c.rejected, 1);
    assert_int_equal(sc->st->c.sent, 0);
    assert_int_equal(script_errors(sc, "smtp_eod_554"), 1);
    script_free(sc);
}

/* 421 closes the channel whatever was asked: counted at its stage, the session
 * connects again. */
static void a_421_mid_transaction(void **state)
{
    const char *argv[] = { SMTP_ARGS("off") };
    struct script *sc = script_new(&smtp_ops, sizeof argv / sizeof *argv, argv);
    script_say(sc, "220 test ESMTP\r\n");
    script_expect(sc, "EHLO");
    script_say(sc, "250 test\r\n");
    script_expect(sc, "MAIL FROM:");
    script_say(sc, "421 shutting down\r\n");
    script_run(sc, 300);                         /* the backoff after one failure: 100 ms */
    assert_int_equal(script_errors(sc, "smtp_mail_421"), 1);
    assert_int_equal(sc->dials, 2);
    script_say(sc, "220 back\r\n");
    script_expect(sc, "EHLO");
    script_free(sc);
}

/* A reply sent before it was asked for answers nothing: the session does not take
 * it for the next command's (issue 13) and gives up the connection. */
static void a_reply_nobody_asked_for(void **state)
{
    const char *argv[] = { SMTP_ARGS("off") };
    struct script *sc = script_new(&smtp_ops, sizeof argv / sizeof *argv, argv);
    script_say(sc, "220 test ESMTP\r\n");
    script_expect(sc, "EHLO");
    script_say(sc, "250 test\r\n250 ok\r\n");   /* the second would answer MAIL */
    script_run(sc, 20);
    assert_int_equal(script_errors(sc, "smtp_mail_protocol"), 1);
    assert_int_equal(strncmp(sc->st->ex[0].text[0], "sent unasked: 250 ok", 20), 0);
    assert_null(first_entry(sc));
    script_free(sc);
}

/* A server that hangs up after the greeting is a connection error of the EHLO. */
static void a_server_that_hangs_up(void **state)
{
    const char *argv[] = { SMTP_ARGS("off") };
    struct script *sc = script_new(&smtp_ops, sizeof argv / sizeof *argv, argv);
    script_say(sc, "220 test ESMTP\r\n");
    script_expect(sc, "EHLO");
    script_hang_up(sc);
    script_run(sc, 20);
    assert_int_equal(script_errors(sc, "smtp_ehlo_closed"), 1);
    script_free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_message_in_lockstep),   cmocka_unit_test(a_pipelined_message),
        cmocka_unit_test(a_refused_recipient),     cmocka_unit_test(a_refused_message),
        cmocka_unit_test(a_421_mid_transaction),   cmocka_unit_test(a_reply_nobody_asked_for),
        cmocka_unit_test(a_server_that_hangs_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
