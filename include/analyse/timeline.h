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
int entry_t(const struct result_entry *e, double *t);

/* A set of names in the order first found. */
struct classes {
    char **v;
    size_t n;
};
/* The index of name, added when add is set; (size_t)-1 when absent and not added. */
size_t class_index(struct classes *c, const char *name, int add);
void classes_free(struct classes *c);
/* What collect_classes gathers from a timeline entry. */
enum class_of { CLASS_LATENCY, CLASS_ERRORS, CLASS_LOG_HITS };
/* An entry's counts by class (errors by class, or the server's log hits). */
const struct result_classes *entry_classes(const struct result_entry *e, enum class_of of);
/* Union of the names found in every timeline entry of the given runs: classes with a
 * count above zero, or (CLASS_LATENCY) commands with an object of percentiles. */
void collect_classes(struct classes *c, const struct result_set *rs, const size_t *runs, size_t n,
                     enum class_of of);

#endif
