/* step: a capacity step's steady window cut from its run's timeline (read by
 * result/result.h), and its judgement (include/capacity/step.h). */
#include "capacity/step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result/latency.h"
#include "analyse/results.h"
#include "lib/alloc.h"
#include "settings/config.h"
#include "verdict/judge.h"
#include "verdict/keptup.h"

/* One steady interval's counts, error classes and latency histograms added to f.
 * 0, or -1 with the reason in err (histograms that do not add up). */
static int add_interval(struct step_figures *f, const struct result *r, size_t i, char *err, size_t errlen)
{
    const struct result_interval *e = &r->intervals[i];
    f->intervals++;
    f->c.sent += e->c.sent;
    f->c.read += e->c.read;
    f->c.errors += e->c.errors;
    f->c.smtp_sessions += e->c.smtp_sessions;
    f->c.pop3_sessions += e->c.pop3_sessions;
    f->c.arrivals += e->c.arrivals;
    f->c.late_busy += e->c.late_busy;
    f->c.late_engine += e->c.late_engine;
    f->c.left_behind += e->c.left_behind;
    f->c.empty_visits += e->c.empty_visits;
    f->c.full_visits += e->c.full_visits;
    f->c.idle_syncs += e->c.idle_syncs;
    for (unsigned k = 0; k < e->nerr; k++)
        errs_add(f->err, &f->nerr, e->err[k].name, e->err[k].count);
    return result_interval_hists(r, i, f->lat, err, errlen);
}

int step_read(const struct result *r, double start_s, struct step_figures *f, char *err, size_t errlen)
{
    return step_read_span(r, start_s, INFINITY, f, err, errlen);
}

/* The window's slopes and rates, from its samples. */
static void window_trends(struct step_figures *f, double start, double end, const double *t, const double *u,
                          unsigned np, const double *tq, const double *q, unsigned nq, const double *tm,
                          const double *m, unsigned nm)
{
    f->window_s = end - start;
    if (f->window_s > 0) {
        f->offered = (double)f->c.arrivals / f->window_s;
        f->accepted = (double)f->c.sent / f->window_s;
        f->delivered = (double)f->c.read / f->window_s;
    }
    struct keptup_backlog b;
    keptup_backlog(t, u, np, &b);
    f->unread_slope = b.slope;
    f->unread_half[0] = b.half[0];
    f->unread_half[1] = b.half[1];
    f->unread_mean = b.mean;
    f->unread_n = np;
    /* a count repeats itself between its readings (queue_interval, walk_interval): two
     * different readings at least make a slope */
    f->has_spool = nq >= 2;
    f->has_store = nm >= 2;
    f->spool_slope = keptup_slope(tq, q, nq);
    f->store_slope = keptup_slope(tm, m, nm);
}

int step_read_span(const struct result *r, double start_s, double end_s, struct step_figures *f, char *err,
                   size_t errlen)
{
    memset(f, 0, sizeof *f);
    if (!r->has_timeline || !r->has_summary) {
        snprintf(err, errlen, "not a result of mailsoak run (no timeline or summary)");
        return -1;
    }
    f->sent = r->c.sent;
    f->lost = r->lo.lost;
    f->duplicated = r->lo.duplicated;
    f->corrupted = r->lo.corrupted;
    f->pending = r->lo.pending;
    f->settled = r->settled;
    f->interrupted = r->interrupted;

    /* the window: send intervals that began at or after start_s; the backlog
     * is sampled at each one's end, and at the end of the one before the first */
    size_t n = r->nintervals;
    double *t = xcalloc(n + 1, sizeof *t), *u = xcalloc(n + 1, sizeof *u);
    double *q = xcalloc(n + 1, sizeof *q), *m = xcalloc(n + 1, sizeof *m);
    unsigned np = 0, nq = 0, nm = 0;
    double *tq = xcalloc(n + 1, sizeof *tq), *tm = xcalloc(n + 1, sizeof *tm);
    double prev_t = 0, start = -1, end = 0;
    int prev_unread_ok = 0;
    double prev_unread = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        const struct result_interval *e = &r->intervals[i];
        if (!e->has_t) {
            snprintf(err, errlen, "timeline[%zu]: no time", i);
            rc = -1;
            break;
        }
        double te = e->t;
        int steady = !strcmp(e->phase, "send") && prev_t >= start_s - 1e-6 && te <= end_s + 1e-6;
        if (steady) {
            if (!e->has_unread || !e->has_arrivals) {
                snprintf(err, errlen, "timeline[%zu]: no unread or arrivals (a file of an older mailsoak)", i);
                rc = -1;
                break;
            }
            if (start < 0) {
                start = prev_t;
                if (prev_unread_ok) {
                    t[np] = prev_t;
                    u[np++] = prev_unread;
                }
            }
            end = te;
            if ((rc = add_interval(f, r, i, err, errlen)) < 0)
                break;
            t[np] = te;
            u[np++] = (double)e->unread;
            if (e->has_spool) {
                tq[nq] = te;
                q[nq++] = e->spool;
            }
            if (e->has_store) {
                tm[nm] = te;
                m[nm++] = e->store_messages;
            }
        }
        prev_unread_ok = e->has_unread;
        prev_unread = prev_unread_ok ? (double)e->unread : 0;
        prev_t = te;
    }
    if (rc == 0 && f->intervals)
        window_trends(f, start, end, t, u, np, tq, q, nq, tm, m, nm);
    free(t);
    free(u);
    free(q);
    free(m);
    free(tq);
    free(tm);
    return rc;
}

