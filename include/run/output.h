/* output: the writers of a run's result (output.c): the table, the JSON, the
 * ledger CSV, the fill's lines; they never measure anything, and judge by
 * verdict/judge.h's rules. */
#ifndef MS_RUN_OUTPUT_H
#define MS_RUN_OUTPUT_H

#include <stdio.h>

#include <jansson.h>

#include "run/run.h"
#include "settings/config.h"

json_t *run_result_json(const struct run_result *r);
void run_result_table(FILE *f, const struct run_result *r);
/* The run's name in tables, reports and metrics: run.label, else the store format. */
const char *run_label(const struct config *cfg);
/* Every message not delivered once, one CSV line each (id, message_id, mailbox,
 * size, accepted, outcome, reason, queue_id), written atomically. 0, or -1 with err set. */
int write_ledger_csv(const char *path, const struct run_result *r, char *err, size_t errlen);
/* The fill: its lines of the table, its JSON object, and its ledger (every filled
 * message: id, message_id, mailbox, size, accepted, outcome), r being the fill's
 * own run. */
void fill_table(FILE *f, const struct fill_summary *fs);
json_t *fill_json(const struct fill_summary *fs);
int write_fill_csv(const char *path, const struct run_result *r, char *err, size_t errlen);

#endif
