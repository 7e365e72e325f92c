/* report_csv: the timelines of result files as CSV (report_csv.c), for
 * `mailsoak report --csv`. */
#ifndef MS_REPORT_CSV_H
#define MS_REPORT_CSV_H

#include <stdio.h>

#include "analyse/results.h"

/* One row per file per timeline entry; 0 or -1. */
int report_write_csv(FILE *f, const struct result_set *rs);

#endif
