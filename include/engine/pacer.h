/* pacer: a schedule of events at a target rate with a linear ramp, so a worker's
 * senders send (and connect) at its share of the configured rates. Event n is due
 * at sqrt(2 ramp n / rate) while ramping, ramp/2 + n/rate after. */
#ifndef MS_ENGINE_PACER_H
#define MS_ENGINE_PACER_H

#include <stdint.h>

struct pacer {
    double rate;                     /* per second; 0 = unpaced */
    double ramp;                     /* seconds */
    uint64_t t0, n;
};

void pacer_init(struct pacer *p, double rate, uint64_t ramp_ns, uint64_t t0);
uint64_t pacer_due(const struct pacer *p);   /* monotonic ns */
static inline void pacer_take(struct pacer *p) { p->n++; }
static inline int pacer_on(const struct pacer *p) { return p->rate > 0; }

#endif
