/* Unit tests of a stage of smtp.profile ended once decided (verdict/stage_end.c)
 * and of the schedule that follows it (engine/pacer.c's stage_clock): a stage
 * whose backlog stays flat ends kept up when its sequential test decides, and not
 * an interval before; one whose backlog grows ends the send window; one in the
 * test's indifference zone runs its planned time; a lead-in is never judged; an
 * interval that straddles a stage's start is neither stage's; and the decision is
 * the one drift_sprt makes on the same points, the points the search judges the
 * level on afterwards. The clock: a stage ended early keeps the time it had, the
 * next begins at once and the pacer's arrivals move up with it; the send window
 * ends where the last stage ended. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/pacer.h"
#include "verdict/stage_end.h"

#define NS 1000000000ull

/* A staircase run's stages: a lead-in of 3 s, then levels of 15 s, intervals of 1 s. */
struct plan {
    unsigned n;
    double t0[8], t1[8], planned[8];
};

static void plan_init(struct plan *p, unsigned levels)
{
    p->n = levels + 1;
    double t = 0;
    for (unsigned i = 0; i < p->n; i++) {
        p->planned[i] = i ? 15 : 3;
        p->t0[i] = t;
        p->t1[i] = t += p->planned[i];
    }
}

/* The stage i ended at t: the ones after it move up (as the stage_clock does). */
static void plan_end(struct plan *p, unsigned i, double t, int last)
{
    double shift = p->t1[i] - t;
    p->t1[i] = t;
    for (unsigned k = i + 1; k < p->n; k++) {
        p->t0[k] = last ? t : p->t0[k] - shift;
        p->t1[k] = last ? t : p->t1[k] - shift;
    }
}

static void rules_init(struct stage_end_rules *r)
{
    memset(r, 0, sizeof *r);
    drift_rules_level(&r->dr, 0.05, 15, 1);
    r->v = DRIFT_VAR_BATCH;
    r->tol_s = 0.5;
    r->first = 1;
}

/* The backlog's change in interval i of stage k: growth[k] msg/s and a swing of
 * +-swing that comes back. */
static double flow(const double *growth, double swing, unsigned k, unsigned i)
{
    return growth[k] + (i % 2 ? swing : -swing);
}

/* Where the backlog's change goes (drive()): the ledger's unread, or the server's
 * queue (counted every other interval, the ledger's unread flat) with its count in
 * the run's first interval, or with none there (the collector had not counted it
 * yet: the run is judged on the ledger's backlog). */
enum where { IN_UNREAD, IN_QUEUE, IN_QUEUE_LATE };

/* Runs 100 msg/s through the plan, one interval a second, the backlog changing by
 * flow() where w says; records each act. Returns the number of acts, their stages,
 * times and kinds in which/at/act. */
static unsigned drive_in(enum where w, struct plan *p, const double *growth, double swing, unsigned *which,
                         double *at, enum stage_end_act *act, struct drift_result *res)
{
    struct stage_end_rules r;
    rules_init(&r);
    struct stage_end s;
    stage_end_init(&s);
    double unread = 50, queue = 50;
    s.last_unread = unread;
    unsigned nact = 0, i = 0;
    for (double t = 1; t <= p->t1[p->n - 1] + 1e-9; t += 1, i++) {
        int k = -1;
        for (unsigned j = 0; j < p->n; j++)
            if (t - 1 >= p->t0[j] - 1e-9 && t - 1 < p->t1[j] - 1e-9)
                k = (int)j;
        if (k < 0)
            break;
        double d = flow(growth, swing, (unsigned)k, i);
        queue += d;
        unread += w == IN_UNREAD ? d : 0;
        int counted = w == IN_QUEUE ? i % 2 == 0 : w == IN_QUEUE_LATE && i % 2 == 1;
        double b = stage_end_backlog(&s, counted, queue, unread);
        if (w != IN_QUEUE)
            assert_true(b == unread);
        else
            assert_true(b == (counted ? queue : queue - d));   /* between counts the last */
        struct drift_point pt = { .t = t, .accepted = 100, .read = 100 - d, .unread = b };
        unsigned st = 99;
        struct drift_result dres;
        enum stage_end_act a = stage_end_step(&s, &r, p->t0, p->t1, p->planned, p->n, &pt, &st, &dres);
        if (a != STAGE_GO_ON) {
            which[nact] = st;
            at[nact] = t;
            res[nact] = dres;
            act[nact++] = a;
            plan_end(p, st, t, a == STAGE_STOP);
        }
    }
    stage_end_free(&s);
    return nact;
}

