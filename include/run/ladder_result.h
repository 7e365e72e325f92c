/* ladder_result: what each rung of the size ladder became (result/run_result.h's
 * struct ladder_result), after the verdicts. */
#ifndef MS_RUN_LADDER_RESULT_H
#define MS_RUN_LADDER_RESULT_H

#include "engine/shared.h"
#include "result/run_result.h"

/* res->ladder from r's ledger and the senders' counts. */
void ladder_result(struct run_result *res, const struct run *r);

#endif
