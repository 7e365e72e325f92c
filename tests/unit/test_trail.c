/* Unit tests of the trails (verdict/trail.c) on real log lines: Postfix 3.7.11 and
 * Dovecot 2.3.19 of the testbed (tests/fixtures/logs/trail), where messages were
 * force-expired, deleted and bounced by postsuper and a header_checks FILTER, and
 * delivered twice after an LMTP end of data that timed out or lost its connection
 * (tests/integration/lmtp_stall.py). Each trail's lines and cause, exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "verdict/trail.h"

static void feed_file(struct trails *t, const char *name)
{
    char path[4096], line[70000];
    const char *top = getenv("TOP");
    snprintf(path, sizeof path, "%s/tests/fixtures/logs/trail/%s", top ? top : ".", name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        trails_line(t, line, strlen(line));
    }
    fclose(f);
}

static const struct trail *fed(struct trails *t)
{
    feed_file(t, "postfix.log");
    feed_file(t, "dovecot.log");
    trails_done(t);
    return NULL;
}

/* How many of a trail's kept lines contain s. */
static int lines_with(const struct trail *tr, const char *s)
{
    const char *v[TRAIL_HEAD + TRAIL_TAIL];
    uint64_t skipped;
    size_t n = trail_lines(tr, v, TRAIL_HEAD + TRAIL_TAIL, &skipped);
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += strstr(v[i], s) != NULL;
    return k;
}

static void causes_of_real_losses(void **state)
{
    (void)state;
    struct trails *t = trails_new();
    trails_want(t, 1, OUTCOME_LOST, 0, "AF612A72382", "<hc.2@mailsoak.invalid>");      /* postsuper -d */
    trails_want(t, 2, OUTCOME_LOST, 0, "95BCAA7236D", "<hc.1@mailsoak.invalid>");      /* postsuper -e */
    trails_want(t, 3, OUTCOME_LOST, 0, "7B23AA7213C", "hc.3@mailsoak.invalid");        /* FILTER error: */
    trails_want(t, 4, OUTCOME_LOST, 0, "914F2A73FB1", "<fx.1@mailsoak.invalid>");      /* delivered */
    trails_want(t, 5, OUTCOME_LOST, 0, "", "<nowhere.1@mailsoak.invalid>");            /* no line names it */
    /* the bounce notice: deferred 19 times, then refused by Dovecot (550 5.1.1) */
    trails_want(t, 6, OUTCOME_PENDING, 0, "C615CA721C6", "<none@mailsoak.invalid>");
    fed(t);
    const struct trail *tr = trails_find(t, 1);
    assert_int_equal(tr->cause, TC_REMOVED);
    assert_non_null(strstr(tr->cause_line, "postsuper[26530]: AF612A72382: removed"));
    assert_string_equal(tr->left, "deleted");
    tr = trails_find(t, 2);
    assert_int_equal(tr->cause, TC_EXPIRED);
    assert_non_null(strstr(tr->cause_line, "95BCAA7236D: from=<mailsoak@test.local>, status=force-expired"));
    assert_string_equal(tr->left, "left");
    tr = trails_find(t, 3);
    assert_int_equal(tr->cause, TC_BOUNCED);
    assert_non_null(strstr(tr->cause_line, "status=bounced (forced bounce by the test)"));
    /* the bounce notice has its own queue id: its lines are not this message's */
    assert_int_equal(lines_with(tr, "C615CA721C6: to="), 0);
    assert_int_equal(lines_with(tr, "sender non-delivery notification: C615CA721C6"), 1);
    tr = trails_find(t, 4);
    assert_int_equal(tr->cause, TC_DELIVERED_GONE);
    assert_int_equal(tr->nlines, 6);  /* every Postfix line of 914F2A73FB1 */
    assert_int_equal(trails_find(t, 5)->cause, TC_NEVER_LOGGED);
    assert_int_equal(trails_find(t, 5)->nlines, 0);
    tr = trails_find(t, 6);
    assert_int_equal(tr->cause, TC_BOUNCED);
    assert_non_null(strstr(tr->cause_line, "status=bounced (host localhost[/tmp/fx/tb/run/dovecot/lmtp] said: 550 5"));
    assert_int_equal(tr->deferred, 19);
    assert_int_equal(tr->nlines, 43);     /* kept: the first 6 and the last 10 */
    assert_string_equal(tr->last_queue, "active");
    assert_string_equal(tr->left, "left");
    trails_free(t);
}

static void causes_of_real_duplicates(void **state)
{
    (void)state;
    struct trails *t = trails_new();
    /* the final reply swallowed, QUIT held back: Postfix timed out */
    trails_want(t, 1, OUTCOME_DUPLICATED, 0, "18AC6A72818", "<probe.4@mailsoak.invalid>");
    /* the final reply swallowed, Dovecot closed after Postfix's pipelined QUIT */
    trails_want(t, 2, OUTCOME_DUPLICATED, 0, "7E21DA7210E", "<5a38e71a.0@mailsoak.invalid>");
    /* a copy made in the store: the server logged one delivery */
    trails_want(t, 3, OUTCOME_DUPLICATED, 0, "914F2A73FB1", "<fx.1@mailsoak.invalid>");
    /* Dovecot's session id as the queue id (LMTP straight to Dovecot): its own
     * transaction only, not the session's later ones (S:T2 ... S:T5) */
    trails_want(t, 4, OUTCOME_DUPLICATED, 0, "gKSVDg9AD2vQAQAAg+zDdQ", "<5a38e71a.10000000003@mailsoak.invalid>");
    fed(t);
    const struct trail *tr = trails_find(t, 1);
    assert_int_equal(tr->cause, TC_DUP_TIMEOUT);
    assert_non_null(strstr(tr->cause_line, "18AC6A72818: to=<user0001@test.local>"));
    assert_non_null(strstr(tr->cause_line, "timed out while sending end of data -- message may be sent more than once"));
    tr = trails_find(t, 2);
    assert_int_equal(tr->cause, TC_DUP_CONN);
    assert_non_null(strstr(tr->cause_line, "lost connection with"));
    /* both of Dovecot's deliveries, one found by the Message-ID, one also by the
     * session Postfix's status=sent line named (gKSV...:T5) */
    assert_int_equal(lines_with(tr, "saved mail to INBOX"), 2);
    assert_int_equal(tr->stored, 2);
    assert_int_equal(trails_find(t, 3)->cause, TC_DUP_STORE);
    tr = trails_find(t, 4);
    assert_int_equal(tr->nlines, 1);
    assert_int_equal(lines_with(tr, "<gKSVDg9AD2vQAQAAg+zDdQ>"), 1);
    trails_free(t);
}

