/* Unit tests of peak and recovery (verdict/recovery.c): a spike is a stage above
 * the one before it with a lower one after it; its recovery is the later of the
 * times the backlog and the delivery latency took to come back to the base stage's
 * level after the spike's end; one that never comes back within the send window is
 * not recovered, with the time seen; a base stage without samples cannot tell; a
 * staircase that only rises has no spike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "verdict/recovery.h"

/* 10 s at 15 msg/s, 6 s at 60, 20 s at 15, against a server that delivers 30: a
 * point a second; the backlog 20 in the base, growing 30 a second in the spike,
 * falling 15 a second after it; the latency 500 ms in the base, the backlog over
 * the delivery rate (s) while it is above its level. */
static const struct recovery_stage prof[] = { { 0, 10, 15 }, { 10, 16, 60 }, { 16, 36, 15 } };

static unsigned points(struct recovery_point *p, double drain)
{
    unsigned n = 0;
    double u = 20;
    for (int t = 1; t <= 36; t++) {
        if (t > 10 && t <= 16)
            u += 30;
        else if (t > 16)
            u = fmax(20, u - drain);
        p[n++] = (struct recovery_point){ t, u, u > 25 ? 1000 * u / 30 : 500 };
    }
    return n;
}

static void spike_recovers(void **st)
{
    (void)st;
    struct recovery_point p[64];
    unsigned np = points(p, 15);
    struct recovery_spike s[RECOVERY_MAX];
    assert_int_equal(recovery_find(prof, 3, p, np, s, RECOVERY_MAX), 1);
    assert_int_equal(s[0].stage, 1);
    assert_true(s[0].base_rate == 15 && s[0].spike_rate == 60);
    assert_true(s[0].end_s == 16);
    assert_true(s[0].has_base);
    assert_float_equal(s[0].base_backlog, 20 + 3 * sqrt(21), 1e-9);
    assert_float_equal(s[0].base_latency_ms, 550, 1e-9);
    assert_float_equal(s[0].peak_backlog, 200, 1e-9);
    assert_int_equal(s[0].recovered, 1);
    /* 200 at the spike's end, 15 a second less: within 5 % of the excess over
     * 20 + 3 sqrt(21) = 33.7 (42.1) at t = 27 (35 left); the latency within 5 % of
     * its excess over 550 ms (856 ms) at t = 28 (20 left: 500 ms) */
    assert_float_equal(s[0].backlog_s, 11, 1e-9);
    assert_float_equal(s[0].latency_s, 12, 1e-9);
    assert_float_equal(s[0].recovery_s, 12, 1e-9);
    /* not back at the interval end before, a second earlier: the run's own spacing */
    assert_float_equal(s[0].from_s, 11, 1e-9);
    assert_false(s[0].late);
    /* the latency comes back a second later, and an interval with no delivery says nothing */
    p[27].delivery_ms = 900;
    p[28].delivery_ms = -1;
    recovery_find(prof, 3, p, np, s, RECOVERY_MAX);
    assert_float_equal(s[0].backlog_s, 11, 1e-9);
    assert_float_equal(s[0].latency_s, 14, 1e-9);
    assert_float_equal(s[0].recovery_s, 14, 1e-9);
    /* the latency lags: at the spike's end the mail delivered was accepted before it
     * (400 ms), then the spike's own mail came out late: back is when it stayed back */
    p[15].delivery_ms = 400;
    recovery_find(prof, 3, p, np, s, RECOVERY_MAX);
    assert_float_equal(s[0].latency_s, 14, 1e-9);
    /* and a backlog back once, then over its level again, is back the second time */
    p[26].unread = 30;                   /* t = 27: back (under 42.1) */
    p[27].unread = 50;                   /* t = 28: over it again */
    recovery_find(prof, 3, p, np, s, RECOVERY_MAX);
    assert_float_equal(s[0].backlog_s, 13, 1e-9);
    assert_float_equal(s[0].from_s, 13, 1e-9);   /* the interval end before the latency came back */
}

/* t_recovery.sh's run on a loaded machine (load 12): 8 s at 15 msg/s, 5 s at 60, 16
 * s at 15, a ceiling of 30. Its base stage had a backlog of 0 or 1 and a delivery p50
 * of 2-3 ms; the controller then took no interval end from 21.1 s to 29.6 s, the
 * send window's last one, after the profile's nominal end. Its figures, but that the
 * last point is the loaded machine's: a backlog of 8 (the readers a little behind)
 * and a p50 of 20 ms, both back in any reading of it against a peak of 142 and 4.6 s. */
