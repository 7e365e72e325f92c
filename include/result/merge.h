/* merge: the result files of the shards of one load (mailsoak run --shard K/N on
 * several hosts) added up into one result file, which compare and report read like
 * any other. */
#ifndef MS_MERGE_H
#define MS_MERGE_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "result/result.h"

/* The merged result of the n files of v. Refuses (NULL, the reason in err) files of
 * different workloads or of overlapping or differently cut shards unless force, and
 * always files it cannot add up exactly (no histogram buckets, no start_unix_ms).
 * Warnings (a shard missing, what force let through) go to warn, one per line. */
json_t *merge_results(const struct result *v, size_t n, int force, const char *label, char *err, size_t errlen,
                      char *warn, size_t warnlen);

#endif
