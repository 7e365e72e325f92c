/* Unit tests of the one judgement (verdict/judge.c): the rule "the tester held the
 * load back" (more than 1 arrival in 1000 due late or never started) at its
 * bound, and the readers' rules the table prints by; a run's figures give the gates, the verdict and the exit status together,
 * the held-back arrivals reaching the verdict; a window without the ledger's
 * outcomes (a capacity step's) gives the gates alone and leaves the verdict be; the
 * run's status: a signal's, a ladder's failure's, else the gates'. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/exitcodes.h"
#include "verdict/judge.h"

struct fix {
    struct counters c;
    struct ledger_outcome lo;
    struct judge_figures f;
    struct gates g;
    struct gate_judgement j;
    struct run_verdict v;
};

/* 60 s at 300 msg/s, all of it read once; 18000 arrivals due. */
static struct fix *clean(void)
{
    static struct fix x;
    gate_judgement_free(&x.j);
    memset(&x, 0, sizeof x);
    x.c = (struct counters){ .sent = 18000, .read = 18000, .smtp_sessions = 6000, .pop3_sessions = 3000 };
    x.lo = (struct ledger_outcome){ .accepted = 18000, .delivered = 18000 };
    x.f = (struct judge_figures){
        .c = &x.c, .lo = &x.lo, .settled = -1, .senders = 20, .readers = 10, .elapsed_s = 70,
        .send = { .seconds = 60, .accepted = 18000, .read = 18000 }, .rate = 300, .sweep_timeout_s = 60,
        .settle_s = 10, .due = 18000,
    };
    x.g = (struct gates){ .integrity = 1, .settled = 1, .proven = 0.99, .errors = 1 };
    return &x;
}

static void held_back_is_more_than_one_in_a_thousand(void **st)
{
    (void)st;
    assert_false(judge_held_back(0, 0));
    assert_false(judge_held_back(0, 1000));
    assert_false(judge_held_back(1, 1000));       /* 1 in 1000: not yet */
    assert_true(judge_held_back(2, 1000));
    assert_true(judge_held_back(1, 999));
    assert_true(judge_held_back(1, 0));           /* held back with nothing due counted */
}

/* The readers' rules the table prints by: checks over a second late in more than 1
 * in 100; delivery bound by the readers when more waited unread than a round of
 * them takes and the server's queue, counted, held under a tenth of it. */
static void the_readers_rules(void **st)
{
    (void)st;
    assert_false(judge_readers_late(1, 100));
    assert_true(judge_readers_late(2, 100));
    assert_false(judge_readers_late(0, 0));
    assert_false(judge_readers_bound(100, -1, 10, 10));   /* a round takes all 100 */
    assert_true(judge_readers_bound(101, -1, 10, 10));    /* the queue not counted */
    assert_true(judge_readers_bound(101, 10, 10, 10));    /* 10 queued: under a tenth of 101 */
    assert_false(judge_readers_bound(100, 10, 5, 10));    /* exactly a tenth queued: the server's */
    assert_false(judge_readers_bound(1000, -1, 0, 10));   /* no readers */
}

static void a_run_gets_gates_verdict_and_status(void **st)
{
    (void)st;
    struct fix *x = clean();
    assert_int_equal(judge(&x->g, &x->f, &x->j, &x->v), MS_EXIT_OK);
    assert_int_equal(x->v.state, VERDICT_PROVEN);
    assert_false(x->v.tester_limited);
    assert_int_equal(x->j.failed, 0);
    assert_true(x->j.n > 0);
    x = clean();
    x->lo.delivered = 17990;
    x->lo.lost = 10;
    assert_int_equal(judge(&x->g, &x->f, &x->j, &x->v), MS_EXIT_GATE_INTEGRITY);
    assert_int_equal(x->v.state, VERDICT_FAILED);
    assert_true(x->j.integrity_failed);
}

static void held_back_arrivals_reach_the_verdict(void **st)
{
    (void)st;
    struct fix *x = clean();
    x->f.held = 19;                               /* 19 of 18000: over 1 in 1000 */
    judge(&x->g, &x->f, &x->j, &x->v);
    assert_true(x->v.tester_limited);
    assert_non_null(strstr(x->v.remedy, "the tester held back part of the offered load"));
    x = clean();
    x->f.held = 18;                               /* exactly 1 in 1000 */
    judge(&x->g, &x->f, &x->j, &x->v);
    assert_false(x->v.tester_limited);
    assert_string_equal(x->v.remedy, "");
}

static void a_window_without_the_ledger_gets_the_gates_alone(void **st)
{
    (void)st;
    struct fix *x = clean();
    x->f.lo = NULL;
    x->c.read = 0;                                /* read > 0 with readers: an integrity gate */
    memset(&x->v, 0x5a, sizeof x->v);
    struct run_verdict before = x->v;
    assert_int_equal(judge(&x->g, &x->f, &x->j, &x->v), MS_EXIT_GATE_INTEGRITY);
    assert_memory_equal(&x->v, &before, sizeof before);
    gate_judgement_free(&x->j);
    assert_int_equal(judge(&x->g, &x->f, &x->j, NULL), MS_EXIT_GATE_INTEGRITY);
    gate_judgement_free(&x->j);
}

/* The run's status beside its gates': a signal stops it with 128 + the signal
 * whatever the gates said, a ladder's failed rung is an integrity failure; the
 * gates' own status stays in the judgement for the file's "gates". */
static void the_runs_status_beside_the_gates(void **st)
{
    (void)st;
    struct fix *x = clean();
    x->f.signalled = 1;
    x->f.signal = 15;
    x->f.interrupted = 1;
    x->lo.delivered = 17990;
    x->lo.lost = 10;
    assert_int_equal(judge(&x->g, &x->f, &x->j, &x->v), MS_EXIT_SIGNAL + 15);
    assert_int_equal(x->j.exit_status, MS_EXIT_GATE_INTEGRITY);
    x = clean();
    x->f.ladder_failures = 1;
    assert_int_equal(judge(&x->g, &x->f, &x->j, &x->v), MS_EXIT_GATE_INTEGRITY);
    assert_int_equal(x->j.exit_status, MS_EXIT_OK);
    x = clean();
    x->f.interrupted = 1;                         /* a merged load of an interrupted shard: its gates decide */
    assert_int_equal(judge(&x->g, &x->f, &x->j, &x->v), x->j.exit_status);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(held_back_is_more_than_one_in_a_thousand),
        cmocka_unit_test(the_readers_rules),
        cmocka_unit_test(the_runs_status_beside_the_gates),
        cmocka_unit_test(a_run_gets_gates_verdict_and_status),
        cmocka_unit_test(held_back_arrivals_reach_the_verdict),
        cmocka_unit_test(a_window_without_the_ledger_gets_the_gates_alone),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
