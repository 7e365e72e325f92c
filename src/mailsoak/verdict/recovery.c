/* recovery: a profile's spikes, the time until the backlog and the delivery
 * latency came back to their level before each, and the proof of the mail accepted
 * during it (include/verdict/recovery.h). */
#include "verdict/recovery.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "verdict/keptup.h"

/* The share of the spike's excess over the base's level still counted as back: the
 * settling band of a step response. A base measured on a near-empty backlog and a
 * latency of a few ms has a tiny noise of its own, and a machine's noise after the
 * spike must not decide whether a 4 s latency came back. */
#define RECOVERY_BAND 0.05

/* The level of the base stage's points (t0, t1]: the highest backlog plus its noise
 * (3 standard deviations of a count of its mean), the highest latency p50 plus the
 * larger of a tenth and 3 standard deviations of the stage's p50s. 0 when the stage
 * has no point. */
static int base_level(const struct recovery_stage *b, const struct recovery_point *p, unsigned np, double *backlog,
                      double *latency)
{
    unsigned n = 0, nl = 0;
    double sum = 0, hi = 0, lat = -1, ls = 0, ls2 = 0;
    for (unsigned i = 0; i < np; i++) {
        if (p[i].t <= b->t0 || p[i].t > b->t1 + 1e-9)
            continue;
        n++;
        sum += p[i].unread;
        hi = fmax(hi, p[i].unread);
        lat = fmax(lat, p[i].delivery_ms);
        if (p[i].delivery_ms >= 0) {
            nl++;
            ls += p[i].delivery_ms;
            ls2 += p[i].delivery_ms * p[i].delivery_ms;
        }
    }
    if (!n)
        return 0;
    *backlog = hi + 3 * sqrt(sum / n + 1);
    double sd = nl > 1 ? sqrt(fmax(0, (ls2 - ls * ls / nl) / (nl - 1))) : 0;
    *latency = lat < 0 ? -1 : lat + fmax(0.1 * lat, 3 * sd);
    return 1;
}

/* Whether the base stage held its own load: its backlog's least-squares slope
 * against kept up's bound (5 % of its rate, or the backlog's noise). A base that
 * was falling behind gives no steady level to come back to, and the line says so. */
static void base_growth(const struct recovery_stage *b, const struct recovery_point *p, unsigned np,
                        struct recovery_spike *s)
{
    double *t = xcalloc(np + 1, sizeof *t), *y = xcalloc(np + 1, sizeof *y), sum = 0;
    unsigned n = 0;
    for (unsigned i = 0; i < np; i++)
        if (p[i].t > b->t0 && p[i].t <= b->t1 + 1e-9) {
            t[n] = p[i].t;
            y[n] = p[i].unread;
            sum += y[n++];
        }
    s->base_steady = -1;
    if (n >= 3 && t[n - 1] > t[0]) {
        const struct keptup_rules r = { .growth_share = 0.05 };
        s->base_growth = keptup_slope(t, y, n);
        s->base_steady = s->base_growth <= keptup_bound(&r, b->rate, sum / n, t[n - 1] - t[0]);
    }
    free(t);
    free(y);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The points' usual spacing: the median gap between consecutive ones (the run's
 * interval when the controller kept time). */
static double spacing(const struct recovery_point *p, unsigned np)
{
    if (np < 2)
        return 0;
    double *d = xcalloc(np, sizeof *d);
    for (unsigned i = 1; i < np; i++)
        d[i - 1] = p[i].t - p[i - 1].t;
    qsort(d, np - 1, sizeof *d, cmp_double);
    double m = d[(np - 1) / 2];
    free(d);
    return m;
}

/* The spike's end until the next spike begins (exclusive of its interval ends), or
 * every point left: the send window's last interval may end after the stage's end. */
static int observed(const struct recovery_spike *s, double until, const struct recovery_point *q)
{
    return q->t > s->start_s && (until < 0 || q->t <= until + 1e-9);
}

