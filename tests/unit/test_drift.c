/* Unit tests of the "kept up" statistics (verdict/drift.c), and their replay: each
 * statistic is run on windows cut from long runs of known truth and scored against
 * it (tests/fixtures/capacity/):
 *  - the reference server's delivery ceiling (fault.rate.limit) at fixed Poisson
 *    arrival rates around it (r*.json.gz, record.sh): a rate below the ceiling is
 *    kept up, one above it is not;
 *  - the testbed (Postfix + Dovecot) at fixed rates (tb*.json.gz,
 *    record-testbed.sh): its ceiling is unknown, so each recording's truth is its
 *    own backlog's growth over all but its first two minutes.
 * The tables of decisions, errors and time to decide are printed (make replay; the
 * figures of docs/results/capacity.md), and the test fails when the sequential
 * test, the one the judgements use, errs on a reference level more than 5 % from
 * the ceiling more often than its stated bound, or leaves too many such levels
 * undecided. */
#include <glob.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "lib/alloc.h"
#include "verdict/drift.h"
#include "verdict/keptup.h"

/* A synthetic window: n intervals of 1 s, accepted a a second, the backlog
 * growing by g a second with a swing of amplitude sw and period per. */
static unsigned synth(struct drift_point *p, unsigned n, double a, double g, double sw, double per)
{
    for (unsigned i = 0; i <= n; i++) {
        p[i] = (struct drift_point){ .t = 10 + i, .accepted = i ? a : 0, .read = i ? a - g : 0 };
        p[i].unread = 20 + g * i + (per > 0 ? sw * sin(2 * M_PI * i / per) : 0);
        p[i].lat_n = i ? a - g : 0;
        p[i].lat_mean = p[i].unread / (a - g);
    }
    return n + 1;
}

static void fixed_window_statistics(void **st)
{
    (void)st;
    struct drift_rules r;
    drift_rules_default(&r);
    struct drift_point p[121];
    struct drift_result o;
    /* 50 msg/s accepted, the backlog growing by 5 (twice the bound of 2.5) */
    unsigned n = synth(p, 60, 50, 5, 0, 0);
    drift_slope(&r, p, n, &o);
    assert_int_equal(o.d, DRIFT_BEHIND);
    assert_true(fabs(o.value - 5) < 1e-9 && fabs(o.bound - 2.5) < 1e-9 && o.at_s == 60);
    drift_troughs(&r, p, n, 10, &o);
    assert_int_equal(o.d, DRIFT_BEHIND);
    drift_latency(&r, p, n, &o);
    assert_int_equal(o.d, DRIFT_BEHIND);
    /* steady: kept up by each */
    n = synth(p, 60, 50, 0, 0, 0);
    drift_slope(&r, p, n, &o);
    assert_int_equal(o.d, DRIFT_KEPT_UP);
    drift_troughs(&r, p, n, 10, &o);
    assert_int_equal(o.d, DRIFT_KEPT_UP);
    drift_latency(&r, p, n, &o);
    assert_int_equal(o.d, DRIFT_KEPT_UP);
    /* a swing with no trend, caught on its way up: a fixed window calls it a growth */
    n = synth(p, 30, 50, 0, 150, 120);
    drift_slope(&r, p, n, &o);
    assert_int_equal(o.d, DRIFT_BEHIND);
    /* too few points: nothing decided */
    drift_slope(&r, p, 2, &o);
    assert_int_equal(o.d, DRIFT_UNDECIDED);
    drift_troughs(&r, p, 20, 10, &o);
    assert_int_equal(o.d, DRIFT_UNDECIDED);
}

