/* latency: percentiles for readers beside the histogram they come from (exact
 * integers in ns and the buckets as text), so that merge can add runs exactly;
 * and the sums by command name merge adds them into. */
#include "result/latency.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

static double ms(uint64_t ns) { return (double)ns / 1e6; }

json_t *latency_json(const struct hist *h)
{
    char *b = hist_encode(h);
    /* p95 is what the tables and the gates' presets quote (push latency,
     * SPECmail2001's 5 s): the file carries it beside p90 */
    json_t *o = json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:{s:I, s:I, s:I, s:s}}",
                          "count", (json_int_t)h->count, "p50", ms(hist_percentile(h, 50)),
                          "p90", ms(hist_percentile(h, 90)), "p95", ms(hist_percentile(h, 95)),
                          "p99", ms(hist_percentile(h, 99)),
                          "p999", ms(hist_percentile(h, 99.9)), "min", ms(h->min), "max", ms(h->max),
                          "mean", hist_mean(h) / 1e6, "hist", "min_ns", (json_int_t)h->min,
                          "max_ns", (json_int_t)h->max, "sum_ns", (json_int_t)h->sum, "buckets", b);
    free(b);
    return o;
}

static int u64_at(const json_t *o, const char *key, uint64_t *v)
{
    const json_t *x = json_object_get(o, key);
    if (!json_is_integer(x) || json_integer_value(x) < 0)
        return -1;
    *v = (uint64_t)json_integer_value(x);
    return 0;
}

int latency_add(struct hist *h, const json_t *lat, char *err, size_t errlen)
{
    const json_t *hj = json_object_get(lat, "hist");
    const json_t *b = json_object_get(hj, "buckets");
    uint64_t count, mn, mx, sum;
    if (!json_is_object(hj) || !json_is_string(b)) {
        snprintf(err, errlen, "no histogram buckets (a file of an older mailsoak: "
                              "its percentiles cannot be added up exactly)");
        return -1;
    }
    if (u64_at(lat, "count", &count) < 0 || u64_at(hj, "min_ns", &mn) < 0 || u64_at(hj, "max_ns", &mx) < 0 ||
        u64_at(hj, "sum_ns", &sum) < 0) {
        snprintf(err, errlen, "hist: count, min_ns, max_ns and sum_ns must be integers >= 0");
        return -1;
    }
    struct hist *one = xcalloc(1, sizeof *one);
    int64_t n = hist_decode_add(one, json_string_value(b), err, errlen);
    int rc = -1;
    if (n >= 0 && (uint64_t)n != count)
        snprintf(err, errlen, "hist: the buckets hold %lld values, count says %llu", (long long)n,
                 (unsigned long long)count);
    else if (n >= 0 && count && mn > mx)
        snprintf(err, errlen, "hist: min_ns above max_ns");
    else if (n >= 0) {
        one->count = count;
        one->min = mn;
        one->max = mx;
        one->sum = sum;
        hist_merge(h, one);
        rc = 0;
    }
    free(one);
    return rc;
}

int lat_sum_add(struct lat_sum *ls, const json_t *lat, const char *where, char *err, size_t errlen)
{
    const char *name;
    json_t *o;
    json_object_foreach((json_t *)lat, name, o) {
        const json_t *ix = json_object_get(ls->names, name);
        if (!ix) {
            ls->h = xrealloc(ls->h, (ls->n + 1) * sizeof *ls->h);
            ls->h[ls->n] = xcalloc(1, sizeof **ls->h);
            json_object_set_new(ls->names, name, json_integer((json_int_t)ls->n));
            ix = json_object_get(ls->names, name);
            ls->n++;
        }
        char why[200];
        if (latency_add(ls->h[json_integer_value(ix)], o, why, sizeof why) < 0) {
            snprintf(err, errlen, "%s: latency \"%s\": %s", where, name, why);
            return -1;
        }
    }
    return 0;
}

json_t *lat_sum_json(const struct lat_sum *ls)
{
    json_t *out = json_object();
    const char *name;
    json_t *ix;
    json_object_foreach(ls->names, name, ix)
        json_object_set_new(out, name, latency_json(ls->h[json_integer_value(ix)]));
    return out;
}

void lat_sum_free(struct lat_sum *ls)
{
    for (size_t i = 0; i < ls->n; i++)
        free(ls->h[i]);
    free(ls->h);
    json_decref(ls->names);
    memset(ls, 0, sizeof *ls);
}
