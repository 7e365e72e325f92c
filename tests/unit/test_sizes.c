/* Unit tests of workload shapes: the size distributions checked statistically on
 * many draws, and the pacer's schedule with and without a ramp. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/sizes.h"
#include "engine/worker.h"
#include "tmpdir.h"

enum { N = 200000 };

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void uniform_and_fixed(void **st)
{
    struct size_model m;
    struct rng r;
    char err[200];
    rng_seed(&r, 1);
    assert_int_equal(size_model_init(&m, SIZE_UNIFORM, (struct range){ 100, 300 }, 0, 0, NULL, err, sizeof err), 0);
    double sum = 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < N; i++) {
        uint64_t v = size_draw(&m, &r);
        sum += (double)v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    assert_true(lo == 100 && hi == 300);
    assert_true(fabs(sum / N - 200) < 1.0);      /* standard error of the mean is ~0.13 */
    size_model_init(&m, SIZE_FIXED, (struct range){ 777, 777 }, 0, 0, NULL, err, sizeof err);
    for (int i = 0; i < 100; i++)
        assert_int_equal(size_draw(&m, &r), 777);
}

static void lognormal(void **st)
{
    struct size_model m;
    struct rng r;
    char err[200];
    uint64_t *v = malloc(N * sizeof *v);
    rng_seed(&r, 2);
    assert_int_equal(size_model_init(&m, SIZE_LOGNORMAL, (struct range){ 0, 100000000 }, 4000, 3, NULL, err, sizeof err), 0);
    for (int i = 0; i < N; i++)
        v[i] = size_draw(&m, &r);
    qsort(v, N, sizeof *v, cmp);
    /* median, and the 15.87 % / 84.13 % quantiles at median / spread and median * spread */
    assert_true(fabs((double)v[N / 2] - 4000) < 4000 * 0.02);
    assert_true(fabs((double)v[(int)(N * 0.1587)] - 4000 / 3.0) < 4000 / 3.0 * 0.03);
    assert_true(fabs((double)v[(int)(N * 0.8413)] - 12000) < 12000 * 0.03);
    /* the range clamps */
    size_model_init(&m, SIZE_LOGNORMAL, (struct range){ 1000, 5000 }, 4000, 3, NULL, err, sizeof err);
    for (int i = 0; i < 10000; i++) {
        uint64_t x = size_draw(&m, &r);
        assert_true(x >= 1000 && x <= 5000);
    }
    assert_int_equal(size_model_init(&m, SIZE_LOGNORMAL, (struct range){ 0, 10 }, 0, 3, NULL, err, sizeof err), -1);
    free(v);
}

static void from_file(void **st)
{
    char path[256];
    test_tmpname(path, sizeof path, "mailsoak-sizes-XXXXXX");
    int fd = mkstemp(path);
    const char *text = "# observed\n100\n200\n\n300\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    struct size_model m;
    struct rng r;
    char err[200];
    rng_seed(&r, 3);
    assert_int_equal(size_model_init(&m, SIZE_FILE, (struct range){ 0, 0 }, 0, 0, path, err, sizeof err), 0);
    int seen[4] = { 0 };
    for (int i = 0; i < 30000; i++) {
        uint64_t x = size_draw(&m, &r);
        assert_true(x == 100 || x == 200 || x == 300);
        seen[x / 100]++;
    }
    for (int k = 1; k <= 3; k++)
        assert_true(abs(seen[k] - 10000) < 500);
    size_model_free(&m);
    FILE *f = fopen(path, "w");
    fputs("100\nlots\n", f);
    fclose(f);
    assert_int_equal(size_model_init(&m, SIZE_FILE, (struct range){ 0, 0 }, 0, 0, path, err, sizeof err), -1);
    assert_non_null(strstr(err, ":2: expected a size"));
    unlink(path);
}

/* size_dist = cdf on the published table shipped in conf/sizes: the drawn sizes'
 * cumulative shares match the table's at every point. */
