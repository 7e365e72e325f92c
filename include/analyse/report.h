/* report: one self-contained HTML file from result files (effective config, the
 * summary table, SVG charts over time) and, on request, the timeline as CSV. */
#ifndef MS_REPORT_H
#define MS_REPORT_H

#include <stdio.h>

#include "analyse/compare.h"
#include "analyse/results.h"

/* Writes the HTML report of rs to f; 0, or -1 when the stream failed. The runs that
 * wrote no result (missing, may be NULL) keep their columns in the summary. */
int report_write_html(FILE *f, const struct result_set *rs, const char *workload_warning,
                      const struct cmp_missing *missing, size_t nmissing);

#endif
