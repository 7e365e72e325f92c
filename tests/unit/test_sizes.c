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
    char path[] = "/tmp/mailsoak-sizes-XXXXXX";
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

static void pacing(void **st)
{
    struct pacer p;
    pacer_init(&p, 100, 0, 1000);
    for (int i = 0; i < 5; i++) {
        assert_true(pacer_due(&p) == 1000 + (uint64_t)i * 10000000ull);
        pacer_take(&p);
    }
    /* ramp of 10 s to 100/s: 500 events in the ramp, the 500th at 10 s, then 100/s */
    pacer_init(&p, 100, 10000000000ull, 0);
    p.n = 500;
    assert_true(llabs((long long)pacer_due(&p) - 10000000000ll) < 1000);
    p.n = 125;                       /* a quarter of the ramp's events at half its time */
    assert_true(llabs((long long)pacer_due(&p) - 5000000000ll) < 1000);
    p.n = 600;
    assert_true(llabs((long long)pacer_due(&p) - 11000000000ll) < 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uniform_and_fixed), cmocka_unit_test(lognormal), cmocka_unit_test(from_file),
        cmocka_unit_test(pacing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