/* No delivery logged and a crash in the run: lost in a crash, the crash as evidence. */
static void lost_in_a_crash(void **state)
{
    (void)state;
    struct trails *t = trails_new();
    trails_want(t, 1, OUTCOME_LOST, 0, "4XyZ1", "<c.1@mailsoak.invalid>");
    trails_crash(t, "process /usr/lib/postfix/sbin/lmtp pid 77 killed by signal 9");
    const char *l = "Dec 01 postfix/qmgr[1]: 4XyZ1: from=<a@b>, size=1, nrcpt=1 (queue active)";
    trails_line(t, l, strlen(l));
    trails_done(t);
    const struct trail *tr = trails_find(t, 1);
    assert_int_equal(tr->cause, TC_CRASH);
    assert_non_null(strstr(tr->cause_line, "killed by signal 9"));
    assert_string_equal(tr->last_queue, "active");
    trails_free(t);
}

/* A message retried many times keeps its first and last lines, counts the rest;
 * control bytes from a log are escaped; ids inside longer ids are not found. */
static void bounds_and_words(void **state)
{
    (void)state;
    struct trails *t = trails_new();
    trails_want(t, 1, OUTCOME_PENDING, 0, "ABCDE1", "<b.1@mailsoak.invalid>");
    trails_want(t, 2, OUTCOME_LOST, 0, "cbc447d8", "<o.1@mailsoak.invalid>");   /* OpenSMTPD's */
    char line[200];
    for (int i = 0; i < 30; i++) {
        int n = snprintf(line, sizeof line, "x: ABCDE1: try %d status=deferred (busy)\x1b[2J", i);
        trails_line(t, line, (size_t)n);
    }
    trails_line(t, "x: ABCDE12: status=sent", 23);        /* another id */
    trails_line(t, "x: XABCDE1: status=sent", 23);
    trails_line(t, "x: ABCDE1.5: status=sent", 24);
    trails_line(t, "smtpd: cbc447d83afc3c4a mda delivery evpid=cbc447d83afc3c4a result=PermFail", 75);
    trails_line(t, "smtpd: cbc447d8999 other", 24);
    /* a relay's line names the next hop's queue id: its lines are this message's too */
    trails_want(t, 3, OUTCOME_LOST, 0, "RELAY1", "<r.1@mailsoak.invalid>");
    const char *r1 = "postfix/smtp[9]: RELAY1: to=<a@b>, relay=mx[1.2.3.4]:25, dsn=2.0.0, "
                     "status=sent (250 2.0.0 Ok: queued as NEXT42)";
    const char *r2 = "postfix/lmtp[9]: NEXT42: to=<a@b>, status=bounced (550 5.1.1 no such user)";
    trails_line(t, r1, strlen(r1));
    trails_line(t, r2, strlen(r2));
    trails_done(t);
    const struct trail *tr = trails_find(t, 1);
    assert_int_equal(tr->nlines, 30);
    const char *v[TRAIL_HEAD + TRAIL_TAIL];
    uint64_t skipped;
    assert_int_equal(trail_lines(tr, v, TRAIL_HEAD + TRAIL_TAIL, &skipped), TRAIL_HEAD + TRAIL_TAIL);
    assert_int_equal(skipped, 30 - TRAIL_HEAD - TRAIL_TAIL);
    assert_non_null(strstr(v[0], "try 0 "));
    assert_non_null(strstr(v[TRAIL_HEAD - 1], "try 5 "));
    assert_non_null(strstr(v[TRAIL_HEAD], "try 20 "));
    assert_non_null(strstr(v[TRAIL_HEAD + TRAIL_TAIL - 1], "try 29 "));
    assert_null(strchr(v[0], '\x1b'));
    assert_non_null(strstr(v[0], "\\x1b[2J"));
    assert_int_equal(tr->sent, 0);
    assert_int_equal(tr->cause, TC_DEFERRED);
    tr = trails_find(t, 2);
    assert_int_equal(tr->nlines, 1);        /* its envelope's line, not the longer id */
    assert_int_equal(tr->cause, TC_BOUNCED);
    tr = trails_find(t, 3);
    assert_int_equal(tr->nlines, 2);
    assert_int_equal(tr->cause, TC_BOUNCED);  /* bounced at the next hop */
    trails_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(causes_of_real_losses), cmocka_unit_test(causes_of_real_duplicates),
        cmocka_unit_test(lost_in_a_crash), cmocka_unit_test(bounds_and_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
