/* phase: when each phase of a run ends and what the sweep sees (phase.c), for the
 * controller (run.c). */
#ifndef MS_RUN_PHASE_H
#define MS_RUN_PHASE_H

#include <stdint.h>

#include "run/controller.h"
#include "verdict/sweep.h"

/* The workers' phase set (release) and each worker's loop woken. */
void run_set_phase(struct run *r, struct controller *ct, int phase);
/* What the sweep sees now: the readers' atomics and the server's queue. */
struct sweep_seen run_sweep_seen(struct controller *ct, uint64_t now);
/* The phase that follows phase at now (phase_start: when it began); begins the
 * sweep's passes when the drain ends. */
int run_next_phase(struct controller *ct, int phase, uint64_t now, uint64_t phase_start);

#endif
