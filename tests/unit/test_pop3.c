/* test_pop3: the POP3 client state machine (engine/pop3.c) against scripted server
 * replies over an in-memory connection (session_script.h): a visit that reads one
 * of our messages, and the ledger's view of it (read only once the QUIT commits the
 * DELE); a corrupted copy; mail that is not ours; a refused login; a refused
 * greeting; the back-off from a mailbox owed mail that holds none of it yet
 * (pop3.empty_backoff); a copy delivered again into a mailbox that owes nothing,
 * read by the sweep's full pass; a mail client's checks on their schedule however
 * slow the server (pop3.poll_interval); a leave-on-server client's delete at its
 * keep_polls-th check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/pop3.h"
#include "session_script.h"

/* One user, so the session's pick is known. */
#define POP3_ARGS "--pop3", "127.0.0.1:110", "--senders", "0", "--set", "users.count=1"

/* One of our messages for user 0, accepted, as the server would hand it out
 * (dot-stuffed, with its final dot): into out, NUL-terminated (msg_write() writes
 * none, and visit() takes its strlen()), its length returned. */
static size_t our_message_sized(struct script *sc, char *out, size_t n, size_t *body_len, size_t size)
{
    struct run *r = sc->run;
    uint8_t digest[MSG_DIGEST_LEN];
    struct msg_params p = {
        .run_id = r->run_id, .from = "mailsoak@test.local", .to = r->users.v[0].addr,
        .body_size = size, .body_seed = 7, .nrcpt = 1,
    };
    size_t blen = msg_body(&sc->gen, &p, digest);
    uint64_t d8;
    memcpy(&d8, digest, sizeof d8);
    uint64_t idx = ledger_add(&r->ledger, 0, 0, (uint32_t)blen, d8, 0);
    p.seq = ledger_seq(0, idx);
    /* accepted as the run began: a read within the test's first millisecond (a fast,
     * warm machine) still comes after it and has a delivery time */
    ledger_accept(&r->ledger, ledger_get(&r->ledger, p.seq), 0);
    assert_true(msg_wire_max(&sc->gen, &p, blen) < n);
    *body_len = blen;
    size_t len = msg_write(&sc->gen, &p, blen, digest, out);
    out[len] = 0;
    return len;
}

static size_t our_message(struct script *sc, char *out, size_t n, size_t *body_len)
{
    return our_message_sized(sc, out, n, body_len, 300);
}

static uint32_t entry_state(struct script *sc)
{
    return atomic_load(&ledger_get(&sc->run->ledger, ledger_seq(0, 0))->state);
}

/* Greeting, USER/PASS, STAT and LIST of one message; RETR of text. */
static void visit(struct script *sc, const char *retr_reply)
{
    char stat[64];
    snprintf(stat, sizeof stat, "+OK 1 %zu\r\n", strlen(retr_reply));
    script_talk(sc, "S: +OK POP3 ready", "C: USER user0000@test.local", "S: +OK", "C: PASS ", "S: +OK logged in",
                "C: STAT", NULL);
    script_say(sc, stat);
    script_talk(sc, "C: LIST", "S: +OK", "S: 1 300", "S: .", "C: RETR 1", "S: +OK", NULL);
    script_say(sc, retr_reply);
}

/* A session that retrieved our message, deleted it and sent QUIT, waiting for the
 * server's answer to it: what happens next decides whether the message was read. */
static struct script *deleted_then_quit(void)
{
    struct script *sc = SCRIPT_NEW(&pop3_ops, POP3_ARGS);
    static char msg[8192];
    size_t body;
    our_message(sc, msg, sizeof msg, &body);
    visit(sc, msg);
    script_talk(sc, "C: DELE 1", "S: +OK deleted", "C: QUIT", NULL);
    return sc;
}

static void reads_our_message(void **state)
{
    struct script *sc = deleted_then_quit();
    /* Deleted only once the QUIT is answered (RFC 1939 6): not read yet. */
    assert_false(entry_state(sc) & LS_READS);
    assert_int_equal(sc->st->c.read, 0);
    script_talk(sc, "S: +OK bye", NULL);
    script_run(sc, 20);
    uint32_t st = entry_state(sc);
    assert_int_equal(st & LS_READS, 1);
    assert_false(st & LS_CORRUPT);
    assert_int_equal(sc->st->c.read, 1);
    assert_int_equal(sc->st->c.pop3_sessions, 1);
    assert_int_equal(sc->st->total[LAT_DELIVERY].count, 1);
    assert_int_equal(atomic_load(&sc->run->ledger.owed_total), 0);
    assert_int_equal(sc->st->nerr, 0);
    script_free(sc);
}