static void sequential_test(void **st)
{
    (void)st;
    struct drift_rules r;
    drift_rules_default(&r);
    struct drift_point p[241];
    struct drift_result o;
    /* a backlog growing by 40 % of the accepted rate: behind at the first batches it may decide on */
    unsigned n = synth(p, 240, 50, 20, 0, 0);
    for (int v = 0; v <= DRIFT_VAR_FLOORED; v++) {
        drift_sprt(&r, p, n, v, &o);
        assert_int_equal(o.d, DRIFT_BEHIND);
        assert_true(o.at_s == r.batch * r.min_batches);
        assert_true(o.llr >= o.llr_hi);
    }
    /* a flat backlog: kept up */
    n = synth(p, 240, 50, 0, 0, 0);
    for (int v = 0; v <= DRIFT_VAR_FLOORED; v++) {
        drift_sprt(&r, p, n, v, &o);
        assert_int_equal(o.d, DRIFT_KEPT_UP);
        assert_true(o.llr <= o.llr_lo && o.at_s < r.cap_s);
    }
    /* a drift of exactly half the alternative's, with a swing: the likelihood ratio
     * cannot leave the band, so the cap ends it indeterminate */
    n = synth(p, 240, 50, 1.25, 8, 20);
    drift_sprt(&r, p, n, DRIFT_VAR_POISSON, &o);
    assert_int_equal(o.d, DRIFT_INDETERMINATE);
    assert_true(o.at_s >= r.cap_s && o.at_s < r.cap_s + r.batch);
    /* a window that ends before a decision or the cap: undecided */
    drift_sprt(&r, p, 30, DRIFT_VAR_POISSON, &o);
    assert_int_equal(o.d, DRIFT_UNDECIDED);
    drift_sprt(&r, p, 1, DRIFT_VAR_BATCH, &o);
    assert_int_equal(o.d, DRIFT_UNDECIDED);

    /* the testbed's level at 191.6 msg/s: a backlog kept steady that a pause of the
     * server lifted by a second's mail (3 to 197 in 18 s, the level before it
     * swinging by 56 messages): with no swing known, behind at the first decision;
     * with that swing, not decided there */
    struct drift_point q[20], before[18];
    for (unsigned i = 0; i < 18; i++)
        before[i] = (struct drift_point){ .t = i, .accepted = 190, .read = 190, .unread = 100 + (i % 2 ? 56 : -56) };
    double sw = drift_swing(before, 18);
    assert_true(sw > 56 * 56 && sw < 56 * 56 * 1.2);
    q[0] = (struct drift_point){ .t = 0, .unread = 3 };
    for (unsigned i = 1; i < 19; i++)
        q[i] = (struct drift_point){ .t = i, .accepted = 190, .read = 190 - 194.0 / 18, .unread = 3 + 194.0 * i / 18 };
    drift_sprt(&r, q, 19, DRIFT_VAR_BATCH, &o);
    assert_int_equal(o.d, DRIFT_BEHIND);
    r.swing = sw;
    drift_sprt(&r, q, 19, DRIFT_VAR_BATCH, &o);
    assert_int_equal(o.d, DRIFT_UNDECIDED);
    /* a trend the swing cannot explain still decides: 40 % of the rate for 30 s */
    struct drift_point g[31];
    for (unsigned i = 0; i < 31; i++)
        g[i] = (struct drift_point){ .t = i, .accepted = 190, .read = 114, .unread = 3 + 76.0 * i };
    drift_sprt(&r, g, 31, DRIFT_VAR_BATCH, &o);
    assert_int_equal(o.d, DRIFT_BEHIND);
    assert_true(o.at_s <= 20);
    /* the swing of a level that kept up, between two times, the run's start first; a
     * level that grew (by 10 % of its rate) or has too few points leaves the last */
    struct drift_point all[6] = { { .t = 0 }, { .t = 1, .accepted = 100, .unread = 9 },
                                  { .t = 2, .accepted = 100, .unread = 1 }, { .t = 3, .accepted = 100, .unread = 9 },
                                  { .t = 4, .accepted = 100, .unread = 1 }, { .t = 5, .accepted = 100, .unread = 9 } };
    assert_true(drift_swing_kept(all, 6, 1, 5, 0.05, 7) == drift_swing(all + 1, 5));
    assert_true(drift_swing_kept(all, 6, 2, 4, 0.05, 7) == 7);   /* 3 points: too few */
    for (unsigned i = 1; i < 6; i++)
        all[i].unread = 10.0 * i + (i % 2 ? 4 : -4);
    assert_true(drift_swing_kept(all, 6, 1, 5, 0.05, 7) == 7);
    assert_true(drift_swing_kept(all, 6, 1, 5, 0.2, 7) == drift_swing(all + 1, 5));
    r.swing = 0;
}

