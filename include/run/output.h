/* output: the writers of a run's result (output.c): the table, the JSON, the
 * fill's lines (the ledger CSV: ledger_csv.h); they never measure anything, and judge by
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
/* The fill: its lines of the table, its JSON object, and its ledger (every filled
 * message: id, message_id, mailbox, size, accepted, outcome), r being the fill's
 * own run (its ledger: ledger_csv.h). */
void fill_table(FILE *f, const struct fill_summary *fs);
json_t *fill_json(const struct fill_summary *fs);
/* A time of the run (ms since its start) as ISO 8601 UTC with milliseconds. */
const char *run_time(const struct run_result *r, uint32_t at_ms, char *buf, size_t n);
/* The ids a user can look for: ours (X-Mailsoak-Id) and the Message-ID header,
 * which servers log (Postfix: message-id=<...>). */
void msg_ids(const struct run_result *r, uint64_t seq, char *id, size_t idn, char *mid, size_t midn);

#endif