static void measure(const struct recovery_stage *st, unsigned nst, const struct recovery_point *p, unsigned np,
                    unsigned k, struct recovery_spike *s)
{
    const struct recovery_stage *b = &st[k - 1], *sp = &st[k];
    memset(s, 0, sizeof *s);
    s->stage = k;
    s->base_rate = b->rate;
    s->spike_rate = sp->rate;
    s->start_s = sp->t0;
    s->end_s = sp->t1;
    s->backlog_s = s->latency_s = s->from_s = -1;
    s->recovered = -1;
    s->has_base = base_level(b, p, np, &s->base_backlog, &s->base_latency_ms);
    base_growth(b, p, np, s);
    double until = -1;
    for (unsigned j = k + 2; j < nst; j++)
        if (st[j].rate > st[j - 1].rate) {
            until = st[j].t0;
            break;
        }
    for (unsigned i = 0; i < np; i++)
        if (observed(s, until, &p[i])) {
            s->peak_backlog = fmax(s->peak_backlog, p[i].unread);
            s->peak_latency_ms = fmax(s->peak_latency_ms, p[i].delivery_ms);
        }
    if (!s->has_base)
        return;
    /* back: within the base's level, or within the band of the spike's excess over it */
    double back_backlog = s->base_backlog + RECOVERY_BAND * fmax(0, s->peak_backlog - s->base_backlog);
    double back_latency = s->base_latency_ms < 0 ? -1
                        : s->base_latency_ms + RECOVERY_BAND * fmax(0, s->peak_latency_ms - s->base_latency_ms);
    /* back from the first interval end after which it stayed back: the settling
     * time. The latency of the mail delivered lags the backlog (mail accepted early
     * in the spike is delivered after it), so a first crossing could be before its
     * peak. */
    double last = s->end_s;
    for (unsigned i = 0; i < np; i++) {
        if (!observed(s, until, &p[i]) || p[i].t < s->end_s - 1e-9)
            continue;
        last = p[i].t;
        if (p[i].unread > back_backlog)
            s->backlog_s = -1;
        else if (s->backlog_s < 0)
            s->backlog_s = p[i].t - s->end_s;
        /* an interval that delivered nothing says nothing of the latency; with no
         * latency before the spike, the backlog alone is judged */
        if (back_latency >= 0 && p[i].delivery_ms > back_latency)
            s->latency_s = -1;
        else if (s->latency_s < 0 && (back_latency < 0 || p[i].delivery_ms >= 0))
            s->latency_s = p[i].t - s->end_s;
    }
    s->recovered = s->backlog_s >= 0 && s->latency_s >= 0;
    s->recovery_s = s->recovered ? fmax(s->backlog_s, s->latency_s) : last - s->end_s;
    if (!s->recovered)
        return;
    /* the interval end before, still not back: the recovery lies between the two, and
     * a gap wider than the run's interval is the controller's lateness, not the server's */
    for (unsigned i = 0; i < np; i++)
        if (observed(s, until, &p[i]) && p[i].t >= s->end_s - 1e-9 && p[i].t - s->end_s < s->recovery_s - 1e-9)
            s->from_s = p[i].t - s->end_s;
    if (s->from_s >= 0) {
        double gap = s->recovery_s - s->from_s, usual = spacing(p, np);
        s->late = usual > 0 && gap > 1.5 * usual;
    }
}

unsigned recovery_find(const struct recovery_stage *st, unsigned nst, const struct recovery_point *p, unsigned np,
                       struct recovery_spike *out, unsigned max)
{
    unsigned n = 0;
    for (unsigned k = 1; k + 1 < nst && n < max; k++)
        if (st[k].rate > st[k - 1].rate && st[k + 1].rate < st[k].rate)
            measure(st, nst, p, np, k, &out[n++]);
    return n;
}

struct span {
    const struct ledger *l;
    uint32_t t0_ms, t1_ms;
    struct recovery_proof *o;
};

static void count_one(void *arg, uint64_t seq, const struct ledger_entry *e)
{
    (void)seq;
    struct span *s = arg;
    enum pending_reason why;
    enum outcome v = ledger_entry_outcome(s->l, e, &why);
    if (v > OUTCOME_PENDING || e->accepted_ms < s->t0_ms || e->accepted_ms >= s->t1_ms)
        return;
    struct recovery_proof *o = s->o;
    o->accepted++;
    o->delivered += v == OUTCOME_DELIVERED;
    o->duplicated += v == OUTCOME_DUPLICATED;
    o->corrupted += v == OUTCOME_CORRUPTED;
    o->lost += v == OUTCOME_LOST;
    o->pending += v == OUTCOME_PENDING;
}

void recovery_count(const struct ledger *l, double t0, double t1, struct recovery_proof *out)
{
    memset(out, 0, sizeof *out);
    /* ms on the ledger's 32-bit clock: an open end (INFINITY) is its last */
    struct span s = { l, (uint32_t)fmin(fmax(0, t0 * 1000), UINT32_MAX), (uint32_t)fmin(fmax(0, t1 * 1000), UINT32_MAX),
                      out };
    ledger_each(l, count_one, &s);
}
