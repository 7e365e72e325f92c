/* ladder_result: what each rung of the size ladder became (run/run.h's struct
 * ladder_result), after the verdicts. */
#ifndef MS_RUN_LADDER_RESULT_H
#define MS_RUN_LADDER_RESULT_H

#include "run/run.h"

/* res->ladder from the ledger and the senders' counts. */
void ladder_result(struct run_result *res);

#endif
