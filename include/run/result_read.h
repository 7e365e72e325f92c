/* result_read: a read result's figures (result/result.h) as the judgement reads
 * them (verdict/judge.h), with the [gate] settings its "config" holds: for a merged file
 * of shards (cmd/cmd_merge.c), whose summed outcomes, summed histograms and lined-up
 * timeline no shard's verdict saw, so the whole load is judged again. */
#ifndef MS_RUN_RESULT_READ_H
#define MS_RUN_RESULT_READ_H

#include <stddef.h>

#include "result/result.h"
#include "result/run_result.h"
#include "settings/config.h"
#include "verdict/judge.h"

/* From res (a result file read): its counts and ledger outcomes from "summary",
 * the latencies from their histogram buckets, the session attempts and the send
 * window (the entries in which a shard sent) from "timeline", the held-back
 * arrivals from "summary"'s "arrivals"; its gates into r->gates and its sweep
 * settings into cfg (zeroed by the caller, freed with config_free). f points into r.
 * 0, or -1 with the reason in err when the file lacks what the gates need (a file
 * of an older mailsoak: no histogram buckets, no gate settings). */
int result_read_judgement(const struct result *res, struct run_result *r, struct config *cfg, struct judge_figures *f,
                          char *err, size_t errlen);

#endif
