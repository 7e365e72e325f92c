/* phase: when each phase of a run ends and what the sweep sees (phase.c), for the
 * controller (run.c). */
#ifndef MS_RUN_PHASE_H
#define MS_RUN_PHASE_H

#include <stdint.h>

#include "result/interval_output.h"
#include "run/controller.h"
#include "verdict/sweep.h"

/* The workers' phase set (release) and each worker's loop woken. */
void run_set_phase(struct run *r, struct controller *ct, int phase);
/* What the sweep sees now: the readers' atomics and the server's queue. */
struct sweep_seen run_sweep_seen(struct controller *ct, uint64_t now);
/* The phase that follows phase at now (phase_start: when it began); begins the
 * sweep's passes when the drain ends. */
int run_next_phase(struct controller *ct, int phase, uint64_t now, uint64_t phase_start);
/* The send window's length (ns): smtp.profile's stages as they run, else run.duration. */
uint64_t run_send_ns(const struct run *r);
/* smtp.profile_end = decided: a send interval ending at ns since the start, its
 * figures v and the run's "kept up" sample of it ks; a stage the sequential test
 * decided ends now (verdict/stage_end.h), and the send window ends at a stage
 * decided behind or one that ran out its time while our readers fell behind
 * (verdict_keptup_slope over its samples). The test weighs the server's queue
 * when the first sample counted it, else the backlog (capacity/level.h). */
void run_stage_interval(struct controller *ct, uint64_t ns, const struct interval_view *v,
                        const struct verdict_sample *ks);

#endif
