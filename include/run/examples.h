/* examples: the messages of a run not delivered exactly once, shown one by one with
 * the server's evidence (examples.c). */
#ifndef MS_RUN_EXAMPLES_H
#define MS_RUN_EXAMPLES_H

#include "engine/shared.h"
#include "result/run_result.h"
#include "run/sources.h"

/* The examples of each kind from run's ledger (after the verdicts), then their
 * trails from a second pass over the logs the local collector followed (after
 * sources_stop), copied into res (freed with run_result_free). */
void examples_collect(struct run_result *res, const struct run *run, struct sources *src);

#endif