static void a_late_controller_on_a_loaded_machine(void **st)
{
    (void)st;
    static const double tl[][3] = {
        { 1.010, 0, 3.293 },  { 2.010, 1, 2.572 },  { 3.010, 0, 2.310 },  { 4.052, 0, 2.245 },
        { 5.011, 0, 2.966 },  { 6.011, 0, 2.277 },  { 7.011, 0, 1.794 },  { 8.011, 0, 2.540 },
        { 9.014, 22, 38.5 },  { 10.011, 52, 599.8 }, { 11.011, 82, 1098.9 }, { 12.011, 112, 1602.2 },
        { 13.011, 142, 2105.5 }, { 14.012, 126, 2600.5 }, { 15.012, 112, 3103.8 }, { 16.012, 96, 3607.1 },
        { 17.012, 82, 4110.4 }, { 18.086, 67, 4597.0 }, { 19.066, 51, 3909.1 }, { 20.248, 33, 2868.9 },
        { 21.066, 21, 1870.7 }, { 29.645, 8, 20.0 },
    };
    const struct recovery_stage prof3[] = { { 0, 8, 15 }, { 8, 13, 60 }, { 13, 29, 15 } };
    struct recovery_point p[32];
    unsigned np = sizeof tl / sizeof tl[0];
    for (unsigned i = 0; i < np; i++)
        p[i] = (struct recovery_point){ tl[i][0], tl[i][1], tl[i][2] };
    struct recovery_spike s[RECOVERY_MAX];
    assert_int_equal(recovery_find(prof3, 3, p, np, s, RECOVERY_MAX), 1);
    assert_float_equal(s[0].peak_backlog, 142, 1e-9);
    assert_int_equal(s[0].recovered, 1);
    /* seen back at the send window's last interval end, not yet at 21.1 s: the gap is
     * the controller's, and says so */
    assert_float_equal(s[0].backlog_s, 29.645 - 13, 1e-9);
    assert_float_equal(s[0].recovery_s, 29.645 - 13, 1e-9);
    assert_float_equal(s[0].from_s, 21.066 - 13, 1e-9);
    assert_true(s[0].late);
    /* the same server, its backlog and latency not back: not recovered, seen to the end */
    p[np - 1].unread = 30;
    p[np - 1].delivery_ms = 400;
    recovery_find(prof3, 3, p, np, s, RECOVERY_MAX);
    assert_int_equal(s[0].recovered, 0);
    assert_float_equal(s[0].recovery_s, 29.645 - 13, 1e-9);
}

/* A base stage whose backlog grew (the server already behind at the base rate):
 * its level is no steady state, and the spike says so; a flat one is steady. */
static void an_unsteady_base_is_named(void **st)
{
    (void)st;
    struct recovery_point p[64];
    unsigned np = points(p, 15);
    struct recovery_spike s[RECOVERY_MAX];
    recovery_find(prof, 3, p, np, s, RECOVERY_MAX);
    assert_int_equal(s[0].base_steady, 1);
    assert_float_equal(s[0].base_growth, 0, 1e-9);
    for (unsigned i = 0; i < 10; i++)    /* t = 1..10: 5 msg/s more each second */
        p[i].unread = 5 * (i + 1);
    recovery_find(prof, 3, p, np, s, RECOVERY_MAX);
    assert_int_equal(s[0].base_steady, 0);
    assert_float_equal(s[0].base_growth, 5, 1e-9);
    /* too few points to tell */
    recovery_find(prof, 3, p + 8, np - 8, s, RECOVERY_MAX);
    assert_int_equal(s[0].base_steady, -1);
}

static void a_slow_drain_never_recovers(void **st)
{
    (void)st;
    struct recovery_point p[64];
    unsigned np = points(p, 5);          /* 180 over the level, 5 a second: 36 s, the run has 20 */
    struct recovery_spike s[RECOVERY_MAX];
    assert_int_equal(recovery_find(prof, 3, p, np, s, RECOVERY_MAX), 1);
    assert_int_equal(s[0].recovered, 0);
    assert_true(s[0].backlog_s < 0);
    assert_float_equal(s[0].recovery_s, 20, 1e-9);   /* seen until the window's end */
}

static void no_base_samples_cannot_tell(void **st)
{
    (void)st;
    struct recovery_point p[64];
    unsigned np = points(p, 15);
    struct recovery_spike s[RECOVERY_MAX];
    assert_int_equal(recovery_find(prof, 3, p + 10, np - 10, s, RECOVERY_MAX), 1);   /* from t = 11 */
    assert_false(s[0].has_base);
    assert_int_equal(s[0].recovered, -1);
}

static void only_rising_has_no_spike(void **st)
{
    (void)st;
    const struct recovery_stage stairs[] = { { 0, 10, 10 }, { 10, 20, 20 }, { 20, 30, 30 } };
    struct recovery_point p[64];
    unsigned np = points(p, 15);
    struct recovery_spike s[RECOVERY_MAX];
    assert_int_equal(recovery_find(stairs, 3, p, np, s, RECOVERY_MAX), 0);
    assert_int_equal(recovery_find(prof, 2, p, np, s, RECOVERY_MAX), 0);     /* no return */
    /* two spikes: the first is measured until the second begins */
    const struct recovery_stage two[] = { { 0, 10, 15 }, { 10, 16, 60 }, { 16, 30, 15 }, { 30, 32, 60 }, { 32, 36, 15 } };
    assert_int_equal(recovery_find(two, 5, p, np, s, RECOVERY_MAX), 2);
    assert_int_equal(s[1].stage, 3);
    assert_int_equal(s[0].recovered, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spike_recovers),
        cmocka_unit_test(a_late_controller_on_a_loaded_machine),
        cmocka_unit_test(an_unsteady_base_is_named),
        cmocka_unit_test(a_slow_drain_never_recovers),
        cmocka_unit_test(no_base_samples_cannot_tell),
        cmocka_unit_test(only_rising_has_no_spike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
