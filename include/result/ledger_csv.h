/* ledger_csv: the run's ledger as CSV (ledger_csv.c): every message not delivered
 * once (run.ledger_csv) and the fill's every message (fill.ledger_csv), written
 * atomically. The ledger (engine/ledger.h) is the file's rows, walked once the
 * workers stopped; the result gives the ids, the times and the examples' trails. */
#ifndef MS_RESULT_LEDGER_CSV_H
#define MS_RESULT_LEDGER_CSV_H

#include <stddef.h>

#include "engine/ledger.h"
#include "lib/users.h"
#include "result/run_result.h"

/* Every message of l not delivered once, one CSV line each (id, message_id, mailbox
 * (of u), size, accepted, outcome, reason, queue_id, cause, trail), written
 * atomically. 0, or -1 with err set. */
int write_ledger_csv(const char *path, const struct run_result *r, const struct ledger *l, const struct users *u,
                     char *err, size_t errlen);
/* The fill's ledger (every filled message: id, message_id, mailbox, size, accepted,
 * outcome), r being the fill's own run. */
int write_fill_csv(const char *path, const struct run_result *r, const struct ledger *l, const struct users *u,
                   char *err, size_t errlen);

#endif