/* A server that hangs up after the DELE: nothing was committed, nothing is read. */
static void a_hang_up_before_quit_reads_nothing(void **state)
{
    struct script *sc = deleted_then_quit();
    script_hang_up(sc);
    script_run(sc, 20);
    assert_false(entry_state(sc) & LS_READS);
    assert_true(entry_state(sc) & LS_SEEN);
    assert_int_equal(sc->st->c.read, 0);
    assert_int_equal(script_errors(sc, "pop3_quit_closed"), 1);
    script_free(sc);
}

/* One byte of the body changed on the way: the entry is corrupt, with an example
 * saying which message and what differed. */
static void a_corrupted_copy(void **state)
{
    struct script *sc = SCRIPT_NEW(&pop3_ops, POP3_ARGS);
    static char msg[8192];
    size_t body, len = our_message(sc, msg, sizeof msg, &body);
    msg[len - 10] = msg[len - 10] == 'x' ? 'y' : 'x';     /* in the body's last line */
    visit(sc, msg);
    script_talk(sc, "C: DELE 1", "S: +OK", "C: QUIT", "S: +OK", NULL);
    script_run(sc, 20);
    assert_true(entry_state(sc) & LS_CORRUPT);
    assert_int_equal(sc->st->corrupt.n, 1);
    assert_non_null(strstr(sc->st->corrupt.text[0], "body digest differs"));
    script_free(sc);
}

/* An empty body served as one empty line (Dovecot's mbox does): a known harmless
 * transformation, counted apart and delivered; run.strict_bodies counts it corrupt. */
static void an_empty_body_served_as_one_empty_line(void **state)
{
    for (int strict = 0; strict < 2; strict++) {
        struct script *sc = strict ? SCRIPT_NEW(&pop3_ops, POP3_ARGS, "--set", "run.strict_bodies=yes")
                                   : SCRIPT_NEW(&pop3_ops, POP3_ARGS);
        static char msg[8192];
        size_t body, len = our_message_sized(sc, msg, sizeof msg - 3, &body, 0);
        assert_int_equal(body, 0);
        assert_string_equal(msg + len - 3, ".\r\n");
        memcpy(msg + len - 3, "\r\n.\r\n", 6);
        visit(sc, msg);
        script_talk(sc, "C: DELE 1", "S: +OK", "C: QUIT", "S: +OK", NULL);
        script_run(sc, 20);
        assert_int_equal(sc->st->c.empty_body_as_line, 1);
        if (strict) {
            assert_true(entry_state(sc) & LS_CORRUPT);
            assert_int_equal(sc->st->corrupt.n, 1);
            assert_non_null(strstr(sc->st->corrupt.text[0], "empty body served as one empty line"));
        } else {
            assert_false(entry_state(sc) & LS_CORRUPT);
            assert_int_equal(entry_state(sc) & LS_READS, 1);
            assert_int_equal(sc->st->corrupt.n, 0);
        }
        script_free(sc);
    }
}

/* Mail that is not ours is left in place, its UIDL learnt, counted once. */
static void mail_that_is_not_ours(void **state)
{
    struct script *sc = SCRIPT_NEW(&pop3_ops, POP3_ARGS);
    visit(sc, "From: someone@example.org\r\nSubject: hello\r\n\r\nnot a soak message\r\n.\r\n");
    /* no DELE: delete_foreign is off */
    script_talk(sc, "C: UIDL 1", "S: +OK 1 uid-abc", "C: QUIT", "S: +OK", NULL);
    script_run(sc, 20);
    assert_int_equal(sc->st->c.foreign, 1);
    assert_int_equal(sc->st->c.read, 0);
    assert_true(foreign_any(&sc->run->foreign, 0));
    script_free(sc);
}

