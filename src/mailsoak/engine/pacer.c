/* pacer: when the next paced event is due, on the run's clock. */
#include "engine/pacer.h"

#include <math.h>

void pacer_init(struct pacer *p, double rate, uint64_t ramp_ns, uint64_t t0)
{
    p->rate = rate;
    p->ramp = (double)ramp_ns / 1e9;
    p->t0 = t0;
    p->n = 0;
}

uint64_t pacer_due(const struct pacer *p)
{
    double n = (double)p->n, t;
    if (p->ramp > 0 && n < p->rate * p->ramp / 2)
        t = sqrt(2 * p->ramp * n / p->rate);
    else
        t = p->ramp / 2 + n / p->rate;
    return p->t0 + (uint64_t)(t * 1e9);
}
