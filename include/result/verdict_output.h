/* verdict_output: the verdict (verdict/verdict.h) and the gates (verdict/gate.h) of
 * a run or a merged load as the table's last section and as the result file's
 * "verdict" object. Writers only: judge() (verdict/judge.h) judged them. */
#ifndef MS_RESULT_VERDICT_OUTPUT_H
#define MS_RESULT_VERDICT_OUTPUT_H

#include <stdio.h>

#include <jansson.h>

#include "engine/ledger.h"
#include "settings/config.h"
#include "verdict/gate.h"
#include "verdict/recovery.h"
#include "verdict/verdict.h"

/* What the writers print, borrowed for the call: the judgement and the figures
 * it was made on. */
struct verdict_view {
    const struct config *cfg;        /* a run's settings (its profile's stages, its readers), or NULL (merge) */
    const struct run_verdict *verdict;
    const struct gate_judgement *judged;
    const struct ledger_outcome *lo;
    const struct recovery_spike *spikes;   /* smtp.profile's spikes and their recovery */
    unsigned nspikes;
    const struct recovery_proof *stage_proof;   /* each stage's mail, nstages of cfg->profile */
    const double (*stage_span)[2];   /* each stage's span as it ran (s), or NULL: as cfg->profile planned */
    unsigned nstages;
    int exit_status;                 /* what the run exits with (judge()'s return) */
};

/* "verdict  HEADLINE", proven, failed, unproven and each pending reason's share,
 * kept up, the remedy, then the gates: each failed one with its measured value and
 * its bound, each allowed error class with its reason. */
void verdict_table(FILE *f, const struct verdict_view *r);
/* {"state", "headline", "accepted", "proven", "proven_share", "unproven_share",
 * "pending_share": {reason: share}, "kept_up", "accepted_rate", "read_rate",
 * "delivered_rate", "after_rate", "backlog_rate", "queue_rate", "remedy",
 * "suggested_rate", "more_sweep_s", "gates": {"passed", "exit_status", "failed":
 * [names], "results": [{"name", "group", "pass", "value", "bound", "op", "unit",
 * "text", "reason"}]}}; null where not measured. */
json_t *verdict_json(const struct verdict_view *r);

#endif