static void fill_end(void **st)
{
    (void)st;
    struct drift_rules r;
    drift_rules_default(&r);                                  /* batches of 2 intervals */
    /* 61 points of 1 s: its first fifth is 12 s. Filled in 5 s, then level: the
     * first point no higher than two before */
    double t[61], u[61];
    for (unsigned fill = 5; fill <= 13; fill += 8) {
        for (unsigned i = 0; i < 61; i++) {
            t[i] = i;
            u[i] = i <= fill ? 400.0 * i : 400.0 * fill + (i % 2 ? 5 : -5);
        }
        if (fill == 5)
            assert_int_equal(drift_fill_end(&r, t, u, 61), 8);   /* 1995, as two before */
        else
            assert_int_equal(drift_fill_end(&r, t, u, 61), 0);   /* not within the fifth */
    }
    for (unsigned i = 0; i < 61; i++)
        u[i] = 100.0 * i;
    assert_int_equal(drift_fill_end(&r, t, u, 61), 0);           /* grew all along */
    assert_int_equal(drift_fill_end(&r, t, u, 1), 0);
}

/* ---- the replay over the recorded runs ---- */

struct recording {
    char name[64];
    char level[16];                  /* "95%" of the reference's ceiling, or the testbed's "185/s" */
    int testbed;
    int truth;                       /* 1 kept up, 0 behind, -1 near the knee: either answer allowed */
    double growth, bound;            /* the testbed's truth: its long-run growth and bound, msg/s */
    double warmup_s;                 /* windows start after it */
    unsigned n;
    struct drift_point *p;           /* p[0]: the run's start, t = 0 and nothing unread */
    struct drift_point *q;           /* the testbed's: the same, its backlog the server's queue */
};

/* The testbed's truth is its run's own backlog after TRUTH_FROM_S: kept up when it
 * grew by at most half the bound (share x the accepted rate), behind past the whole
 * bound, near the knee between (as the reference's levels within 5 % of the
 * ceiling, whose backlog grows by 0 to 5 % of their rate). Its windows start after
 * its first minute, as a fresh Postfix and Dovecot settle. */
#define TRUTH_FROM_S 120.0
#define TESTBED_WARMUP_S 60.0
#define WARMUP_S 10.0

static void testbed_truth(struct recording *rec, double share)
{
    unsigned i0 = 1, m = 0;
    while (i0 < rec->n && rec->p[i0].t < TRUTH_FROM_S)
        i0++;
    double *t = xcalloc(2 * (size_t)rec->n, sizeof *t), *u = t + rec->n, acc = 0;
    for (unsigned i = i0; i < rec->n; i++, m++) {
        t[m] = rec->p[i].t;
        u[m] = rec->p[i].unread;
        acc += rec->p[i].accepted;
    }
    rec->growth = keptup_slope(t, u, m);
    rec->bound = m > 1 ? share * acc / (t[m - 1] - t[0]) : 0;
    rec->truth = rec->growth <= rec->bound / 2 ? 1 : rec->growth > rec->bound ? 0 : -1;
    free(t);
}

