/* test_smtp: the SMTP client state machine (engine/smtp.c) against scripted server
 * replies over an in-memory connection (session_script.h): the exchange in lockstep
 * and pipelined, what the ledger learns from the end-of-data reply, and how
 * refusals, a 421 and replies nobody asked for are counted; AUTH LOGIN and a
 * refused AUTH; every recipient's queue id; the retry back-off doubling per try. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine/sasl.h"
#include "engine/smtp.h"
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

/* Banner, EHLO, MAIL and RCPT accepted, in lockstep. */
#define UP_TO_DATA "S: 220 test ESMTP", "C: EHLO mailsoak.test", "S: 250 test", "C: MAIL FROM:<mailsoak@test.local>", \
                   "S: 250 ok", "C: RCPT TO:<user000", "S: 250 ok", "C: DATA"

static void a_message_in_lockstep(void **state)
{
    struct script *sc = SCRIPT_NEW(&smtp_ops, SMTP_ARGS("off"));
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO mailsoak.test", "S: 250-test", "S: 250 SIZE",
                "C: MAIL FROM:<mailsoak@test.local>", NULL);
    script_quiet(sc, 20);                        /* lockstep: RCPT waits for MAIL's reply */
    script_talk(sc, "S: 250 ok", "C: RCPT TO:<user000", "S: 250 ok", "C: DATA", NULL);
    assert_null(first_entry(sc));                /* no ledger entry before the body */
    script_talk(sc, "S: 354 go ahead", NULL);
    assert_true(take_body(sc));
    struct ledger_entry *e = first_entry(sc);
    assert_non_null(e);
    assert_false(atomic_load(&e->state) & LS_ACCEPTED);    /* not before the reply */
    script_talk(sc, "S: 250 2.0.0 Ok: queued as 4XyZ1", "C: QUIT", NULL);
    assert_true(atomic_load(&e->state) & LS_ACCEPTED);
    assert_string_equal(ledger_qid(&sc->run->ledger, ledger_seq(0, 0)), "4XyZ1");   /* the server's id */
    assert_int_equal(sc->st->c.sent, 1);
    assert_int_equal(atomic_load(&sc->run->accepted), 1);
    assert_int_equal(sc->st->total[LAT_SMTP_EOD].count, 1);
    assert_int_equal(sc->st->nerr, 0);
    /* The senders' window closes: after its QUIT the session connects no more. */
    atomic_store(&sc->run->phase, PH_DRAIN);
    session_set_phase(&sc->set, PH_DRAIN);
    script_talk(sc, "S: 221 bye", NULL);
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
    struct script *sc = SCRIPT_NEW(&smtp_ops, SMTP_ARGS("auto"));
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO", "S: 250-test", "S: 250 PIPELINING",
                "C: MAIL FROM:", "C: RCPT TO:", "C: DATA", "S: 250 ok", "S: 250 ok", "S: 354 go ahead", NULL);
    assert_true(take_body(sc));
    script_talk(sc, "C: QUIT", "S: 250 queued", "S: 221 bye", NULL);    /* QUIT before the dot's reply */
    script_run(sc, 20);
    assert_true(atomic_load(&first_entry(sc)->state) & LS_ACCEPTED);
    assert_string_equal(ledger_qid(&sc->run->ledger, ledger_seq(0, 0)), "");        /* none given */
    assert_int_equal(sc->st->c.sent, 1);
    assert_int_equal(sc->st->nerr, 0);
    script_free(sc);
}

/* A refused recipient fails the transaction: it is counted by stage and code, no
 * body goes out, the session resets and sends nothing more. */
static void a_refused_recipient(void **state)
{
    struct script *sc = SCRIPT_NEW(&smtp_ops, SMTP_ARGS("off"));
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO", "S: 250 test", "C: MAIL FROM:", "S: 250 ok", "C: RCPT TO:",
                "S: 550 no such user", "C: RSET", "S: 250 reset", "C: QUIT", NULL);
    assert_int_equal(script_errors(sc, "smtp_rcpt_550"), 1);
    assert_null(first_entry(sc));
    assert_int_equal(sc->st->c.sent, 0);
    assert_int_equal(atomic_load(&sc->run->accepted), 0);
    script_free(sc);
}

