/* Unit tests of the "kept up" judgement (verdict/keptup.c): a backlog that grows
 * past its bound is the server's (KEPTUP_BEHIND), whether or not the server's queue
 * was counted; a flat one, and one that wanders within its own noise, held; one
 * that grows while the readers left mail in the mailboxes, or were all busy, or
 * while the server's mailboxes hold the growth, is the tester's limit, never charged
 * to the server, unless the server kept the readers waiting; with the server's side
 * not counted, visits that mostly retrieved mail that waited for them are the
 * readers' limit, visits that mostly found it not there yet the server's; fewer than two samples
 * tell nothing; the halves' swing; the slope and the bound's arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "verdict/keptup.h"

static const struct keptup_rules rules = { .growth_share = 0.05 };

/* n samples every 10 s from t = 10, the backlog start + growth * t (+ wobble on
 * odd samples), accepted at rate msg/s, 480 reader visits of which 300 found the
 * owed mail not there yet. */
static struct keptup_input window(unsigned n, double start, double growth, double wobble, double rate)
{
    double t[64], u[64];
    for (unsigned i = 0; i < n; i++) {
        t[i] = 10.0 * (i + 1);
        u[i] = start + growth * t[i] + (i % 2 ? wobble : 0);
    }
    struct keptup_input in = { .accepted_rate = rate, .visits = 480, .empty_visits = 300 };
    keptup_backlog(t, u, n, &in.b);
    return in;
}

static enum keptup_outcome judge(const struct keptup_input *in, struct keptup_result *r)
{
    keptup_judge(&rules, in, r);
    return r->outcome;
}

static void slope_is_least_squares(void **st)
{
    (void)st;
    double t[] = { 0, 1, 2, 3 }, y[] = { 1, 3, 5, 7 };
    assert_float_equal(keptup_slope(t, y, 4), 2.0, 1e-12);
    assert_float_equal(keptup_slope(t, y, 1), 0.0, 0);
    double same[] = { 5, 5 };
    assert_float_equal(keptup_slope(same, y, 2), 0.0, 0);    /* one time: no slope */
    struct keptup_backlog b;
    double tt[] = { 0, 10, 20, 30, 40 }, u[] = { 0, 100, 200, 200, 200 };
    keptup_backlog(tt, u, 5, &b);
    assert_int_equal(b.n, 5);
    assert_float_equal(b.span_s, 40, 0);
    assert_float_equal(b.half[0], 10.0, 1e-12);    /* 0, 100, 200 over 0..20 */
    assert_float_equal(b.half[1], 0.0, 1e-12);     /* 200, 200, 200 over 20..40 */
    assert_float_equal(b.mean, 140, 1e-12);
}

/* The run: 85 msg/s offered to a server that delivers 60, the backlog
 * growing 21 msg/s from 218; no server queue counted. */
static void growing_backlog_is_behind(void **st)
{
    (void)st;
    struct keptup_input in = window(6, 218, 21, 0, 85);
    struct keptup_result r;
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
    assert_float_equal(r.value, 21, 1e-9);
    assert_float_equal(r.bound, 0.05 * 85, 1e-9);   /* the share, over the noise of a mean of ~800 */
    assert_string_equal(r.stat, KEPTUP_STAT);
    assert_non_null(strstr(r.why, "300 of 480 reader visits found none of the mail owed"));
    /* the queue counted and growing with it: the server's all the same */
    in.has_spool = 1;
    in.spool_slope = 20;
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
}

static void flat_backlog_holds(void **st)
{
    (void)st;
    struct keptup_input in = window(6, 150, 0, 0, 48);
    struct keptup_result r;
    assert_int_equal(judge(&in, &r), KEPTUP_YES);
    /* wandering by its noise: +-20 messages around 150 */
    in = window(6, 150, 0, 20, 48);
    assert_int_equal(judge(&in, &r), KEPTUP_YES);
    /* growth just under the bound holds, just over it does not */
    in = window(6, 0, 0.049 * 48, 0, 48);
    assert_int_equal(judge(&in, &r), KEPTUP_YES);
    in = window(6, 0, 0.06 * 48, 0, 48);
    assert_true(r.bound < 0.06 * 48);
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
}

/* A small backlog's noise: 3 sqrt(mean + 1) over the span, when it exceeds the share. */
static void noise_bound(void **st)
{
    (void)st;
    assert_float_equal(keptup_bound(&rules, 10, 99, 30), 1.0, 1e-12);   /* 3 * 10 / 30 over 0.5 */
    assert_float_equal(keptup_bound(&rules, 100, 99, 30), 5.0, 1e-12);  /* the share over 1.0 */
}

