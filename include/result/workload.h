/* workload: whether result files ran the same workload (their "workload" objects
 * key by key), for compare and report, which put runs side by side, and merge,
 * which adds some keys up. */
#ifndef MS_RESULT_WORKLOAD_H
#define MS_RESULT_WORKLOAD_H

#include <stddef.h>

#include "result/result.h"

/* 0 when the n files of v have the same workload, ignoring the keys of skip
 * (NULL-terminated, or NULL); else -1 with a message naming the keys that differ
 * and the two values of each, e.g.
 * "different workloads: senders (20 in a.json, 40 in b.json)". */
int result_workload_check(const struct result *v, size_t n, const char *const *skip, char *err, size_t errlen);

#endif