static void from_cdf(void **st)
{
    (void)st;
    struct size_model m;
    struct rng r;
    char err[200], path[512];
    snprintf(path, sizeof path, "%s/conf/sizes/email-2002.cdf", getenv("TOP") ? getenv("TOP") : ".");
    rng_seed(&r, 3);
    assert_int_equal(size_model_init(&m, SIZE_CDF, (struct range){ 0, 1u << 30 }, 0, 0, path, err, sizeof err), 0);
    assert_int_equal(m.nsamples, 12);
    uint64_t *v = malloc(N * sizeof *v);
    for (int i = 0; i < N; i++)
        v[i] = size_draw(&m, &r);
    for (size_t k = 0; k < m.nsamples; k++) {
        size_t at = 0;
        for (int i = 0; i < N; i++)
            at += v[i] <= m.samples[k];
        assert_true(fabs((double)at / N - m.cum[k]) < 0.01);
    }
    free(v);
    size_model_free(&m);
    /* shares that go down are refused with the line */
    char tmp[256];
    test_tmpname(tmp, sizeof tmp, "mailsoak-cdf-XXXXXX");
    int fd = mkstemp(tmp);
    assert_true(write(fd, "100 0.5\n200 0.4\n", 16) == 16);
    close(fd);
    assert_int_equal(size_model_init(&m, SIZE_CDF, (struct range){ 0, 1000 }, 0, 0, tmp, err, sizeof err), -1);
    assert_non_null(strstr(err, ":2: "));
    unlink(tmp);
}

static void pacing(void **st)
{
    struct pacer p;
    (void)st;
    pacer_init(&p, 100, 0, 1000, ARRIVALS_CONSTANT, 1);
    for (int i = 0; i < 5; i++) {
        assert_true(pacer_due(&p) == 1000 + (uint64_t)i * 10000000ull);
        pacer_take(&p);
    }
    /* ramp of 10 s to 100/s: 500 events in the ramp, the 500th at 10 s, then 100/s */
    pacer_init(&p, 100, 10000000000ull, 0, ARRIVALS_CONSTANT, 1);
    p.s = 500;
    assert_true(llabs((long long)pacer_due(&p) - 10000000000ll) < 1000);
    p.s = 125;                       /* a quarter of the ramp's events at half its time */
    assert_true(llabs((long long)pacer_due(&p) - 5000000000ll) < 1000);
    p.s = 600;
    assert_true(llabs((long long)pacer_due(&p) - 11000000000ll) < 1000);
    /* a profile: 10 s at 20/s, 5 s at nothing, 10 s at 60/s, at a half share (one
     * of two workers): 100 events in the first stage, none in the second, the
     * next 300 in the third, none until an hour after its end */
    struct rate_stages stg = { .n = 3, .dur_ns = { 10000000000ull, 5000000000ull, 10000000000ull }, .rate = { 20, 0, 60 } };
    struct stage_clock clk;
    stage_clock_init(&clk, &stg);
    pacer_init(&p, 0, 0, 0, ARRIVALS_CONSTANT, 1);
    pacer_stages(&p, &clk, 0.5);
    assert_true(pacer_on(&p));
    p.s = 50;
    assert_true(llabs((long long)pacer_due(&p) - 5000000000ll) < 1000);
    p.s = 100;
    assert_true(llabs((long long)pacer_due(&p) - 15000000000ll) < 1000);
    p.s = 250;
    assert_true(llabs((long long)pacer_due(&p) - 20000000000ll) < 1000);
    p.s = 400;
    assert_true(pacer_due(&p) > 3600000000000ull);
    assert_int_equal(pacer_owed(&p, 0, 1000), 0);
    p.s = 0;
    p.n = 0;
    assert_int_equal(pacer_owed(&p, 20000000000ull, 1000), 250);
}

