/* pacer: when the next paced arrival is due, on the run's clock (see pacer.h). */
#include "engine/pacer.h"

#include <math.h>

/* The gap to the next arrival in operational time: 1, or an Exp(1) draw. */
static double gap(struct pacer *p)
{
    if (p->process != ARRIVALS_EXPONENTIAL)
        return 1;
    return -log1p(-rng_unit(&p->rng));   /* rng_unit < 1: finite */
}

void pacer_init(struct pacer *p, double rate, uint64_t ramp_ns, uint64_t t0, int process, uint64_t seed)
{
    p->rate = rate;
    p->ramp = (double)ramp_ns / 1e9;
    p->t0 = t0;
    p->n = 0;
    p->process = process;
    p->stages = NULL;
    p->share = 1;
    rng_seed(&p->rng, seed);
    p->s = 0;
    /* a Poisson process has no arrival at 0: its first comes after one gap */
    if (process == ARRIVALS_EXPONENTIAL)
        p->s = gap(p);
}

void stage_clock_init(struct stage_clock *c, const struct rate_stages *plan)
{
    c->plan = plan;
    for (unsigned i = 0; i < RATE_STAGES_MAX; i++)
        atomic_init(&c->dur_ns[i], i < plan->n ? plan->dur_ns[i] : 0);
}

uint64_t stage_clock_dur(const struct stage_clock *c, unsigned i)
{
    return i < c->plan->n ? atomic_load_explicit(&c->dur_ns[i], memory_order_relaxed) : 0;
}

uint64_t stage_clock_start(const struct stage_clock *c, unsigned i)
{
    uint64_t t = 0;
    for (unsigned k = 0; k < i && k < c->plan->n; k++)
        t += stage_clock_dur(c, k);
    return t;
}

uint64_t stage_clock_total(const struct stage_clock *c) { return stage_clock_start(c, c->plan->n); }

int stage_clock_at(const struct stage_clock *c, uint64_t ns)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < c->plan->n; i++) {
        t += stage_clock_dur(c, i);
        if (ns < t)
            return (int)i;
    }
    return -1;
}

void stage_clock_end(struct stage_clock *c, unsigned i, uint64_t ns, int last)
{
    if (i >= c->plan->n)
        return;
    uint64_t s = stage_clock_start(c, i), d = ns > s ? ns - s : 0;
    if (d < stage_clock_dur(c, i))
        atomic_store_explicit(&c->dur_ns[i], d, memory_order_relaxed);
    for (unsigned k = i + 1; last && k < c->plan->n; k++)
        atomic_store_explicit(&c->dur_ns[k], 0, memory_order_relaxed);
}

unsigned stage_clock_last(const struct stage_clock *c)
{
    unsigned last = 0;
    for (unsigned i = 0; i < c->plan->n; i++)
        if (stage_clock_dur(c, i))
            last = i;
    return last;
}

void pacer_stages(struct pacer *p, const struct stage_clock *st, double share)
{
    p->stages = st;
    p->share = share;
    for (unsigned i = 0; i < st->plan->n; i++)
        if (st->plan->rate[i] * share > p->rate)
            p->rate = st->plan->rate[i] * share;   /* pacer_on: any stage with arrivals */
}

/* The real time (s since t0) of operational time s through the stages' cumulative
 * rate; past the last stage, an hour later at the last rate that had arrivals
 * (after the send window: the run never takes them). */
static double stages_time(const struct pacer *p, double s)
{
    double t = 0, L = 0, last = 0;
    for (unsigned i = 0; i < p->stages->plan->n; i++) {
        double d = (double)stage_clock_dur(p->stages, i) / 1e9, r = p->stages->plan->rate[i] * p->share;
        if (r > 0 && s < L + r * d)
            return t + (s - L) / r;
        L += r * d;
        t += d;
        if (r > 0)
            last = r;
    }
    return t + 3600 + (last > 0 ? (s - L) / last : 0);
}

uint64_t pacer_due(const struct pacer *p)
{
    double t;
    if (p->stages) {
        return p->t0 + (uint64_t)(stages_time(p, p->s) * 1e9);
    }
    if (p->ramp > 0 && p->s < p->rate * p->ramp / 2)
        t = sqrt(2 * p->ramp * p->s / p->rate);
    else
        t = p->ramp / 2 + p->s / p->rate;
    return p->t0 + (uint64_t)(t * 1e9);
}

void pacer_take(struct pacer *p)
{
    p->n++;
    p->s += gap(p);
}

uint64_t pacer_owed(const struct pacer *p, uint64_t before, uint64_t cap)
{
    struct pacer q = *p;
    uint64_t n = 0;
    if (!pacer_on(p))
        return 0;
    while (n < cap && pacer_due(&q) < before) {
        pacer_take(&q);
        n++;
    }
    return n;
}
