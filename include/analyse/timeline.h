/* timeline: what the report's charts and CSV read from result files over time: an
 * entry's time, the names found under a path of the timelines (error classes, log
 * classes, commands), and a run's display name. */
#ifndef MS_ANALYSE_TIMELINE_H
#define MS_ANALYSE_TIMELINE_H

#include <stdio.h>

#include "analyse/results.h"

/* "maildir", or "maildir #2" when the label has repeats. */
void run_name(char *buf, size_t n, const struct result_set *rs, size_t i);

/* An entry's "t" (seconds since its run's start); 0, or -1 when it has none. */
int entry_t(const json_t *e, double *t);

/* A set of names in the order first found. */
struct classes {
    char **v;
    size_t n;
};
/* The index of name, added when add is set; (size_t)-1 when absent and not added. */
size_t class_index(struct classes *c, const char *name, int add);
void classes_free(struct classes *c);
/* Union of the names found at `path` of every timeline entry of the given runs: classes
 * with a count above zero, or (for "latency") commands with an object of percentiles. */
void collect_classes(struct classes *c, const struct result_set *rs, const size_t *runs, size_t n,
                     const char *path);

#endif