/* Exponential arrivals are a Poisson process: gaps of mean 1/rate and as much
 * spread (coefficient of variation 1, where constant arrivals have 0), counts in
 * equal windows whose variance equals their mean, the same schedule for the same
 * seed and another for another. */
static void poisson_arrivals(void **st)
{
    (void)st;
    struct pacer p, q;
    const double rate = 200;
    const int n = 200000;
    pacer_init(&p, rate, 0, 0, ARRIVALS_EXPONENTIAL, 42);
    double sum = 0, sum2 = 0;
    uint64_t prev = 0;
    static unsigned per_window[2000];   /* 0.5 s windows: 100 arrivals expected in each */
    memset(per_window, 0, sizeof per_window);
    for (int i = 0; i < n; i++) {
        uint64_t d = pacer_due(&p);
        assert_true(d >= prev);
        double g = (double)(d - prev) / 1e9;
        sum += g;
        sum2 += g * g;
        if (d / 500000000ull < 1000)
            per_window[d / 500000000ull]++;
        prev = d;
        pacer_take(&p);
    }
    double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
    assert_true(fabs(mean * rate - 1) < 0.01);
    assert_true(fabs(sd / mean - 1) < 0.02);
    double m = 0, v = 0;
    for (int w = 0; w < 1000; w++)
        m += per_window[w];
    m /= 1000;
    for (int w = 0; w < 1000; w++)
        v += (per_window[w] - m) * (per_window[w] - m);
    v /= 999;
    assert_true(fabs(m - 100) < 2);
    assert_true(v / m > 0.85 && v / m < 1.15);   /* constant arrivals: 0 */

    pacer_init(&p, rate, 0, 0, ARRIVALS_EXPONENTIAL, 42);
    pacer_init(&q, rate, 0, 0, ARRIVALS_EXPONENTIAL, 42);
    int same = 1;
    for (int i = 0; i < 100; i++, pacer_take(&p), pacer_take(&q))
        same &= pacer_due(&p) == pacer_due(&q);
    assert_true(same);
    pacer_init(&q, rate, 0, 0, ARRIVALS_EXPONENTIAL, 43);
    assert_true(pacer_due(&p) != pacer_due(&q));

    /* under a ramp of 10 s to 200/s, 1000 arrivals are due in the ramp and 2000
     * more in the next 10 s: Poisson counts, within 5 standard deviations */
    pacer_init(&p, rate, 10000000000ull, 0, ARRIVALS_EXPONENTIAL, 7);
    uint64_t in_ramp = pacer_owed(&p, 10000000000ull, 1000000), all = pacer_owed(&p, 20000000000ull, 1000000);
    assert_true(fabs((double)in_ramp - 1000) < 5 * sqrt(1000));
    assert_true(fabs((double)(all - in_ramp) - 2000) < 5 * sqrt(2000));
}

/* pacer_owed counts on a copy what is due and not taken, within its cap. */
static void owed_arrivals(void **st)
{
    (void)st;
    struct pacer p;
    pacer_init(&p, 100, 0, 0, ARRIVALS_CONSTANT, 1);
    assert_int_equal(pacer_owed(&p, 1000000000ull, 1000), 100);   /* 0, 10 ms, ... 990 ms */
    assert_int_equal(p.n, 0);
    for (int i = 0; i < 30; i++)
        pacer_take(&p);
    assert_int_equal(pacer_owed(&p, 1000000000ull, 1000), 70);
    assert_int_equal(pacer_owed(&p, 1000000000ull, 10), 10);
    pacer_init(&p, 0, 0, 0, ARRIVALS_CONSTANT, 1);
    assert_int_equal(pacer_owed(&p, 1000000000ull, 1000), 0);     /* unpaced: nothing is due */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uniform_and_fixed), cmocka_unit_test(lognormal), cmocka_unit_test(from_file), cmocka_unit_test(from_cdf),
        cmocka_unit_test(pacing), cmocka_unit_test(poisson_arrivals), cmocka_unit_test(owed_arrivals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
