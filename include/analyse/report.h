/* report: one self-contained HTML file from result files (effective config, the
 * summary table, SVG charts over time) and, on request, the timeline as CSV. */
#ifndef MS_REPORT_H
#define MS_REPORT_H

#include <stdio.h>

#include "analyse/results.h"

/* Writes the HTML report of rs to f; 0, or -1 when the stream failed. */
int report_write_html(FILE *f, const struct result_set *rs, const char *workload_warning);

#endif
