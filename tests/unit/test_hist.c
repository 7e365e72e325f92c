/* Unit tests of the latency histogram: percentiles against exact ones of random
 * data within 1 %, merging equals recording everything in one, and the bucket
 * arithmetic at its edges; the text form of the buckets round-trips and refuses what
 * is not one. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/hist.h"
#include "lib/rng.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t exact(const uint64_t *sorted, size_t n, double p)
{
    size_t rank = (size_t)ceil(p / 100.0 * (double)n);
    return sorted[rank ? rank - 1 : 0];
}

static void accuracy(void **st)
{
    enum { N = 200000 };
    uint64_t *v = malloc(N * sizeof *v);
    struct hist *h = malloc(sizeof *h);
    struct rng r;
    rng_seed(&r, 7);
    /* log-uniform over 1 us .. 10 s, like real latencies */
    for (int dist = 0; dist < 2; dist++) {
        hist_reset(h);
        for (size_t i = 0; i < N; i++) {
            v[i] = dist == 0 ? (uint64_t)exp(log(1e3) + rng_unit(&r) * (log(1e10) - log(1e3)))
                             : rng_range(&r, 0, 5000);
            hist_record(h, v[i]);
        }
        qsort(v, N, sizeof *v, cmp_u64);
        const double ps[] = { 1, 10, 50, 90, 99, 99.9, 99.99 };
        for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
            double want = (double)exact(v, N, ps[k]), got = (double)hist_percentile(h, ps[k]);
            assert_true(fabs(got - want) <= 0.01 * want + 0.5);
        }
        assert_true(hist_percentile(h, 100) == v[N - 1]);
        assert_true(h->min == v[0] && h->max == v[N - 1]);
        assert_int_equal(h->count, N);
    }
    free(v);
    free(h);
}

static void merging(void **st)
{
    struct hist *a = malloc(sizeof *a), *b = malloc(sizeof *b), *all = malloc(sizeof *all);
    struct rng r;
    rng_seed(&r, 9);
    hist_reset(a);
    hist_reset(b);
    hist_reset(all);
    for (int i = 0; i < 50000; i++) {
        uint64_t x = rng_range(&r, 100, 100000000);
        hist_record(i % 3 ? a : b, x);
        hist_record(all, x);
    }
    hist_merge(a, b);
    assert_memory_equal(a, all, sizeof *a);
    struct hist *empty = calloc(1, sizeof *empty);
    hist_merge(a, empty);
    assert_memory_equal(a, all, sizeof *a);
    assert_true(hist_percentile(empty, 50) == 0);
    free(a);
    free(b);
    free(all);
    free(empty);
}

static void buckets(void **st)
{
    for (uint64_t v = 0; v < 200000; v += (v < 1000 ? 1 : 97)) {
        uint64_t lo, hi;
        unsigned i = hist_index(v);
        assert_true(i < HIST_BUCKETS);
        hist_bucket_range(i, &lo, &hi);
        assert_true(lo <= v && v <= hi);
        assert_true((double)(hi - lo) <= (double)lo / 64.0 + 1);
    }
    assert_int_equal(hist_index(UINT64_MAX), HIST_BUCKETS - 1);
    assert_true(hist_index(1ull << 45) < HIST_BUCKETS);
}

static void text_form(void **st)
{
    struct hist *h = calloc(1, sizeof *h), *back = calloc(1, sizeof *back);
    struct rng r;
    char err[200];
    rng_seed(&r, 11);
    char *empty = hist_encode(h);
    assert_string_equal(empty, "");
    assert_int_equal(hist_decode_add(back, empty, err, sizeof err), 0);
    free(empty);
    for (int i = 0; i < 30000; i++)
        hist_record(h, i < 5 ? (uint64_t)i : rng_range(&r, 1000, 3000000000ull));
    hist_record(h, UINT64_MAX);              /* the last bucket */
    char *s = hist_encode(h);
    assert_int_equal(hist_decode_add(back, s, err, sizeof err), (int64_t)h->count);
    assert_memory_equal(back->b, h->b, sizeof h->b);
    /* decoding adds: twice the text is twice the counts */
    assert_int_equal(hist_decode_add(back, s, err, sizeof err), (int64_t)h->count);
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        assert_true(back->b[i] == 2 * h->b[i]);
    free(s);
    /* runs: consecutive buckets share one index */
    hist_reset(h);
    hist_record(h, 3);
    hist_record(h, 4);
    hist_record(h, 4);
    hist_record(h, 9);
    s = hist_encode(h);
    assert_string_equal(s, "3:1,2 9:1");
    free(s);
    const char *bad[] = { "3", "3:", "x:1", "3:1 2:1", "3:1,", "99999:1", "3:1;4:1", "3:-1",
                          "2620:1,1,1,1,1,1,1,1" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(hist_decode_add(back, bad[i], err, sizeof err), -1);
    free(h);
    free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accuracy), cmocka_unit_test(merging), cmocka_unit_test(buckets),
        cmocka_unit_test(text_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