/* The errors counted, over every class. */
static uint64_t errors_total(const struct script *sc)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < sc->st->nerr; i++)
        n += sc->st->err[i].count;
    return n;
}

/* The user of "RCPT TO:<user000N@test.local>" the session sent next. */
static unsigned take_rcpt(struct script *sc)
{
    char line[2048];
    unsigned u;
    script_line(sc, line, sizeof line);
    if (sscanf(line, "RCPT TO:<user%u@", &u) != 1)
        fail_msg("expected a RCPT, the session sent '%s'", line);
    return u;
}

/* Three recipients, one refused at RCPT (each in turn), in lockstep or pipelined:
 * the refusal is that recipient's and counted once, the message goes to the other
 * two, and the ledger has an entry for each of them and none for it (a reply
 * mapped to the wrong recipient made 20 false lost and 20 unattributed in a soak,
 * no test failing). */
static void one_of_three_refused(int pipelined, int refused)
{
    struct script *sc = SCRIPT_NEW(&smtp_ops, SMTP_ARGS(pipelined ? "auto" : "off"), "--set", "smtp.rcpts=3");
    const char *reply[3];
    unsigned u[3], ok[2], nok = 0;
    for (int i = 0; i < 3; i++)
        reply[i] = i == refused ? "S: 550 5.1.1 no such user" : "S: 250 ok";
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO", "S: 250-test", pipelined ? "S: 250 PIPELINING" : "S: 250 SIZE",
                "C: MAIL FROM:", NULL);
    if (pipelined) {
        for (int i = 0; i < 3; i++)
            u[i] = take_rcpt(sc);
        script_talk(sc, "C: DATA", "S: 250 ok", reply[0], reply[1], reply[2], "S: 354 go ahead", NULL);
    } else {
        script_talk(sc, "S: 250 ok", NULL);
        for (int i = 0; i < 3; i++) {
            u[i] = take_rcpt(sc);
            script_talk(sc, reply[i], NULL);
        }
        script_talk(sc, "C: DATA", "S: 354 go ahead", NULL);
    }
    assert_true(u[0] != u[1] && u[1] != u[2] && u[0] != u[2]);
    for (int i = 0; i < 3; i++)
        if (i != refused)
            ok[nok++] = u[i];
    char to[256], line[2048];
    snprintf(to, sizeof to, "To: <user%04u@test.local>, <user%04u@test.local>", ok[0], ok[1]);
    int saw_to = 0;
    for (script_line(sc, line, sizeof line); strcmp(line, "."); script_line(sc, line, sizeof line))
        saw_to |= !strcmp(line, to);
    if (!saw_to)
        fail_msg("RCPT %d refused: the message was not addressed '%s'", refused + 1, to);
    if (pipelined)
        script_talk(sc, "C: QUIT", "S: 250 queued", "S: 221 bye", NULL);
    else
        script_talk(sc, "S: 250 queued", "C: QUIT", "S: 221 bye", NULL);
    script_run(sc, 20);
    for (unsigned i = 0; i < 2; i++) {
        struct ledger_entry *e = ledger_get(&sc->run->ledger, ledger_seq(0, i));
        assert_non_null(e);
        if (e->user != ok[i])
            fail_msg("RCPT %d refused: entry %u is user %u's, want user %u's", refused + 1, i, e->user, ok[i]);
        assert_true(atomic_load(&e->state) & LS_ACCEPTED);
    }
    assert_null(ledger_get(&sc->run->ledger, ledger_seq(0, 2)));
    assert_int_equal(script_errors(sc, "smtp_rcpt_550"), 1);
    assert_int_equal(errors_total(sc), 1);
    assert_int_equal(sc->st->c.bounced, 1);
    script_free(sc);
}
static void one_of_three_refused_in_lockstep(void **state)
{
    for (int i = 0; i < 3; i++)
        one_of_three_refused(0, i);
}
static void one_of_three_refused_pipelined(void **state)
{
    for (int i = 0; i < 3; i++)
        one_of_three_refused(1, i);
}