/* A refused login is counted at its stage and the session leaves without reading. */
static void a_refused_login(void **state)
{
    struct script *sc = SCRIPT_NEW(&pop3_ops, POP3_ARGS);
    script_talk(sc, "S: +OK POP3 ready", "C: USER ", "S: +OK", "C: PASS ", "S: -ERR [AUTH] authentication failed",
                "C: QUIT", "S: +OK", NULL);
    script_run(sc, 20);
    uint64_t counted = 0;
    for (unsigned i = 0; i < sc->st->nerr; i++)
        if (!strncmp(sc->st->err[i].name, "pop3_pass_", 10))
            counted += sc->st->err[i].count;
    assert_int_equal(counted, 1);
    assert_int_equal(sc->st->c.read, 0);
    script_free(sc);
}

/* A greeting of -ERR (a server turning the connection away: mailsoak-server's
 * "-ERR [SYS/TEMP] Too many connections") is one error, and the session closes
 * without a QUIT: the server closes after such a greeting. Before, it sent QUIT
 * into the closing connection and counted pop3_quit_closed as well, two errors
 * for one refusal. */
static void a_refused_greeting(void **state)
{
    struct script *sc = SCRIPT_NEW(&pop3_ops, POP3_ARGS);
    script_say(sc, "-ERR [SYS/TEMP] Too many connections, try again later\r\n");
    script_quiet(sc, 5);
    script_hang_up(sc);
    script_run(sc, 5);
    uint64_t total = 0;
    for (unsigned i = 0; i < sc->st->nerr; i++)
        total += sc->st->err[i].count;
    assert_int_equal(script_errors(sc, "pop3_banner_sys_temp"), 1);
    assert_int_equal(total, 1);
    script_free(sc);
}

/* The login the session makes next, and how long after the last QUIT it came. */
static uint64_t next_login(struct script *sc, int within_ms)
{
    uint64_t dials = sc->dials, ms = script_run_until_line(sc, within_ms);
    assert_int_equal(sc->dials, dials + 1);
    script_talk(sc, "S: +OK POP3 ready", "C: USER ", "S: +OK", "C: PASS ", "S: +OK", "C: STAT", NULL);
    return ms;
}

/* An empty mailbox that is owed mail (the server still queues it) is not logged
 * in to again before its back-off: 50 ms, doubled per empty visit up to
 * pop3.empty_backoff; a visit that retrieves the mail ends the back-off. Without
 * it the reader logged in again at once, as fast as the server answered. */
static void an_owed_empty_mailbox_is_left_a_while(void **state)
{
    struct script *sc = SCRIPT_NEW(&pop3_ops, POP3_ARGS, "--set", "pop3.visit=owed", "--set",
                                   "pop3.empty_backoff=300ms");
    /* nothing owed: no visit */
    script_quiet(sc, 500);
    assert_int_equal(sc->dials, 0);
    static char msg[8192];
    size_t body;
    our_message(sc, msg, sizeof msg, &body);
    next_login(sc, 200);
    const uint64_t want[] = { 50, 100, 200, 300, 300 };
    for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++) {
        script_talk(sc, "S: +OK 0 0", "C: QUIT", "S: +OK", NULL);
        uint64_t ms = next_login(sc, 1000);
        if (ms < want[i] || ms > want[i] + 1)
            fail_msg("empty visit %u: the next login came %llu ms after it, want %llu", i + 1,
                     (unsigned long long)ms, (unsigned long long)want[i]);
    }
    /* the mail is there now: read, and the back-off ends */
    char stat[64];
    snprintf(stat, sizeof stat, "+OK 1 %zu\r\n", strlen(msg));
    script_say(sc, stat);
    script_talk(sc, "C: LIST", "S: +OK", "S: 1 300", "S: .", "C: RETR 1", "S: +OK", NULL);
    script_say(sc, msg);
    script_talk(sc, "C: DELE 1", "S: +OK", "C: QUIT", "S: +OK", NULL);
    script_run(sc, 1);
    assert_int_equal(sc->st->c.read, 1);
    assert_int_equal(atomic_load(&sc->run->empty_hold[0]), 0);
    /* owed again: visited at the next look (100 ms), not after a back-off */
    our_message(sc, msg, sizeof msg, &body);
    assert_true(next_login(sc, 1000) <= 100);
    script_talk(sc, "S: +OK 0 0", "C: QUIT", "S: +OK", NULL);
    assert_int_equal(next_login(sc, 1000), 50);
    /* the sweep's passes are the proof of loss and keep their own rules: its
     * visit comes at once, back-off or not */
    script_talk(sc, "S: +OK 0 0", "C: QUIT", "S: +OK", NULL);
    script_run(sc, 1);
    atomic_store(&sc->run->phase, PH_SWEEP);
    session_set_phase(&sc->set, PH_SWEEP);
    assert_int_equal(next_login(sc, 1000), 0);
    script_free(sc);
}