static int load(const char *path, struct recording *rec)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "gzip -dc '%s'", path);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    json_error_t je;
    json_t *root = json_loadf(f, 0, &je);
    int rc = pclose(f);
    if (!root || rc != 0) {
        fprintf(stderr, "%s: %s\n", path, root ? "gzip failed" : je.text);
        json_decref(root);
        return -1;
    }
    memset(rec, 0, sizeof *rec);
    const char *b = strrchr(path, '/');
    snprintf(rec->name, sizeof rec->name, "%s", b ? b + 1 : path);
    double ceiling = json_number_value(json_object_get(root, "ceiling"));
    double rate = json_number_value(json_object_get(root, "rate"));
    rec->testbed = !(ceiling > 0);
    rec->warmup_s = rec->testbed ? TESTBED_WARMUP_S : WARMUP_S;
    if (rec->testbed) {
        snprintf(rec->level, sizeof rec->level, "%.0f/s", rate);
    } else {
        double pct = 100 * rate / ceiling;
        snprintf(rec->level, sizeof rec->level, "%.0f%%", pct);
        rec->truth = fabs(pct - 100) <= 5.0 + 1e-9 ? -1 : pct < 100;
    }
    json_t *tl = json_object_get(root, "timeline");
    rec->p = xcalloc(json_array_size(tl) + 1, sizeof *rec->p);
    if (rec->testbed)
        rec->q = xcalloc(json_array_size(tl) + 1, sizeof *rec->q);
    rec->n = 1;
    size_t i;
    json_t *e;
    json_array_foreach(tl, i, e) {
        struct drift_point *q = &rec->p[rec->n];
        q->t = json_number_value(json_object_get(e, "t"));
        q->accepted = json_number_value(json_object_get(e, "sent"));
        q->read = json_number_value(json_object_get(e, "read"));
        q->unread = json_number_value(json_object_get(e, "unread"));
        q->lat_n = json_number_value(json_object_get(e, "dn"));
        q->lat_mean = json_number_value(json_object_get(e, "dmean"));
        if (rec->q) {
            rec->q[rec->n] = *q;
            rec->q[rec->n].unread = json_number_value(json_object_get(e, "spool"));
        }
        rec->n++;
    }
    json_decref(root);
    if (rec->testbed)
        testbed_truth(rec, 0.05);
    return rec->n > 100 ? 0 : -1;
}

/* The candidates: fixed windows, and the sequential test with each variance and
 * batching (batches of B intervals, at least M of them before a decision); the
 * one the judgements use (C_CHOSEN) runs on drift_rules_default as it is, so the
 * bounds below hold whatever its defaults become. */
enum { C_SLOPE20, C_SLOPE30, C_SLOPE60, C_LAT30, C_LAT60, C_TROUGH30, C_TROUGH60, C_SPRT_POISSON, C_SPRT_BATCH,
       C_SPRT_BATCH_2X8, C_SPRT_FLOORED, C_SPRT_FLOORED_2X8, C_SPRT_SWING, C_SPRT_QUEUE, C_N };
static const char *const cand_name[C_N] = {
    "slope, 20 s window", "slope, 30 s window", "slope, 60 s window", "latency growth, 30 s", "latency growth, 60 s",
    "troughs, 30 s (5 s)", "troughs, 60 s (10 s)", "SPRT, Poisson, 5x4", "SPRT, batch means, 5x4",
    "SPRT, batch means, 2x8", "SPRT, floored, 5x4", "SPRT, floored, 2x8", "SPRT, 2x8, swing before",
    "SPRT, server's queue",
};
#define C_CHOSEN C_SPRT_SWING
static const double cand_window[C_N] = { 20, 30, 60, 30, 60, 30, 60, 0, 0, 0, 0, 0, 0, 0 };

/* The points of a window of w seconds from start (index i0), or, w = 0, up to the
 * sequential test's cap. */
static unsigned window(const struct recording *rec, unsigned i0, double w, double cap)
{
    double end = rec->p[i0].t + (w > 0 ? w : cap + 5);
    unsigned i = i0;
    while (i + 1 < rec->n && rec->p[i + 1].t <= end + 0.5)
        i++;
    return i - i0 + 1;
}

static void judge(int c, const struct drift_rules *r0, const struct drift_point *p, unsigned n, struct drift_result *o)
{
    struct drift_rules r2 = *r0, *r = &r2;
    if (c != C_CHOSEN) {
        r2.batch = c == C_SPRT_BATCH_2X8 || c == C_SPRT_FLOORED_2X8 ? 2 : 5;
        r2.min_batches = c == C_SPRT_BATCH_2X8 || c == C_SPRT_FLOORED_2X8 ? 8 : 4;
    }
    switch (c) {
    case C_SLOPE20: case C_SLOPE30: case C_SLOPE60: drift_slope(r, p, n, o); break;
    case C_LAT30: case C_LAT60: drift_latency(r, p, n, o); break;
    case C_TROUGH30: drift_troughs(r, p, n, 5, o); break;
    case C_TROUGH60: drift_troughs(r, p, n, 10, o); break;
    case C_SPRT_POISSON: drift_sprt(r, p, n, DRIFT_VAR_POISSON, o); break;
    case C_SPRT_BATCH: drift_sprt(r, p, n, DRIFT_VAR_BATCH, o); break;
    case C_SPRT_BATCH_2X8: case C_SPRT_SWING: case C_SPRT_QUEUE: drift_sprt(r, p, n, DRIFT_VAR_BATCH, o); break;
    case C_SPRT_FLOORED: case C_SPRT_FLOORED_2X8: drift_sprt(r, p, n, DRIFT_VAR_FLOORED, o); break;
    }
}

