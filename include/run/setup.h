/* setup: what the workers of a run share, made before they start (targets and
 * source addresses resolved, users, the size model, the seed and run id, the text
 * pool, the ledger) and freed after they stopped. */
#ifndef MS_RUN_SETUP_H
#define MS_RUN_SETUP_H

#include "engine/worker.h"
#include "settings/config.h"

/* Fills r for nw workers. 0, 1 (out of memory) or 2 (a target, a users file or a
 * size file that will not do), with the reason printed. */
int setup_run(struct run *r, const struct config *cfg, unsigned nw);
/* What setup_run made (whatever it reached), and r itself. */
void run_free(struct run *r);

#endif