/* A think time: after a message's end-of-data reply the sender keeps the
 * connection idle for smtp.think before its next MAIL, in lockstep and pipelined
 * (where the next group would otherwise ride behind the dot). */
static void think_time_between_messages(int pipelined)
{
    struct script *sc = SCRIPT_NEW(&smtp_ops, "--smtp", "127.0.0.1:25", "--readers", "0", "--msgs-per-conn", "2",
                                   "--size", "100", "--set", "users.count=3", "--pipelining",
                                   pipelined ? "auto" : "off", "--set", "smtp.think=300ms");
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO", "S: 250-test", pipelined ? "S: 250 PIPELINING" : "S: 250 SIZE",
                NULL);
    if (pipelined)
        script_talk(sc, "C: MAIL FROM:", "C: RCPT TO:", "C: DATA", "S: 250 ok", "S: 250 ok", "S: 354 go ahead", NULL);
    else
        script_talk(sc, "C: MAIL FROM:", "S: 250 ok", "C: RCPT TO:", "S: 250 ok", "C: DATA", "S: 354 go ahead", NULL);
    assert_true(take_body(sc));
    script_talk(sc, "S: 250 queued as 1", NULL);
    /* The timer is armed on the monotonic clock, a little ahead of the loop's:
     * the MAIL comes at 300 ms of the loop's clock or some ms after it. */
    uint64_t waited = script_run_until_line(sc, 30000);
    if (waited < 300)
        fail_msg("the next MAIL after %llu ms, before the think time", (unsigned long long)waited);
    script_expect(sc, "MAIL FROM:");
    assert_int_equal(sc->st->c.sent, 1);
    assert_int_equal(sc->st->nerr, 0);
    script_free(sc);
}
static void think_time_in_lockstep(void **state) { think_time_between_messages(0); }
static void think_time_pipelined(void **state) { think_time_between_messages(1); }

/* A pipelined group whose MAIL is refused: the RCPT and DATA refusals after it
 * are its echoes (RFC 2920 3.1), not errors of their own: one error counted, no
 * entry, no body. */
static void a_refused_mail_and_its_echoes(void **state)
{
    struct script *sc = SCRIPT_NEW(&smtp_ops, SMTP_ARGS("auto"), "--set", "smtp.rcpts=3");
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO", "S: 250-test", "S: 250 PIPELINING", "C: MAIL FROM:",
                "C: RCPT TO:", "C: RCPT TO:", "C: RCPT TO:", "C: DATA", "S: 452 4.3.1 insufficient system storage",
                "S: 503 5.5.1 need MAIL", "S: 503 5.5.1 need MAIL", "S: 503 5.5.1 need MAIL",
                "S: 503 5.5.1 no valid recipients", NULL);
    script_run(sc, 20);
    assert_int_equal(script_errors(sc, "smtp_mail_452"), 1);
    assert_int_equal(errors_total(sc), 1);
    assert_int_equal(sc->st->c.bounced, 0);
    assert_null(first_entry(sc));
    assert_int_equal(sc->st->c.sent, 0);
    script_free(sc);
}

/* The end-of-data refusal is the ledger's: the message is rejected, not lost. */
static void a_refused_message(void **state)
{
    struct script *sc = SCRIPT_NEW(&smtp_ops, SMTP_ARGS("off"));
    script_talk(sc, UP_TO_DATA, "S: 354 go ahead", NULL);
    take_body(sc);
    script_talk(sc, "S: 554 rejected: spam", "C: QUIT", NULL);
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
    struct script *sc = SCRIPT_NEW(&smtp_ops, SMTP_ARGS("off"));
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO", "S: 250 test", "C: MAIL FROM:", "S: 421 shutting down", NULL);
    script_run(sc, 300);                         /* the backoff after one failure: 100 ms */
    assert_int_equal(script_errors(sc, "smtp_mail_421"), 1);
    assert_int_equal(sc->dials, 2);
    script_talk(sc, "S: 220 back", "C: EHLO", NULL);
    script_free(sc);
}