struct score {
    unsigned windows, right, wrong, open;   /* levels away from the knee (truth 0 or 1) */
    double t_sum;                           /* their time to decide */
    unsigned near_up, near_behind, near_open; /* levels near it (truth -1) */
};

#define STRIDE_S 20.0

/* One candidate over one recording's windows, added to *s; its line printed. */
static void replay_one(int c, struct drift_rules *r, const struct recording *q, struct score *s)
{
    /* the server's queue: the same test with the testbed's queue for its backlog */
    const struct drift_point *p = c == C_SPRT_QUEUE ? q->q : q->p;
    unsigned up = 0, behind = 0, open = 0, wins = 0;
    double tsum = 0;
    for (unsigned i0 = 1; p && i0 < q->n; i0++) {
        /* windows start every STRIDE_S after the warm-up; each needs its whole
         * length (the sequential test: its cap) in the recording */
        double t0 = p[i0].t;
        if (t0 < q->warmup_s || fmod(t0 - q->warmup_s + 0.5, STRIDE_S) >= 1.0)
            continue;
        double need = cand_window[c] > 0 ? cand_window[c] : r->cap_s;
        if (p[q->n - 1].t < t0 + need)
            break;
        struct drift_result o;
        /* the staircase's: the swing of the stride before the window, as of the
         * level before a level */
        r->swing = c == C_SPRT_SWING || c == C_SPRT_QUEUE
                       ? drift_swing_kept(p, q->n, t0 - 1 - STRIDE_S, p[i0 - 1].t, r->share, 0) : 0;
        judge(c, r, p + i0 - 1, window(q, i0 - 1, cand_window[c], r->cap_s), &o);
        wins++;
        if (o.d == DRIFT_KEPT_UP)
            up++;
        else if (o.d == DRIFT_BEHIND)
            behind++;
        else
            open++;
        if (o.d == DRIFT_KEPT_UP || o.d == DRIFT_BEHIND)
            tsum += o.at_s;
    }
    r->swing = 0;
    if (!p)
        return;
    if (q->truth < 0) {
        s->near_up += up;
        s->near_behind += behind;
        s->near_open += open;
    } else {
        s->windows += wins;
        s->right += q->truth ? up : behind;
        s->wrong += q->truth ? behind : up;
        s->open += open;
        s->t_sum += tsum;
    }
    printf("%-22s %7s %8u  %u / %u / %u, %.0f s\n", cand_name[c], q->level, wins, up, behind, open,
           up + behind ? tsum / (up + behind) : 0.0);
}

static void print_scores(const char *what, const struct score *sc)
{
    printf("\n%s\n%-22s %8s %6s %6s %6s %10s   %s\n", what, "statistic", "windows", "right", "wrong", "open",
           "mean time", "near the knee: kept up / behind / open");
    for (int c = 0; c < C_N; c++) {
        const struct score *s = &sc[c];
        if (s->windows + s->near_up + s->near_behind + s->near_open)
            printf("%-22s %8u %6u %6u %6u %8.0f s   %u / %u / %u\n", cand_name[c], s->windows, s->right, s->wrong,
                   s->open, s->right + s->wrong ? s->t_sum / (s->right + s->wrong) : 0.0, s->near_up, s->near_behind,
                   s->near_open);
    }
}

