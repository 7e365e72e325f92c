/* latency: the latency object of a result file, both ways. Written by the run (per
 * command, in the summary and in every timeline entry) and read back by merge, so
 * that adding runs adds histograms, never percentiles. */
#ifndef MS_RESULT_LATENCY_H
#define MS_RESULT_LATENCY_H

#include <stddef.h>

#include <jansson.h>

#include "lib/hist.h"

/* {"count", "p50", "p90", "p95", "p99", "p999", "min", "max", "mean" (ms), "hist": {"min_ns",
 * "max_ns", "sum_ns", "buckets"}}: the buckets as hist_encode text. */
json_t *latency_json(const struct hist *h);
/* Adds the histogram of such an object to h. 0, or -1 with a reason in err: no
 * "hist" (a file of an older mailsoak), bad buckets, or buckets that do not hold
 * "count" values. */
int latency_add(struct hist *h, const json_t *lat, char *err, size_t errlen);

/* Histograms by command name, added up over files or timeline entries (merge).
 * Start one as { .names = json_object() }. */
struct lat_sum {
    json_t *names;                   /* name -> index */
    struct hist **h;
    size_t n;
};
/* Adds every command of a latency object ({name: latency_json(...)}). 0, or -1
 * with "WHERE: latency "NAME": reason" in err. */
int lat_sum_add(struct lat_sum *ls, const json_t *lat, const char *where, char *err, size_t errlen);
/* {name: latency_json(sum)} */
json_t *lat_sum_json(const struct lat_sum *ls);
void lat_sum_free(struct lat_sum *ls);

#endif
