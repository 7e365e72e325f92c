/* recovery: a profile's spikes, the time until the backlog and the delivery
 * latency came back to their level before each, and the proof of the mail accepted
 * during it (include/verdict/recovery.h). */
#include "verdict/recovery.h"

#include <math.h>
#include <string.h>

/* The level of the base stage's points (t0, t1]: the highest backlog plus its noise
 * (3 standard deviations of a count of its mean), the highest latency p50 plus a
 * tenth. 0 when the stage has no point. */
static int base_level(const struct recovery_stage *b, const struct recovery_point *p, unsigned np, double *backlog,
                      double *latency)
{
    unsigned n = 0;
    double sum = 0, hi = 0, lat = -1;
    for (unsigned i = 0; i < np; i++) {
        if (p[i].t <= b->t0 || p[i].t > b->t1 + 1e-9)
            continue;
        n++;
        sum += p[i].unread;
        hi = fmax(hi, p[i].unread);
        lat = fmax(lat, p[i].delivery_ms);
    }
    if (!n)
        return 0;
    *backlog = hi + 3 * sqrt(sum / n + 1);
    *latency = lat < 0 ? -1 : 1.1 * lat;
    return 1;
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
    s->backlog_s = s->latency_s = -1;
    s->recovered = -1;
    s->has_base = base_level(b, p, np, &s->base_backlog, &s->base_latency_ms);
    /* until the next spike begins, or the send window ends */
    double until = st[nst - 1].t1;
    for (unsigned j = k + 2; j < nst; j++)
        if (st[j].rate > st[j - 1].rate) {
            until = st[j].t0;
            break;
        }
    double last = s->end_s;
    for (unsigned i = 0; i < np; i++) {
        if (p[i].t <= s->start_s || p[i].t > until + 1e-9)
            continue;
        s->peak_backlog = fmax(s->peak_backlog, p[i].unread);
        s->peak_latency_ms = fmax(s->peak_latency_ms, p[i].delivery_ms);
        if (p[i].t < s->end_s - 1e-9)
            continue;
        last = p[i].t;
        if (!s->has_base)
            continue;
        if (s->backlog_s < 0 && p[i].unread <= s->base_backlog)
            s->backlog_s = p[i].t - s->end_s;
        /* an interval that delivered nothing says nothing of the latency; with no
         * latency before the spike, the backlog alone is judged */
        if (s->latency_s < 0 && (s->base_latency_ms < 0 || (p[i].delivery_ms >= 0 &&
                                                            p[i].delivery_ms <= s->base_latency_ms)))
            s->latency_s = p[i].t - s->end_s;
    }
    if (!s->has_base)
        return;
    s->recovered = s->backlog_s >= 0 && s->latency_s >= 0;
    s->recovery_s = s->recovered ? fmax(s->backlog_s, s->latency_s) : last - s->end_s;
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