static void replay(void **st)
{
    (void)st;
    const char *top = getenv("TOP");
    char pat[4096];
    snprintf(pat, sizeof pat, "%s/tests/fixtures/capacity/*.json.gz", top ? top : ".");
    glob_t g;
    assert_int_equal(glob(pat, 0, NULL, &g), 0);
    struct recording *rec = xcalloc(g.gl_pathc, sizeof *rec);
    unsigned nref = 0, ntb = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        assert_int_equal(load(g.gl_pathv[i], &rec[i]), 0);
        rec[i].testbed ? ntb++ : nref++;
    }
    assert_true(nref >= 9);
    struct drift_rules r;
    drift_rules_default(&r);
    /* the testbed's truths: their own long-run growth */
    for (size_t k = 0; k < g.gl_pathc; k++)
        if (rec[k].testbed)
            printf("testbed %-7s grew %6.2f msg/s from %.0f s to its end (bound %.2f): %s\n", rec[k].level,
                   rec[k].growth, TRUTH_FROM_S, rec[k].bound,
                   rec[k].truth > 0 ? "kept up" : rec[k].truth == 0 ? "behind" : "near the knee");
    struct score sc[2][C_N] = { 0 };
    printf("%-22s %7s %8s  %s\n", "statistic", "level", "windows", "kept up / behind / open, mean time to decide");
    for (int c = 0; c < C_N; c++)
        for (size_t k = 0; k < g.gl_pathc; k++)
            replay_one(c, &r, &rec[k], &sc[rec[k].testbed][c]);
    print_scores("the reference server (near the knee: within 5 % of its ceiling)", sc[0]);
    if (ntb)
        print_scores("the testbed (near the knee: grew by half its bound to its bound)", sc[1]);
    /* a plain run's judgement (verdict.c): the sequential test over the send
     * window, capped at its end, no swing known, from its first interval (as
     * before) or once the backlog has filled (drift_fill_end, as now); over the
     * first 60 s (a short run) and over the whole recording */
    printf("\n%-10s %7s  %-44s %s\n", "plain run", "level", "from the start: 60 s / whole run",
           "once filled: 60 s / whole run");
    for (size_t k = 0; k < g.gl_pathc; k++) {
        const struct recording *q = &rec[k];
        printf("%-10s %7s ", q->testbed ? "testbed" : "reference", q->level);
        for (int filled = 0; filled < 2; filled++)
            for (int w = 0; w < 2; w++) {
                unsigned n = window(q, 1, w ? q->p[q->n - 1].t : 60, 0), i0 = 1;
                if (filled) {
                    double *t = xcalloc(2 * (size_t)n, sizeof *t), *u = t + n;
                    for (unsigned i = 0; i < n; i++) {
                        t[i] = q->p[1 + i].t;
                        u[i] = q->p[1 + i].unread;
                    }
                    i0 += drift_fill_end(&r, t, u, n);
                    n -= i0 - 1;
                    free(t);
                }
                struct drift_rules pr;
                drift_rules_default(&pr);
                pr.cap_s = q->p[i0 + n - 1].t - q->p[i0].t;
                struct drift_result o;
                drift_sprt(&pr, q->p + i0, n, DRIFT_VAR_BATCH, &o);
                printf("%s %-13s", w ? " /" : " ", o.d == DRIFT_KEPT_UP || o.d == DRIFT_BEHIND
                                   ? drift_decision_name(o.d) : "by its slope");
            }
        printf("\n");
    }
    /* the bounds of the statistic the judgements use (drift_rules_default's
     * batching, DRIFT_VAR_BATCH: the fastest with no error on these runs): its
     * errors within its alpha and beta, undecided windows (the cap reached) rare on
     * levels 10 % or more from the ceiling, and decisions in 30 s on average */
    const struct score *s = &sc[0][C_CHOSEN];
    printf("\nchosen: %s (drift_rules_default: batches of %u intervals, at least %u)\n", cand_name[C_CHOSEN], r.batch,
           r.min_batches);
    assert_true(s->windows >= 30);
    assert_true(s->wrong <= 0.05 * s->windows);
    assert_true(s->open <= 0.10 * s->windows);
    assert_true(s->t_sum <= 30.0 * (s->right + s->wrong));
    for (size_t i = 0; i < g.gl_pathc; i++) {
        free(rec[i].p);
        free(rec[i].q);
    }
    free(rec);
    globfree(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixed_window_statistics),
        cmocka_unit_test(sequential_test),
        cmocka_unit_test(fill_end),
        cmocka_unit_test(replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