static unsigned drive(struct plan *p, const double *growth, double swing, unsigned *which, double *at,
                      enum stage_end_act *act, struct drift_result *res)
{
    return drive_in(IN_UNREAD, p, growth, swing, which, at, act, res);
}

/* Flat levels end kept up as soon as their test decides (8 batches of 1 s: at 8 s),
 * one after the other; the lead-in runs its 3 s whatever its backlog did. */
static void flat_levels_end_early(void **st)
{
    (void)st;
    struct plan p;
    plan_init(&p, 3);
    double growth[8] = { 30, 0, 0, 0 };   /* the lead-in fills the pipeline: no trend, not judged */
    unsigned which[8];
    double at[8];
    enum stage_end_act act[8];
    struct drift_result res[8];
    unsigned n = drive(&p, growth, 3, which, at, act, res);
    assert_int_equal(n, 3);
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(which[i], i + 1);
        assert_int_equal(act[i], STAGE_NEXT);
        assert_int_equal(res[i].d, DRIFT_KEPT_UP);
        /* decided on its 8th batch, an interval after the stage began */
        assert_true(fabs(at[i] - (3 + 8 * (i + 1))) < 1e-9);
        assert_true(fabs(res[i].at_s - 8) < 1e-9);
    }
    /* the run: 3 + 3 x 8 s instead of 3 + 3 x 15 */
    assert_true(fabs(p.t1[p.n - 1] - 27) < 1e-9);
}

/* A level whose backlog grows by 20 % of its rate ends the send window: the
 * levels above it never run. */
static void growing_level_stops(void **st)
{
    (void)st;
    struct plan p;
    plan_init(&p, 4);
    double growth[8] = { 0, 0, 20, 0, 0 };
    unsigned which[8];
    double at[8];
    enum stage_end_act act[8];
    struct drift_result res[8];
    unsigned n = drive(&p, growth, 3, which, at, act, res);
    assert_int_equal(n, 2);
    assert_int_equal(act[0], STAGE_NEXT);
    assert_int_equal(which[1], 2);
    assert_int_equal(act[1], STAGE_STOP);
    assert_int_equal(res[1].d, DRIFT_BEHIND);
    assert_true(res[1].at_s >= 8 - 1e-9 && res[1].at_s < 15);
    for (unsigned k = 3; k < p.n; k++)
        assert_true(p.t1[k] == p.t0[k] && p.t0[k] == at[1]);
}

/* The live end weighs the server's queue where the run's first interval counted
 * it, as the search judges the level afterwards (capacity/level.c): a queue that
 * grows by 20 % of the rate while the ledger's backlog stays flat ends the send
 * window at the second level, its count carried between counts. A run whose first
 * interval had no count is judged on the ledger's backlog throughout: it runs on. */
static void queue_weighed_where_counted(void **st)
{
    (void)st;
    double growth[8] = { 0, 0, 20, 0, 0 };
    unsigned which[8];
    double at[8];
    enum stage_end_act act[8];
    struct drift_result res[8];
    struct plan p;
    plan_init(&p, 4);
    unsigned n = drive_in(IN_QUEUE, &p, growth, 3, which, at, act, res);
    assert_int_equal(n, 2);
    assert_int_equal(act[0], STAGE_NEXT);
    assert_int_equal(which[1], 2);
    assert_int_equal(act[1], STAGE_STOP);
    plan_init(&p, 4);
    n = drive_in(IN_QUEUE_LATE, &p, growth, 3, which, at, act, res);
    assert_int_equal(n, 4);
    for (unsigned i = 0; i < n; i++)
        assert_int_equal(act[i], STAGE_NEXT);
}

/* A level growing by half the test's bound (the indifference zone) with a swing as
 * large decides nothing before its planned end: it runs its 15 s (and is open). */
static void undecided_level_runs_its_time(void **st)
{
    (void)st;
    struct plan p;
    plan_init(&p, 1);
    double growth[8] = { 0, 2.5 };
    unsigned which[8];
    double at[8];
    enum stage_end_act act[8];
    struct drift_result res[8];
    unsigned n = drive(&p, growth, 12, which, at, act, res);
    assert_int_equal(n, 0);
    assert_true(fabs(p.t1[1] - 18) < 1e-9);
}

