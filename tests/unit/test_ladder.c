/* Unit tests of the size ladder's rungs (engine/ladder.c) and of the SIZE an EHLO
 * line advertises (engine/reply.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/ladder.h"
#include "engine/reply.h"

static void rungs(void **state)
{
    (void)state;
    uint64_t v[LADDER_RUNGS_MAX];
    /* Postfix's message_size_limit of the testbed's test: the limit's own rung */
    unsigned n = ladder_rungs(300000, 64u << 20, v);
    static const uint64_t want[] = { 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 300000, 524288 };
    assert_int_equal(n, sizeof want / sizeof want[0]);
    assert_memory_equal(v, want, sizeof want);
    /* a limit that is a rung: doubled once past it, not repeated */
    n = ladder_rungs(8192, 0, v);
    assert_int_equal(n, 5);
    assert_int_equal(v[3], 8192);
    assert_int_equal(v[4], 16384);
    /* a limit within LADDER_SLACK of a rung gets no rung of its own */
    n = ladder_rungs(262144 + 100, 0, v);
    assert_int_equal(v[n - 1], 524288);
    assert_int_equal(v[n - 2], 262144);
    /* Postfix's default, 10240000: past it, 16 MiB */
    n = ladder_rungs(10240000, 0, v);
    assert_int_equal(v[n - 2], 10240000);
    assert_int_equal(v[n - 1], 16u << 20);
    /* no SIZE: up to ladder_max, nothing past it */
    n = ladder_rungs(0, 64u << 20, v);
    assert_int_equal(n, 17);
    assert_int_equal(v[n - 1], 64u << 20);
    /* the slack's bound holds at its value: a limit exactly LADDER_SLACK above a rung
     * (and below the next) has a rung of its own, one a byte closer has none */
    n = ladder_rungs(262144 + LADDER_SLACK, 0, v);
    assert_int_equal(v[n - 2], 262144 + LADDER_SLACK);
    n = ladder_rungs(262144 + LADDER_SLACK - 1, 0, v);
    assert_int_equal(v[n - 2], 262144);
    /* a limit below 1 KiB */
    n = ladder_rungs(500, 0, v);
    assert_int_equal(n, 1);
    assert_int_equal(v[0], 1024);
}

static void rung_of_a_body(void **state)
{
    (void)state;
    uint64_t v[LADDER_RUNGS_MAX];
    unsigned n = ladder_rungs(300000, 0, v);
    assert_int_equal(ladder_rung_of(v, n, 1024 - 560), 0);
    assert_int_equal(ladder_rung_of(v, n, 262144 - 560), 8);
    assert_int_equal(ladder_rung_of(v, n, 300000 - 560), 9);
    assert_int_equal(ladder_rung_of(v, n, 524288 - 560), 10);
    assert_int_equal(ladder_rung_of(v, n, 200000), -1);     /* no rung's message */
    /* within the slack, its bound included */
    assert_int_equal(ladder_rung_of(v, n, 65536 - LADDER_SLACK), 6);
    assert_int_equal(ladder_rung_of(v, n, 65536 - LADDER_SLACK - 1), -1);
    assert_int_equal(ladder_rung_of(v, n, 600000), -1);
}

static void ehlo_sizes(void **state)
{
    (void)state;
#define SZ(s) ehlo_size(s, sizeof s - 1)
    assert_int_equal(SZ("SIZE 10240000"), 10240000);
    assert_int_equal(SZ("size 52428800"), 52428800);        /* Exim */
    assert_int_equal(SZ("SIZE"), 0);                        /* sendmail: no fixed limit */
    assert_int_equal(SZ("SIZE "), 0);
    assert_int_equal(SZ("SIZES 5"), 0);
    assert_int_equal(SZ("PIPELINING"), 0);
    assert_int_equal(SZ("SIZE 99999999999999999999999"), 0); /* past 2^53: none */
    assert_int_equal(SZ("SIZE 123abc"), 123);
#undef SZ
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rungs), cmocka_unit_test(rung_of_a_body), cmocka_unit_test(ehlo_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
