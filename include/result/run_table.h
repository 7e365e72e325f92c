/* run_table: a run's result as the table printed at its end (run_table.c), and the
 * fill's line. Writers only. */
#ifndef MS_RESULT_RUN_TABLE_H
#define MS_RESULT_RUN_TABLE_H

#include <stdio.h>

#include "result/run_result.h"

void run_result_table(FILE *f, const struct run_result *r);
/* The fill's line: what it sent and what the listing of every mailbox proved. */
void fill_table(FILE *f, const struct fill_summary *fs);

#endif
