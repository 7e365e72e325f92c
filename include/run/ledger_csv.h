/* ledger_csv: the run's ledger as CSV (ledger_csv.c): every message not delivered
 * once (run.ledger_csv) and the fill's every message (fill.ledger_csv), written
 * atomically. */
#ifndef MS_RUN_LEDGER_CSV_H
#define MS_RUN_LEDGER_CSV_H

#include <stddef.h>

#include "run/run.h"

/* Every message not delivered once, one CSV line each (id, message_id, mailbox,
 * size, accepted, outcome, reason, queue_id), written atomically. 0, or -1 with err set. */
int write_ledger_csv(const char *path, const struct run_result *r, char *err, size_t errlen);
/* The fill's ledger (every filled message: id, message_id, mailbox, size, accepted,
 * outcome), r being the fill's own run. */
int write_fill_csv(const char *path, const struct run_result *r, char *err, size_t errlen);

#endif
