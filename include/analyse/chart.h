/* chart: the report's SVG charts — a line chart of one value over time (one line per
 * run, coloured by label), and per label a chart of errors by class (stacked bars)
 * with the server's log hits in lanes under the axis. Axes are labelled in the
 * value's unit; the end of the send window and server events are marked. */
#ifndef MS_ANALYSE_CHART_H
#define MS_ANALYSE_CHART_H

#include <stdio.h>

#include "analyse/compare.h"
#include "analyse/results.h"
#include "analyse/timeline.h"

/* What a chart draws of each timeline entry. */
enum chart_of {
    CHART_FIG,             /* a figure (fig) */
    CHART_LATENCY,         /* a command's latency (lat), its p99 or p50 */
    CHART_LOG_HITS,        /* the server's log hits, all classes added up */
};

struct chart {
    char id[64], title[160], ylabel[48];
    enum chart_of of;
    enum result_ifig fig;
    char lat[100];
    int p99;
    enum cmp_unit unit;
    int per_second;        /* per-interval count in the file; drawn divided by the interval */
};

/* Draws chart c for the runs listed (indexes into rs->v: every run, or those of one
 * kind of server, whose scales differ) when some has data for it (draw_empty = 0), or,
 * in a second pass (draw_empty = 1), a short placeholder when none has. A duration's
 * axis is labelled in the unit of its ticks (ms, or seconds). Returns the number of
 * series. */
size_t chart_line(FILE *o, const struct result_set *rs, const struct chart *c, const size_t *runs, size_t nruns,
                  int draw_empty);
/* Charts c[0..n) as line charts of every run, or, when the runs are of several kinds of
 * server (run.server_kind), each once per kind on its own scale, its title and id
 * naming the kind. Returns how many of them no run has data for. */
size_t chart_lines_by_kind(FILE *o, const struct result_set *rs, const struct chart *c, size_t n);
/* Errors and log hits by class for label g; all_err holds every label's error classes,
 * so a class has one colour in every chart. */
void chart_classes(FILE *o, const struct result_set *rs, size_t g, const struct classes *all_err, size_t chart_no);

#endif