/* A copy the server delivers again after the first was read (Postfix after a lost
 * final reply) lands in a mailbox that owes nothing. A sweep pass over the owing
 * mailboxes never opens it; a full pass opens every mailbox sent mail, and the copy
 * is read a second time: duplicated. */
static void a_full_sweep_pass_reads_a_copy_where_nothing_is_owed(void **state)
{
    struct script *sc = SCRIPT_NEW(&pop3_ops, POP3_ARGS);
    struct run *r = sc->run;
    static char msg[8192];
    size_t body;
    our_message(sc, msg, sizeof msg, &body);
    visit(sc, msg);
    /* read in the drain, which then visits only owing mailboxes */
    atomic_store(&r->phase, PH_DRAIN);
    script_talk(sc, "C: DELE 1", "S: +OK", "C: QUIT", "S: +OK", NULL);
    script_quiet(sc, 2000);
    assert_int_equal(entry_state(sc) & LS_READS, 1);
    assert_int_equal(atomic_load(&r->ledger.owed_total), 0);
    assert_int_equal(sc->dials, 1);
    /* the sweep's pass 1, over owing mailboxes: the one mailbox owes nothing */
    atomic_store(&r->sweep_pass, 1);
    atomic_store(&r->sweep_cursor, 0);
    atomic_store(&r->phase, PH_SWEEP);
    script_quiet(sc, 2000);
    assert_int_equal(sc->dials, 1);
    /* pass 2 is full: the mailbox was sent mail, so it is opened, and the copy there read */
    atomic_store(&r->sweep_full, 1);
    atomic_store(&r->sweep_pass, 2);
    atomic_store(&r->sweep_cursor, 0);
    script_run(sc, 1000);
    assert_int_equal(sc->dials, 2);
    visit(sc, msg);
    script_talk(sc, "C: DELE 1", "S: +OK", "C: QUIT", "S: +OK", NULL);
    script_run(sc, 20);
    assert_int_equal(entry_state(sc) & LS_READS, 2);
    enum pending_reason why;
    assert_int_equal(ledger_entry_outcome(&r->ledger, ledger_get(&r->ledger, ledger_seq(0, 0)), &why), OUTCOME_DUPLICATED);
    assert_int_equal(atomic_load(&r->ledger.visit_pass[0]), 2);   /* a complete visit of pass 2 */
    /* and the pass is over: the session opens nothing more */
    script_quiet(sc, 2000);
    assert_int_equal(sc->dials, 2);
    script_free(sc);
}

/* A mail client's check (pop3.poll_interval) due now, pushed as the worker would. */
static void poll_due_now(struct script *sc, uint64_t due)
{
    if (!sc->env.polls.elem)
        dueheap_init(&sc->env.polls, sizeof(struct poll_item));
    struct poll_item it = { due, 0 };
    dueheap_push(&sc->env.polls, &it);
}

/* The next check of the one mail client, taken from the worker's schedule. */
static struct poll_item next_check(struct script *sc)
{
    struct poll_item it;
    assert_int_equal(sc->env.polls.n, 1);
    assert_true(dueheap_pop_due(&sc->env.polls, UINT64_MAX, &it));
    return it;
}

/* A mail client checks every poll_interval from when its check was due, not from
 * when the last check ended: a server that takes 3 s over a visit (slow STAT, slow
 * QUIT) does not push the next check later, or the logins would drift below the
 * rate asked for. */
