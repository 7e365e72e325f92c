/* results: result files (result/result.h reads each one) grouped by label (same
 * label = repeats), checking that they ran the same workload. Shared by `compare`,
 * `report` and `merge`; every key may be missing. */
#ifndef MS_RESULTS_H
#define MS_RESULTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "lib/json.h"
#include "result/result.h"

/* Runs sharing a label, in order of first appearance. */
struct result_group {
    const char *label;        /* borrowed from the first run */
    size_t *runs;             /* indexes into result_set.v */
    size_t n;
};

struct result_set {
    struct result *v;
    size_t n;
    struct result_group *groups;
    size_t ngroups;
};

/* Loads every file and groups them; stops at the first bad one (-1, reason in err). */
int results_load(struct result_set *rs, char *const *paths, size_t n, char *err, size_t errlen);
void results_free(struct result_set *rs);

/* 0 when every file has the same workload object; else -1 with a message naming the
 * keys that differ (result/workload.h). */
int results_check_workload(const struct result_set *rs, char *err, size_t errlen);

/* What both commands do with their files: load them and refuse different workloads
 * unless force. Prints "CMD: reason" on err; returns 0, or 2 (nothing loaded). When
 * force let different workloads through, warn holds the message, else it is empty. */
int results_open(struct result_set *rs, char *const *paths, size_t n, int force, const char *cmd,
                 FILE *err, char *warn, size_t warnlen);

#endif
