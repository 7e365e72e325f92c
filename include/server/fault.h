/* fault: when a configured fault strikes (fault.c): the seeded generator every
 * draw comes from, the distributions, the counters, and the matching of stages,
 * store events and addresses. */
#ifndef MS_SERVER_FAULT_H
#define MS_SERVER_FAULT_H

#include <stdint.h>

#include "lib/opts.h"
#include "server/config.h"

/* splitmix64 (lib/rng.h): small, seedable, and the same on every machine, so a run
 * replays. */
struct srv_rng { uint64_t s; };
void srv_rng_seed(struct srv_rng *r, uint64_t seed, uint64_t stream);
uint64_t srv_rng_next(struct srv_rng *r);
double srv_rng_unit(struct srv_rng *r);   /* [0, 1) */
uint64_t srv_dist_draw(const struct srv_dist *d, struct srv_rng *r);

/* Counters of how often each fault's stage was seen and how often it struck. */
struct srv_fault_state {
    uint64_t *seen, *fired;          /* per cmd fault */
    uint64_t rseen[SE_COUNT], rfired[SE_COUNT];
};
/* The first fault of that stage that strikes now, or NULL. */
const struct srv_cmd_fault *srv_fault_pick(const struct srv_faults *f, struct srv_fault_state *st,
                                           enum srv_stage stage, struct srv_rng *r);
/* Whether a store rule strikes on this event (counts it). */
int srv_rule_strikes(const struct srv_rule *rule, uint64_t *seen, uint64_t *fired, struct srv_rng *r);
int srv_lock_window(const struct srv_store_faults *f, uint64_t since_start_ns);
/* Matches an address against a list of globs (case-insensitive). */
int srv_addr_matches(const struct strlist *globs, const char *addr);

#endif