static void poll_checks_do_not_drift_with_a_slow_server(void **state)
{
    struct script *sc = SCRIPT_NEW(&pop3_ops, POP3_ARGS, "--poll-interval", "10s", "--set", "pop3.poll_jitter=0");
    uint64_t due = sc->now;
    poll_due_now(sc, due);
    script_run(sc, 200);
    assert_int_equal(sc->dials, 1);
    script_talk(sc, "S: +OK POP3 ready", "C: USER user0000@test.local", "S: +OK", "C: PASS ", "S: +OK logged in",
                "C: STAT", NULL);
    script_run(sc, 2000);                        /* STAT answered 2 s late */
    script_talk(sc, "S: +OK 0 0", "C: QUIT", NULL);
    script_run(sc, 1000);                        /* and the QUIT 1 s late */
    script_talk(sc, "S: +OK bye", NULL);
    script_run(sc, 20);
    struct poll_item it = next_check(sc);
    assert_int_equal(it.user, 0);
    assert_true(it.due == due + 10 * NS_PER_S);
    assert_int_equal(sc->st->c.polls, 1);
    script_free(sc);
}

/* The next check of a leave-on-server client whose mailbox holds one message (UIDL
 * "1 a1"), within 12 s of the loop's clock; retr: the message when the client
 * retrieves it. What the client sent after the listing, up to its QUIT, in after. */
static void leave_check(struct script *sc, const char *retr, char *after, size_t n)
{
    unsigned dials = sc->dials;
    for (int i = 0; i < 120 && sc->dials == dials; i++)
        script_run(sc, 100);
    assert_int_equal(sc->dials, dials + 1);
    script_talk(sc, "S: +OK POP3 ready", "C: USER user0000@test.local", "S: +OK", "C: PASS ", "S: +OK logged in",
                "C: STAT", NULL);
    script_say(sc, "+OK 1 300\r\n");
    script_talk(sc, "C: UIDL", "S: +OK", "S: 1 a1", "S: .", NULL);
    char line[2048];
    after[0] = 0;
    for (;;) {
        script_line(sc, line, sizeof line);
        snprintf(after + strlen(after), n - strlen(after), "%s%s", after[0] ? ", " : "", line);
        if (!strcmp(line, "QUIT"))
            break;
        if (!strncmp(line, "RETR", 4)) {
            script_talk(sc, "S: +OK", NULL);
            script_say(sc, retr);
        } else
            script_talk(sc, "S: +OK", NULL);
    }
    script_talk(sc, "S: +OK bye", NULL);
    script_run(sc, 20);
}

/* A leave-on-server client (pop3.leave, keep_polls = 2) retrieves a new message once,
 * keeps it, and deletes it at the second check that lists it again: not before, not
 * after. The ledger counts it read once. */
static void leave_deletes_at_the_keep_polls_check(void **state)
{
    struct script *sc = SCRIPT_NEW(&pop3_ops, POP3_ARGS, "--poll-interval", "10s", "--set", "pop3.poll_jitter=0",
                                   "--set", "pop3.leave=yes", "--set", "pop3.exclusive=yes", "--set",
                                   "pop3.keep_polls=2");
    static char msg[8192];
    size_t body;
    our_message(sc, msg, sizeof msg, &body);
    poll_due_now(sc, sc->now);
    char after[512];
    leave_check(sc, msg, after, sizeof after);
    assert_string_equal(after, "RETR 1, QUIT");  /* new: retrieved, kept */
    assert_int_equal(entry_state(sc) & LS_READS, 1);
    leave_check(sc, msg, after, sizeof after);
    assert_string_equal(after, "QUIT");          /* listed again once: kept */
    leave_check(sc, msg, after, sizeof after);
    assert_string_equal(after, "DELE 1, QUIT");  /* listed again twice: deleted */
    assert_int_equal(entry_state(sc) & LS_READS, 1);
    assert_int_equal(sc->st->c.read, 1);
    script_free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_our_message), cmocka_unit_test(a_hang_up_before_quit_reads_nothing),
        cmocka_unit_test(a_corrupted_copy), cmocka_unit_test(an_empty_body_served_as_one_empty_line),  cmocka_unit_test(mail_that_is_not_ours),
        cmocka_unit_test(a_refused_login),   cmocka_unit_test(an_owed_empty_mailbox_is_left_a_while),
        cmocka_unit_test(a_refused_greeting),
        cmocka_unit_test(a_full_sweep_pass_reads_a_copy_where_nothing_is_owed),
        cmocka_unit_test(poll_checks_do_not_drift_with_a_slow_server),
        cmocka_unit_test(leave_deletes_at_the_keep_polls_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
