/* run_json: a run's result as the result file's JSON (run_json.c), and the fill's
 * object (also the fill file's, run/fill_file.c). Writers only. */
#ifndef MS_RESULT_RUN_JSON_H
#define MS_RESULT_RUN_JSON_H

#include <jansson.h>

#include "result/run_result.h"

/* The whole file: what result/result.c reads back (result_from_json). */
json_t *run_result_json(const struct run_result *r);
/* The fill: run_id, mailboxes, planned, accepted, verified, duplicated, missing,
 * unverified, bytes, deferrals, errors, foreign, elapsed_s, settled, from. */
json_t *fill_json(const struct fill_summary *fs);

#endif
