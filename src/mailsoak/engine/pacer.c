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

void pacer_stages(struct pacer *p, const struct rate_stages *st, double share)
{
    p->stages = st;
    p->share = share;
    for (unsigned i = 0; i < st->n; i++)
        if (st->rate[i] * share > p->rate)
            p->rate = st->rate[i] * share;   /* pacer_on: any stage with arrivals */
}

/* The real time (s since t0) of operational time s through the stages' cumulative
 * rate; past the last stage, an hour later at the last rate that had arrivals
 * (after the send window: the run never takes them). */
static double stages_time(const struct pacer *p, double s)
{
    double t = 0, L = 0, last = 0;
    for (unsigned i = 0; i < p->stages->n; i++) {
        double d = (double)p->stages->dur_ns[i] / 1e9, r = p->stages->rate[i] * p->share;
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
