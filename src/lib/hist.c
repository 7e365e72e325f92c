/* hist: bucket arithmetic. A value v >= 128 with highest set bit e lands in one of
 * 64 sub-buckets of width 2^(e-6); reporting a bucket's midpoint bounds the error
 * by half a width over at least 64 widths: 1/128. The text form of the buckets
 * lets result files be merged exactly (mailsoak merge). */
#include "lib/hist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

void hist_reset(struct hist *h)
{
    memset(h, 0, sizeof *h);
}

unsigned hist_index(uint64_t v)
{
    if (v < HIST_LINEAR)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);
    if (e > HIST_MAX_EXP)
        return HIST_BUCKETS - 1;
    unsigned shift = e - HIST_SUB_BITS;
    unsigned m = (unsigned)(v >> shift) - (1u << HIST_SUB_BITS);
    return HIST_LINEAR + (e - HIST_SUB_BITS - 1) * (1u << HIST_SUB_BITS) + m;
}

void hist_bucket_range(unsigned idx, uint64_t *lo, uint64_t *hi)
{
    if (idx < HIST_LINEAR) {
        *lo = *hi = idx;
        return;
    }
    unsigned k = idx - HIST_LINEAR;
    unsigned e = k / (1u << HIST_SUB_BITS) + HIST_SUB_BITS + 1;
    unsigned m = k % (1u << HIST_SUB_BITS) + (1u << HIST_SUB_BITS);
    unsigned shift = e - HIST_SUB_BITS;
    *lo = (uint64_t)m << shift;
    *hi = *lo + ((uint64_t)1 << shift) - 1;
}

void hist_record(struct hist *h, uint64_t v)
{
    h->b[hist_index(v)]++;
    if (!h->count || v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    h->count++;
    h->sum += v;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    if (!src->count)
        return;
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        dst->b[i] += src->b[i];
    if (!dst->count || src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
    dst->count += src->count;
    dst->sum += src->sum;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
    if (!h->count)
        return 0;
    if (p >= 100)
        return h->max;
    uint64_t rank = (uint64_t)(p / 100.0 * (double)h->count + 0.999999999);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen >= rank) {
            uint64_t lo, hi;
            hist_bucket_range(i, &lo, &hi);
            uint64_t mid = lo + (hi - lo) / 2;
            return mid < h->min ? h->min : mid > h->max ? h->max : mid;
        }
    }
    return h->max;
}

char *hist_encode(const struct hist *h)
{
    size_t cap = 0, n = 0;
    char *out = NULL;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        if (!h->b[i])
            continue;
        /* one item: a separator, the index of a run, a count: 46 bytes at most */
        out = grow(out, &cap, n, 48, 1);
        if (i == 0 || !h->b[i - 1])
            n += (size_t)snprintf(out + n, cap - n, "%s%u:", n ? " " : "", i);
        else
            out[n++] = ',';
        n += (size_t)snprintf(out + n, cap - n, "%llu", (unsigned long long)h->b[i]);
    }
    out = grow(out, &cap, n, 1, 1);
    out[n] = 0;
    return out;
}

int64_t hist_decode_add(struct hist *h, const char *s, char *err, size_t errlen)
{
    int64_t total = 0;
    long long next = 0;              /* the lowest index the next run may start at */
    while (*s) {
        char *end;
        if (*s == ' ') {
            s++;
            continue;
        }
        errno = 0;
        unsigned long long idx = strtoull(s, &end, 10);
        if (end == s || *end != ':' || errno) {
            snprintf(err, errlen, "buckets: expected INDEX:COUNT at '%.20s'", s);
            return -1;
        }
        if ((long long)idx < next) {
            snprintf(err, errlen, "buckets: index %llu out of order", idx);
            return -1;
        }
        s = end + 1;
        for (;;) {
            if (idx >= HIST_BUCKETS) {
                snprintf(err, errlen, "buckets: index %llu beyond the layout (%u buckets)", idx, HIST_BUCKETS);
                return -1;
            }
            errno = 0;
            unsigned long long c = strtoull(s, &end, 10);
            if (end == s || errno || c > INT64_MAX - (uint64_t)total) {
                snprintf(err, errlen, "buckets: bad count at '%.20s'", s);
                return -1;
            }
            h->b[idx++] += c;
            total += (int64_t)c;
            s = end;
            if (*s != ',')
                break;
            s++;
        }
        if (*s && *s != ' ') {
            snprintf(err, errlen, "buckets: unexpected '%c'", *s);
            return -1;
        }
        next = (long long)idx;
    }
    return total;
}