/* A reply sent before it was asked for answers nothing: the session does not take
 * it for the next command's (issue 13) and gives up the connection. */
static void a_reply_nobody_asked_for(void **state)
{
    struct script *sc = SCRIPT_NEW(&smtp_ops, SMTP_ARGS("off"));
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO", "S: 250 test", "S: 250 ok", NULL);  /* 250 ok: MAIL's? */
    script_run(sc, 20);
    assert_int_equal(script_errors(sc, "smtp_mail_protocol"), 1);
    assert_int_equal(strncmp(sc->st->ex[0].text[0], "sent unasked: 250 ok", 20), 0);
    assert_null(first_entry(sc));
    script_free(sc);
}

/* A server that hangs up after the greeting is a connection error of the EHLO. */
static void a_server_that_hangs_up(void **state)
{
    struct script *sc = SCRIPT_NEW(&smtp_ops, SMTP_ARGS("off"));
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO", NULL);
    script_hang_up(sc);
    script_run(sc, 20);
    assert_int_equal(script_errors(sc, "smtp_ehlo_closed"), 1);
    script_free(sc);
}

/* AUTH LOGIN answers each challenge with the next credential in base64, then the
 * transaction starts; the exchange is timed as a whole. */
/* Every recipient of a transaction the server accepted carries the queue id its
 * end-of-data reply gave: the ledger's trail in the server's logs starts from it. */
static void every_recipient_gets_the_queue_id(void **state)
{
    struct script *sc = SCRIPT_NEW(&smtp_ops, SMTP_ARGS("off"), "--set", "smtp.rcpts=3");
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO", "S: 250 test", "C: MAIL FROM:", "S: 250 ok", "C: RCPT TO:",
                "S: 250 ok", "C: RCPT TO:", "S: 250 ok", "C: RCPT TO:", "S: 250 ok", "C: DATA", "S: 354 go ahead",
                NULL);
    assert_true(take_body(sc));
    script_talk(sc, "S: 250 2.0.0 Ok: queued as 4XyZ2", "C: QUIT", "S: 221 bye", NULL);
    for (unsigned i = 0; i < 3; i++) {
        assert_true(atomic_load(&ledger_get(&sc->run->ledger, ledger_seq(0, i))->state) & LS_ACCEPTED);
        assert_string_equal(ledger_qid(&sc->run->ledger, ledger_seq(0, i)), "4XyZ2");
    }
    assert_int_equal(sc->st->c.sent, 3);
    script_free(sc);
}

/* The deferred message's next back-off (smtp.retry): its due time less now. */
static uint64_t next_backoff(struct script *sc, struct retry_item *it)
{
    assert_int_equal(sc->env.retry.h.n, 1);
    assert_true(retryq_pop_due(&sc->env.retry, UINT64_MAX, it));
    uint64_t now = mono_ns();
    return it->due > now ? it->due - now : 0;
}

/* A message deferred again waits twice as long each time (smtp.retry_min doubled
 * per try, as Postfix's queue does): 60 s after the first 451, 120 s after the
 * second. The item is made due at once in between (smtp.c reads the monotonic
 * clock, which the test cannot move). */