static void readers_limit_is_the_testers(void **st)
{
    (void)st;
    struct keptup_result r;
    /* readers left mail behind on 100 of 480 visits */
    struct keptup_input in = window(6, 218, 21, 0, 85);
    in.left_behind = 100;
    in.empty_visits = 0;
    assert_int_equal(judge(&in, &r), KEPTUP_TESTER);
    assert_non_null(strstr(r.why, "100 of 480 visits left mail"));
    /* 1 visit in 20 is not enough */
    in.left_behind = 24;
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
    /* every reader busy */
    in = window(6, 218, 21, 0, 85);
    in.readers_busy = 1;
    assert_int_equal(judge(&in, &r), KEPTUP_TESTER);
    /* the server's mailboxes hold the growth */
    in = window(6, 218, 21, 0, 85);
    in.has_store = 1;
    in.store_slope = 15;
    assert_int_equal(judge(&in, &r), KEPTUP_TESTER);
    assert_non_null(strstr(r.why, "mailboxes"));
    /* ... nor when the queue, counted, grew past the bound as well (the testbed
     * after a spike: mailboxes 7.66 msg/s, queue 5.98, the backlog 14.27, bound 3.85) */
    in.has_spool = 1;
    in.spool_slope = r.bound * 1.01;
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
    in.spool_slope = r.bound;                  /* at the bound: the mailboxes' */
    assert_int_equal(judge(&in, &r), KEPTUP_TESTER);
    in.has_spool = 0;
    /* ... not when it stays in the queue */
    in.store_slope = 1;
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
    /* a queue counted alone that holds under half of it: the mail is in the mailboxes */
    in = window(6, 218, 21, 0, 85);
    in.has_spool = 1;
    in.spool_slope = 2;
    assert_int_equal(judge(&in, &r), KEPTUP_TESTER);
    /* neither counted: over 9 in 10 of the visits that wanted mail retrieved mail
     * that waited for them (the testbed at 70 msg/s, its queue flat: 1 in 200) */
    in = window(6, 218, 21, 0, 85);
    in.full_visits = 400;
    in.empty_visits = 2;
    assert_int_equal(judge(&in, &r), KEPTUP_TESTER);
    assert_false(r.server_seen);
    assert_non_null(strstr(r.why, "400 of 480 visits retrieved mail that waited for them"));
    in.full_visits = 91;
    in.empty_visits = 10;
    assert_int_equal(judge(&in, &r), KEPTUP_TESTER);
    in.full_visits = 90;                       /* 9 in 10 exactly: not over */
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
    /* the testbed at 140 % of its capacity, its queue growing 105 msg/s: more
     * visits retrieved mail than found it not there, but 1100 found it not there */
    in.full_visits = 1588;
    in.empty_visits = 1100;
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
    in.full_visits = 23;
    in.empty_visits = 23;                      /* as many waited for the server */
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
    in.full_visits = 400;
    in.empty_visits = 2;
    in.has_spool = 1;                          /* a queue counted growing with it: the server's */
    in.spool_slope = 20;
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
    /* the server kept the readers waiting: its limit, not ours */
    in.spool_slope = 2;
    in.server_slows_readers = 1;
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
    in.server_slows_readers = 0;
    in.readers_ruled_out = 1;
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
}

static void too_few_samples_tell_nothing(void **st)
{
    (void)st;
    struct keptup_result r;
    struct keptup_input in = window(1, 628, 0, 0, 31);
    assert_int_equal(judge(&in, &r), KEPTUP_UNKNOWN);
    assert_non_null(strstr(r.why, "fewer than two samples"));
    in = window(0, 0, 0, 0, 31);
    assert_int_equal(judge(&in, &r), KEPTUP_UNKNOWN);
    in = window(6, 0, 5, 0, 0);                       /* nothing accepted */
    assert_int_equal(judge(&in, &r), KEPTUP_UNKNOWN);
    in = window(2, 100, 0, 0, 31);                    /* two are enough */
    assert_int_equal(judge(&in, &r), KEPTUP_YES);
}

/* A sequential test that decided speaks for the window; one that did not leaves
 * it to the slope. */
static void a_decision_speaks_for_the_window(void **st)
{
    (void)st;
    struct keptup_result r;
    struct keptup_input in = window(6, 218, 21, 0, 85);
    in.decided = 1;
    in.decided_value = 0.4;
    in.decided_bound = 2.1;
    assert_int_equal(judge(&in, &r), KEPTUP_YES);
    assert_string_equal(r.stat, KEPTUP_SPRT);
    assert_float_equal(r.value, 0.4, 0);
    in = window(6, 150, 0, 0, 48);
    in.decided = -1;
    in.decided_value = 3;
    in.decided_bound = 1.2;
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
    assert_float_equal(r.bound, 1.2, 0);
    in.decided = 0;
    assert_int_equal(judge(&in, &r), KEPTUP_YES);
    assert_string_equal(r.stat, KEPTUP_STAT);
}

/* Up in one half past the half's bound, down in the other: a swing. */
static void halves_swing(void **st)
{
    (void)st;
    double t[] = { 0, 10, 20, 30, 40, 50, 60 }, up_down[] = { 100, 400, 700, 1000, 700, 400, 300 };
    struct keptup_input in = { .accepted_rate = 100 };
    keptup_backlog(t, up_down, 7, &in.b);
    struct keptup_result r;
    judge(&in, &r);
    assert_true(r.swing);
    double grow[] = { 100, 400, 700, 1000, 1300, 1600, 1900 };
    keptup_backlog(t, grow, 7, &in.b);
    assert_int_equal(judge(&in, &r), KEPTUP_BEHIND);
    assert_false(r.swing);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slope_is_least_squares),
        cmocka_unit_test(growing_backlog_is_behind),
        cmocka_unit_test(flat_backlog_holds),
        cmocka_unit_test(noise_bound),
        cmocka_unit_test(readers_limit_is_the_testers),
        cmocka_unit_test(too_few_samples_tell_nothing),
        cmocka_unit_test(halves_swing),
        cmocka_unit_test(a_decision_speaks_for_the_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