/* Only the lead-in: never judged, however the backlog moves. */
static void lead_in_never_judged(void **st)
{
    (void)st;
    struct plan p = { .n = 2, .t0 = { 0, 15 }, .t1 = { 15, 30 }, .planned = { 15, 15 } };
    double growth[8] = { 40, 0 };
    unsigned which[8];
    double at[8];
    enum stage_end_act act[8];
    struct drift_result res[8];
    unsigned n = drive(&p, growth, 0.5, which, at, act, res);
    assert_int_equal(n, 1);
    assert_int_equal(which[0], 1);   /* the level after it, kept up */
    assert_int_equal(act[0], STAGE_NEXT);
}

/* A level is weighed against the swing of the level before it (the lead-in's fill
 * is none): a first level that swung by 60 either way, then a second whose backlog
 * rose by 11 messages a second (the testbed's at 191.6 msg/s, 3 to 197 in 18 s).
 * With no swing known the second is behind at its first decision; weighed against
 * the first level's swing, 15 s of such a rise is no proof, and it runs its time. */
static void the_level_before_swings(void **st)
{
    (void)st;
    struct stage_end_rules r;
    rules_init(&r);
    struct stage_end s;
    stage_end_init(&s);
    double t0[3] = { 0, 3, 33 }, t1[3] = { 3, 33, 48 }, planned[3] = { 3, 30, 15 };
    struct drift_point all[49];
    all[0] = (struct drift_point){ .t = 0 };
    unsigned w = 0;
    struct drift_result got;
    for (unsigned i = 1; i <= 48; i++) {
        double unread = i <= 3 ? 60.0 * i : i <= 33 ? 180 + (i % 2 ? 60 : -60) : all[33].unread + 11.0 * (i - 33);
        all[i] = (struct drift_point){ .t = i, .accepted = 190, .read = 190, .unread = unread };
        enum stage_end_act a = stage_end_step(&s, &r, t0, t1, planned, 3, &all[i], &w, &got);
        if (i <= 33)
            assert_true(s.swing == 0);
        assert_int_not_equal(a, STAGE_STOP);
    }
    assert_true(s.swing > 60 * 60 && s.swing == drift_swing_kept(all, 49, 3, 33, r.dr.share, 0));
    stage_end_free(&s);
    struct drift_rules dr = r.dr;
    dr.cap_s = 15;
    drift_sprt(&dr, all + 33, 16, DRIFT_VAR_BATCH, &got);
    assert_int_equal(got.d, DRIFT_BEHIND);
}

/* The decision is drift_sprt's on the stage's points, p[0] the end of the interval
 * before it: the points the search cuts the level by afterwards. An interval that
 * began before a stage (a tick late) is neither stage's: not in the level's points. */
static void same_points_as_the_search(void **st)
{
    (void)st;
    struct stage_end_rules r;
    rules_init(&r);
    struct stage_end s;
    stage_end_init(&s);
    double t0[2] = { 0, 3.2 }, t1[2] = { 3.2, 18.2 }, planned[2] = { 3.2, 15 };
    struct drift_point all[20];
    double unread = 10;
    unsigned w = 0, decided = 0;
    struct drift_result got = { 0 };
    for (unsigned i = 0; i < 20 && !decided; i++) {
        unread += i % 3 == 0 ? 4 : -2;
        all[i] = (struct drift_point){ .t = i + 1, .accepted = 90, .read = 90, .unread = unread };
        enum stage_end_act a = stage_end_step(&s, &r, t0, t1, planned, 2, &all[i], &w, &got);
        if (a != STAGE_GO_ON) {
            assert_int_equal(a, STAGE_NEXT);
            assert_int_equal(w, 1);
            decided = i + 1;
        }
    }
    stage_end_free(&s);
    assert_true(decided > 0);
    /* the interval [3, 4] began 0.2 s before the stage: within half an interval, the
     * stage's; [4, 5] onwards too. So the points: p[0] = (3, unread at 3), then 4.. */
    struct drift_point p[20];
    unsigned n = 0;
    p[n++] = (struct drift_point){ .t = 3, .unread = all[2].unread };
    for (unsigned i = 3; i < decided; i++)
        p[n++] = all[i];
    struct drift_rules dr = r.dr;
    dr.cap_s = 15;
    struct drift_result want;
    drift_sprt(&dr, p, n, DRIFT_VAR_BATCH, &want);
    assert_int_equal(want.d, got.d);
    assert_true(fabs(want.at_s - got.at_s) < 1e-9 && fabs(want.llr - got.llr) < 1e-9);
    /* one point fewer: not decided yet (the stage ended on its deciding interval) */
    drift_sprt(&dr, p, n - 1, DRIFT_VAR_BATCH, &want);
    assert_int_equal(want.d, DRIFT_UNDECIDED);

    /* ticks late and early: the interval [2.5, 3.8] straddles the start at 3.2 by more
     * than half an interval on both sides, so it is neither the lead-in's nor the
     * level's ([2.5, 3.5] would be the lead-in's: it ends within half an interval) */
    stage_end_init(&s);
    struct drift_point a = { .t = 2.5, .accepted = 90, .read = 90, .unread = 10 };
    struct drift_point b = { .t = 3.8, .accepted = 90, .read = 90, .unread = 12 };
    assert_int_equal(stage_end_step(&s, &r, t0, t1, planned, 2, &a, &w, &got), STAGE_GO_ON);
    assert_int_equal(stage_end_step(&s, &r, t0, t1, planned, 2, &b, &w, &got), STAGE_GO_ON);
    assert_int_equal(s.cur, 1);
    assert_int_equal(s.n, 0);
    stage_end_free(&s);
}