static void retry_backoff_doubles_per_try(void **state)
{
    struct script *sc = SCRIPT_NEW(&smtp_ops, SMTP_ARGS("off"), "--retry", "yes", "--set", "smtp.retry_min=60s",
                                   "--set", "smtp.retry_max=1h");
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO", "S: 250 test", "C: MAIL FROM:", "S: 250 ok", "C: RCPT TO:",
                "S: 451 4.7.1 try again later", "C: RSET", "S: 250 ok", "C: QUIT", "S: 221 bye", NULL);
    script_run(sc, 10);
    struct retry_item it;
    uint64_t b1 = next_backoff(sc, &it);
    assert_int_equal(it.tries, 1);
    assert_true(b1 > 50 * NS_PER_S && b1 <= 60 * NS_PER_S);   /* 10 s for a loaded machine */
    unsigned user = it.users[0];
    it.due = 0;                                  /* due now: the back-off is what was measured */
    assert_int_equal(retryq_push(&sc->env.retry, &it), 0);
    unsigned dials = sc->dials;
    for (int i = 0; i < 600 && sc->dials == dials; i++)
        script_run(sc, 1000);
    assert_true(sc->dials > dials);
    char line[2048];
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO", "S: 250 test", "C: MAIL FROM:", "S: 250 ok", NULL);
    script_line(sc, line, sizeof line);
    unsigned again;
    assert_int_equal(sscanf(line, "RCPT TO:<user%u@", &again), 1);
    assert_int_equal(again, user);               /* the same recipient, tried again */
    script_talk(sc, "S: 451 4.7.1 try again later", "C: RSET", "S: 250 ok", "C: QUIT", "S: 221 bye", NULL);
    script_run(sc, 10);
    uint64_t b2 = next_backoff(sc, &it);
    assert_int_equal(it.tries, 2);
    assert_true(b2 > 110 * NS_PER_S && b2 <= 120 * NS_PER_S);
    assert_int_equal(sc->st->c.deferrals, 2);
    script_free(sc);
}

static void auth_login(void **state)
{
    struct script *sc = SCRIPT_NEW(&smtp_ops, "--smtp", "127.0.0.1:25", "--readers", "0", "--msgs-per-conn", "1",
                                   "--set", "users.count=1", "--set", "users.password=secret%d", "--smtp-auth", "login");
    char user[64], pass[64], c_user[80], c_pass[80];
    sasl_b64("user0000@test.local", 19, user);
    sasl_b64("secret0", 7, pass);
    snprintf(c_user, sizeof c_user, "C: %s", user);
    snprintf(c_pass, sizeof c_pass, "C: %s", pass);
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO", "S: 250-test", "S: 250 AUTH PLAIN LOGIN", "C: AUTH LOGIN",
                "S: 334 VXNlcm5hbWU6", c_user, "S: 334 UGFzc3dvcmQ6", c_pass, "S: 235 welcome", "C: MAIL FROM:", NULL);
    assert_int_equal(sc->st->total[LAT_SMTP_AUTH].count, 1);
    assert_int_equal(sc->st->nerr, 0);
    script_free(sc);
}

/* A refused AUTH turns the session away: counted, QUIT, and no mail. */
static void auth_refused(void **state)
{
    struct script *sc = SCRIPT_NEW(&smtp_ops, "--smtp", "127.0.0.1:25", "--readers", "0", "--set", "users.count=1",
                                   "--set", "users.password=secret", "--smtp-auth", "plain");
    script_talk(sc, "S: 220 test ESMTP", "C: EHLO", "S: 250-test", "S: 250 AUTH PLAIN", "C: AUTH PLAIN AHVzZXIw",
                "S: 535 5.7.8 authentication failed", "C: QUIT", NULL);
    assert_int_equal(script_errors(sc, "smtp_auth_535"), 1);
    assert_null(first_entry(sc));
    script_free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_message_in_lockstep),   cmocka_unit_test(a_pipelined_message),
        cmocka_unit_test(a_refused_recipient),
        cmocka_unit_test(every_recipient_gets_the_queue_id),
        cmocka_unit_test(retry_backoff_doubles_per_try),
        cmocka_unit_test(a_refused_message),
        cmocka_unit_test(a_421_mid_transaction),   cmocka_unit_test(a_reply_nobody_asked_for),
        cmocka_unit_test(a_server_that_hangs_up),  cmocka_unit_test(auth_login),
        cmocka_unit_test(auth_refused),
        cmocka_unit_test(one_of_three_refused_in_lockstep),
        cmocka_unit_test(one_of_three_refused_pipelined),
        cmocka_unit_test(a_refused_mail_and_its_echoes),
        cmocka_unit_test(think_time_in_lockstep),
        cmocka_unit_test(think_time_pipelined),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
