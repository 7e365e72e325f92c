/* hist: a log-linear latency histogram (HdrHistogram's layout with 64 sub-buckets
 * per power of two): at most 0.8 % relative error, constant memory, merged across
 * threads by addition. Values are nanoseconds. */
#ifndef MS_HIST_H
#define MS_HIST_H

#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS 6
#define HIST_MAX_EXP 45                       /* 2^46 ns: about 19 hours */
#define HIST_LINEAR (2u << HIST_SUB_BITS)     /* values below are exact */
#define HIST_BUCKETS (HIST_LINEAR + (HIST_MAX_EXP - HIST_SUB_BITS) * (1u << HIST_SUB_BITS))

struct hist {
    uint64_t count, sum, min, max;
    uint64_t b[HIST_BUCKETS];
};

void hist_reset(struct hist *h);
void hist_record(struct hist *h, uint64_t v);
void hist_merge(struct hist *dst, const struct hist *src);
/* p in [0, 100]; 0 for an empty histogram. */
uint64_t hist_percentile(const struct hist *h, double p);
static inline double hist_mean(const struct hist *h) { return h->count ? (double)h->sum / (double)h->count : 0; }

/* The buckets as text, for result files: runs of consecutive non-empty buckets,
 * "INDEX:COUNT,COUNT,... INDEX:COUNT,...", in index order ("" when empty). Sparse
 * (latencies fill a few hundred of the 2600 buckets) and compact (one string, not
 * a JSON array that an indenting writer spreads over a line per number), yet
 * readable with jq. Returns a malloc'd string. */
char *hist_encode(const struct hist *h);
/* Adds the buckets of such a string to h->b (count, sum, min and max are the
 * caller's: they are stored beside the buckets). Returns the number of values the
 * buckets hold, or -1 with a reason in err: a malformed string, an index out of
 * the layout, indexes out of order (h may then hold part of the buckets). */
int64_t hist_decode_add(struct hist *h, const char *s, char *err, size_t errlen);

/* Exposed for tests: bucket of a value and the value range a bucket stands for. */
unsigned hist_index(uint64_t v);
void hist_bucket_range(unsigned idx, uint64_t *lo, uint64_t *hi);

#endif
