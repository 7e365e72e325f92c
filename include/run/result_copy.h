/* result_copy: what the writers need of the live run, copied into its result
 * (result/run_result.h) once the workers stopped (result_copy.c), so the result
 * points into nothing of the run. */
#ifndef MS_RUN_RESULT_COPY_H
#define MS_RUN_RESULT_COPY_H

#include "engine/shared.h"
#include "result/run_result.h"
#include "run/sources.h"

/* res's ids, clock, users, the ledger's sweep and compaction counts, the tester's
 * host and the server side (after sources_stop), from r and src. */
void result_copy_run(struct run_result *res, const struct run *r, struct sources *src);

#endif
