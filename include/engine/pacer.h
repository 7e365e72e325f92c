/* pacer: a schedule of arrivals at a target rate with a linear ramp, so a worker's
 * senders send (and connect) at its share of the configured rates. The schedule is
 * open-loop: it depends on the clock and the seed only, never on the server, so a
 * server that slows down does not lower the offered rate (it makes arrivals wait,
 * which the senders count as late: the tester, not the server, held them).
 *
 * Arrivals are a process of unit rate in "operational time" s, mapped to real time
 * through the ramp's cumulative rate L(t) = rate t^2 / (2 ramp) while ramping and
 * rate (t - ramp / 2) after (the inverse: t = sqrt(2 ramp s / rate), then
 * ramp / 2 + s / rate). Constant arrivals step s by 1 (event n at n / rate once
 * ramped); exponential arrivals step it by an Exp(1) draw, which makes them a
 * Poisson process of the ramp's rate (the time change of a non-homogeneous Poisson
 * process), as SPECmail2001 prescribes for SMTP arrivals. A profile of stages
 * (smtp.profile) maps s the same way through its piecewise-linear cumulative rate:
 * each stage at its own rate, one after another with no ramp, and no arrival after
 * the last. The stages' durations are a stage_clock's: the controller may end a
 * stage early (smtp.profile_end = decided), and the pacers of every worker follow
 * the shortened schedule from then on. */
#ifndef MS_ENGINE_PACER_H
#define MS_ENGINE_PACER_H

#include <stdatomic.h>
#include <stdint.h>

#include "lib/rng.h"
#include "lib/units.h"

enum arrivals { ARRIVALS_CONSTANT, ARRIVALS_EXPONENTIAL };

/* A profile's stages as they run: their rates as planned, their durations atomics
 * that only the controller writes (ending a stage early), read by every worker's
 * pacer. A stage ended early keeps the time it had; the ones after it move up. */
struct stage_clock {
    const struct rate_stages *plan;
    _Atomic uint64_t dur_ns[RATE_STAGES_MAX];
};
void stage_clock_init(struct stage_clock *c, const struct rate_stages *plan);
uint64_t stage_clock_dur(const struct stage_clock *c, unsigned i);
uint64_t stage_clock_start(const struct stage_clock *c, unsigned i);   /* ns since the run's start */
uint64_t stage_clock_total(const struct stage_clock *c);
/* The stage that holds ns since the start, or -1 past the last. */
int stage_clock_at(const struct stage_clock *c, uint64_t ns);
/* Ends stage i at ns since the start (not before its start, never later than
 * planned): the next begins then. last: no stage after it either, the send window
 * ends at ns. */
void stage_clock_end(struct stage_clock *c, unsigned i, uint64_t ns, int last);
/* The last stage that ran for some time (the one a run's last moments belong to). */
unsigned stage_clock_last(const struct stage_clock *c);

struct pacer {
    double rate;                     /* per second; 0 = unpaced */
    double ramp;                     /* seconds */
    uint64_t t0, n;                  /* n: arrivals taken */
    double s;                        /* the next arrival, in operational time */
    int process;                     /* enum arrivals */
    struct rng rng;                  /* exponential draws: seeded, so a run replays */
    const struct stage_clock *stages;   /* NULL, or the profile this pacer follows */
    double share;                    /* of each stage's rate: this pacer's (its worker's) */
};

void pacer_init(struct pacer *p, double rate, uint64_t ramp_ns, uint64_t t0, int process, uint64_t seed);
/* Follow a profile's stages (kept by the caller) at share of each stage's rate,
 * instead of the rate and ramp pacer_init was given. */
void pacer_stages(struct pacer *p, const struct stage_clock *st, double share);
uint64_t pacer_due(const struct pacer *p);   /* monotonic ns */
void pacer_take(struct pacer *p);
static inline int pacer_on(const struct pacer *p) { return p->rate > 0; }
/* Arrivals of p's schedule due before `before` that were not taken (drawn on a copy:
 * p is unchanged). At most `cap`, so a schedule far behind costs bounded time. */
uint64_t pacer_owed(const struct pacer *p, uint64_t before, uint64_t cap);

#endif
