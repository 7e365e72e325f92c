/* merge_sum: what the two halves of merge share, merge.c (the checks, the summary,
 * the server's rows and the result) and merge_timeline.c (the timelines lined up):
 * the merge in progress with its warnings, and adding up the values of one key in
 * several files. Internal to merge: other code uses result/merge.h. */
#ifndef MS_MERGE_SUM_H
#define MS_MERGE_SUM_H

#include <stddef.h>

#include <jansson.h>

#include "result/result.h"

struct input {
    const struct result *r;
    json_t *summary;                 /* r's, its times moved onto the merged clock */
    double off;                      /* s from the merged start to this run's start */
    int server;                      /* its server rows stand for its server */
};

struct merge {
    struct input *in;
    size_t n;
    long long start_ms;              /* the earliest start */
    double iv;                       /* s: the timeline's interval */
    char *warn;
    size_t warnlen, wpos;
    char *err;
    size_t errlen;
};

/* A warning line in m->warn (dropped when it is full). */
__attribute__((format(printf, 2, 3)))
void merge_warn(struct merge *m, const char *fmt, ...);

/* Values of one key in several files, added up (see merge_sum.c); null where nothing
 * was measured or the values cannot be added (then *conflict is set). */
json_t *merge_combine(json_t *const *v, size_t n, int *conflict);

#endif