void step_rules_specmail(struct step_rules *r, double queue_growth)
{
    memset(r, 0, sizeof *r);
    r->queue_growth = queue_growth;
    r->g.integrity = 1;
    r->g.errors = 1;
    gates_add_specmail(&r->g);
}

int step_rules_from_config(struct step_rules *r, const struct config *cfg, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->queue_growth = cfg->capacity.queue_growth;
    if (gates_from_config(cfg, &r->g, err, errlen) < 0)
        return -1;
    r->g.integrity = 1;              /* mail accepted and read, whatever the preset */
    gates_add_specmail(&r->g);
    return 0;
}

int step_is_command(unsigned k)
{
    const char *n = lat_names[k];
    return (!strncmp(n, "smtp.", 5) || !strncmp(n, "pop3.", 5)) && strcmp(n, "smtp.message");
}

int step_worst_command(const struct step_figures *f, double pct)
{
    int worst = -1;
    uint64_t w = 0;
    for (unsigned k = 0; k < LAT_COUNT; k++) {
        if (!step_is_command(k) || !f->lat[k].count)
            continue;
        uint64_t p = hist_percentile(&f->lat[k], pct);
        if (worst < 0 || p > w) {
            worst = (int)k;
            w = p;
        }
    }
    return worst;
}

static void check(struct step_judgement *j, const char *name, double value, const char *op, double bound,
                  const char *unit)
{
    if (j->n >= STEP_CHECKS_MAX)
        return;
    struct step_check *c = &j->v[j->n];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->value = value;
    c->bound = bound;
    c->op = op;
    c->unit = unit;
    c->pass = !strcmp(op, "=") ? value == bound : !strcmp(op, ">") ? value > bound
            : !strcmp(op, ">=") ? value >= bound : value <= bound;
    if (!c->pass && j->first_failed < 0)
        j->first_failed = (int)j->n;
    j->n++;
}

static void invalid(struct step_judgement *j, enum step_fix fix, const char *why)
{
    j->verdict = STEP_INVALID;
    j->fix = fix;
    snprintf(j->why, sizeof j->why, "%s", why);
}