/* The clock: stage 1 of 10 s at 10/s, 10 s at 40/s, 10 s at 20/s, ended at 4 s
 * of its 10: stage 2 begins at 14 s, its arrivals (at a single pacer's share)
 * moved up by 6 s; ended there with last, the window ends and no arrival follows. */
static void clock_moves_up(void **st)
{
    (void)st;
    struct rate_stages plan = { .n = 3, .dur_ns = { 10 * NS, 10 * NS, 10 * NS }, .rate = { 10, 40, 20 } };
    struct stage_clock c;
    stage_clock_init(&c, &plan);
    struct pacer p;
    pacer_init(&p, 0, 0, 0, ARRIVALS_CONSTANT, 1);
    pacer_stages(&p, &c, 1);
    assert_int_equal(stage_clock_total(&c), 30 * NS);
    p.s = 100 + 40 * 2;              /* 2 s into stage 1 */
    assert_true(llabs((long long)pacer_due(&p) - 12 * (long long)NS) < 1000);
    stage_clock_end(&c, 1, 14 * NS, 0);
    assert_int_equal(stage_clock_dur(&c, 1), 4 * NS);
    assert_int_equal(stage_clock_start(&c, 2), 14 * NS);
    assert_int_equal(stage_clock_total(&c), 24 * NS);
    assert_int_equal(stage_clock_at(&c, 13 * NS), 1);
    assert_int_equal(stage_clock_at(&c, 14 * NS), 2);
    p.s = 100 + 160 + 20 * 3;        /* 3 s into stage 2, which now begins at 14 s */
    assert_true(llabs((long long)pacer_due(&p) - 17 * (long long)NS) < 1000);
    /* never later than planned, never before its start */
    stage_clock_end(&c, 1, 29 * NS, 0);
    assert_int_equal(stage_clock_dur(&c, 1), 4 * NS);
    stage_clock_end(&c, 2, 16 * NS, 1);
    assert_int_equal(stage_clock_total(&c), 16 * NS);
    assert_int_equal(stage_clock_last(&c), 2);
    assert_int_equal(stage_clock_at(&c, 16 * NS), -1);
    p.s = 100 + 160 + 20 * 2 + 1;    /* past the last stage: an hour after, never taken */
    assert_true(pacer_due(&p) > 3600 * NS);
    /* a stage ended behind with nothing after it: the last that ran is the one before */
    stage_clock_init(&c, &plan);
    stage_clock_end(&c, 0, 0, 1);
    assert_int_equal(stage_clock_total(&c), 0);
    stage_clock_init(&c, &plan);
    stage_clock_end(&c, 1, 12 * NS, 1);
    assert_int_equal(stage_clock_last(&c), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flat_levels_end_early), cmocka_unit_test(growing_level_stops), cmocka_unit_test(queue_weighed_where_counted),
        cmocka_unit_test(undecided_level_runs_its_time), cmocka_unit_test(lead_in_never_judged),
        cmocka_unit_test(same_points_as_the_search), cmocka_unit_test(the_level_before_swings), cmocka_unit_test(clock_moves_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
