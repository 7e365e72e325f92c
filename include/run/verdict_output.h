/* verdict_output: the verdict (verdict/verdict.h) and the gates (verdict/gate.h) of
 * a run as the table's last section and as the JSON's "verdict" object. Writers
 * only: run.c judged them. */
#ifndef MS_RUN_VERDICT_OUTPUT_H
#define MS_RUN_VERDICT_OUTPUT_H

#include <stdio.h>

#include <jansson.h>

#include "run/run.h"

/* "verdict  HEADLINE", proven, failed, unproven and each pending reason's share,
 * kept up, the remedy, then the gates: each failed one with its measured value and
 * its bound, each allowed error class with its reason. */
void verdict_table(FILE *f, const struct run_result *r);
/* {"state", "headline", "accepted", "proven", "proven_share", "unproven_share",
 * "pending_share": {reason: share}, "kept_up", "accepted_rate", "read_rate",
 * "delivered_rate", "after_rate", "backlog_rate", "queue_rate", "remedy",
 * "suggested_rate", "more_sweep_s", "gates": {"passed", "exit_status", "failed":
 * [names], "results": [{"name", "group", "pass", "value", "bound", "op", "unit",
 * "text", "reason"}]}}; null where not measured. */
json_t *verdict_json(const struct run_result *r);

#endif