void step_judge(const struct step_rules *r, const struct step_figures *f, unsigned ruled_out, struct step_judgement *j)
{
    memset(j, 0, sizeof *j);
    j->first_failed = -1;
    char why[240];
    if (f->interrupted) {
        invalid(j, FIX_NONE, "the step's run was interrupted");
        return;
    }
    if (!f->intervals || !(f->window_s > 0)) {
        invalid(j, FIX_NONE, "no steady interval after the ramp (run.interval longer than the window?)");
        return;
    }
    const struct counters *c = &f->c;
    if (judge_held_back(c->late_engine, c->arrivals)) {
        snprintf(why, sizeof why, "the tester's engine ran late on its schedule: %llu of %llu arrivals started over "
                 "smtp.late_after late (a CPU short: more run.workers, or a quieter machine)",
                 (unsigned long long)c->late_engine, (unsigned long long)c->arrivals);
        invalid(j, FIX_NONE, why);
        return;
    }
    if (judge_held_back(c->late_busy, c->arrivals) && !(ruled_out & 1u << FIX_SENDERS)) {
        snprintf(why, sizeof why, "%llu of %llu arrivals waited for a free sender", (unsigned long long)c->late_busy,
                 (unsigned long long)c->arrivals);
        invalid(j, FIX_SENDERS, why);
        return;
    }
    /* the gates over the window: its counts, histograms and error classes (the
     * ledger's counts are the whole run's, below) */
    struct judge_figures in = {
        .c = c, .lo = NULL, .settled = -1, .senders = 1, .readers = 1, .lat = f->lat, .err = f->err, .nerr = f->nerr,
    };
    struct gate_judgement gj;
    judge(&r->g, &in, &gj, NULL);
    /* readers the server keeps waiting are the server's limit, never the tester's */
    int pop3_slow = 0;
    for (unsigned i = 0; i < gj.n; i++)
        pop3_slow |= !gj.v[i].pass && (!strncmp(gj.v[i].name, "pop3.", 5) || !strncmp(gj.v[i].name, "imap.", 5));
    /* the backlog's growth, and whose it is: the judgement a plain run makes too */
    struct keptup_rules kr = { .growth_share = r->queue_growth };
    struct keptup_input ki = {
        .b = { .n = f->unread_n, .span_s = f->window_s, .slope = f->unread_slope,
               .half = { f->unread_half[0], f->unread_half[1] }, .mean = f->unread_mean },
        .accepted_rate = f->accepted, .visits = c->pop3_sessions + c->idle_syncs, .left_behind = c->left_behind,
        .empty_visits = c->empty_visits, .full_visits = c->full_visits, .has_spool = f->has_spool,
        .has_store = f->has_store,
        .spool_slope = f->spool_slope, .store_slope = f->store_slope, .server_slows_readers = pop3_slow,
        .readers_ruled_out = !!(ruled_out & 1u << FIX_READERS),
    };
    struct keptup_result kept;
    keptup_judge(&kr, &ki, &kept);
    int gate_failed = 0;
    for (unsigned i = 0; i < gj.n; i++)
        gate_failed |= !gj.v[i].pass;
    if (kept.outcome == KEPTUP_TESTER && (!(ruled_out & STEP_READERS_BY_GATES) || gate_failed)) {
        invalid(j, FIX_READERS, kept.why);
        gate_judgement_free(&gj);
        return;
    }
    check(j, "lost", (double)f->lost, "=", 0, "");
    check(j, "duplicated", (double)f->duplicated, "=", 0, "");
    check(j, "corrupted", (double)f->corrupted, "=", 0, "");
    if (ruled_out & 1u << FIX_SENDERS)
        check(j, "accepted", f->accepted, ">=", 0.95 * f->offered, "msg/s");
    else
        check(j, "accepted", f->accepted, ">", 0, "msg/s");
    /* the growth check's index; none when the caller judges the growth */
    unsigned growth = STEP_CHECKS_MAX;
    if (!(ruled_out & STEP_GROWTH_ELSEWHERE)) {
        growth = j->n;
        check(j, "queue growth", f->unread_slope, "<=", kept.bound, "msg/s");
    }
    for (unsigned i = 0; i < gj.n; i++) {
        const struct gate_result *g = &gj.v[i];
        check(j, g->name, g->value, g->op, g->bound, g->unit);
    }
    gate_judgement_free(&gj);
    j->verdict = j->first_failed < 0 ? STEP_PASS : STEP_FAIL;
    /* a swing is a window's question; a growth judged elsewhere is not this window's */
    if (ruled_out & (1u << FIX_WINDOW | STEP_GROWTH_ELSEWHERE))
        return;
    for (unsigned i = 0; i < j->n; i++)
        if (!j->v[i].pass && i != growth)
            return;                  /* failed on something a longer window would not change */
    if (kept.swing) {
        snprintf(why, sizeof why, "the backlog swung, %+.1f msg/s in the window's first half and %+.1f in its second "
                 "(bound %.1f): a swing, not yet a trend (run again with a longer window)", f->unread_half[0],
                 f->unread_half[1], kept.half_bound);
        invalid(j, FIX_WINDOW, why);
    }
}

unsigned step_readers_needed(double accepted, double delivered, unsigned readers)
{
    double more = 2.0 * readers;
    if (delivered > 0)
        more = fmin(more, ceil(1.25 * readers * accepted / delivered));
    return more < readers + 1.0 ? readers + 1 : (unsigned)more;
}

double step_server_delivered(const struct step_figures *f, int on_queue)
{
    return on_queue && f->has_spool ? fmax(0, f->accepted - f->spool_slope) : f->delivered;
}

int step_fix_futile(enum step_fix fix, const struct step_figures *before, unsigned n_before,
                    const struct step_figures *after, unsigned n_after)
{
    if (fix == FIX_NONE || fix == FIX_WINDOW || n_after <= n_before)
        return 0;
    return fix == FIX_SENDERS ? after->accepted < 1.05 * before->accepted : after->delivered < 1.05 * before->delivered;
}

const char *step_check_describe(const struct step_check *c, char *buf, size_t n)
{
    const char *op = c->op;
    if (!c->unit[0])
        snprintf(buf, n, "%s %.0f, must be %s %.0f", c->name, c->value, op, c->bound);
    else
        snprintf(buf, n, "%s %.*f %s, must be %s %.*f %s", c->name, c->value < 100 ? 2 : 0, c->value, c->unit, op,
                 c->bound < 100 ? 2 : 0, c->bound, c->unit);
    return buf;
}
