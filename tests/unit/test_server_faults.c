/* Unit tests of the reference server's fault tables: parsing of [fault.*] keys and
 * their errors, exact every/max/after counts, odds close to their value, delays
 * inside their bounds, lock windows, and replay from the same seed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "server/config.h"
#include "server/fault.h"

static int set(struct srv_faults *f, const char *sec, const char *key, const char *val)
{
    char why[400];
    return srv_fault_set(f, sec, key, val, why, sizeof why);
}

static void free_faults(struct srv_faults *f)
{
    struct srv_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.faults = *f;
    srv_config_free(&cfg);
}

static void test_parse(void **state)
{
    (void)state;
    struct srv_faults f = { 0 };
    char why[400];
    assert_int_equal(set(&f, "fault.smtp.rcpt", "kind", "4xx"), 0);
    assert_int_equal(set(&f, "fault.smtp.rcpt", "odds", "0.25"), 0);
    assert_int_equal(set(&f, "fault.smtp.rcpt", "code", "452"), 0);
    assert_int_equal(set(&f, "fault.smtp.rcpt.slow", "kind", "delay"), 0);
    assert_int_equal(set(&f, "fault.smtp.rcpt.slow", "delay", "100ms-2s"), 0);
    assert_int_equal(set(&f, "fault.smtp.rcpt.slow", "every", "3"), 0);
    assert_int_equal(set(&f, "fault.pop3.pass", "resp", "IN-USE"), 0);
    assert_int_equal(set(&f, "fault.pop3.pass", "every", "1"), 0);
    assert_int_equal(f.ncmd, 3);
    assert_int_equal(f.cmd[0].stage, ST_SMTP_RCPT);
    assert_int_equal(f.cmd[0].kind, SF_TEMP);
    assert_int_equal(f.cmd[0].code, 452);
    assert_int_equal(f.cmd[1].delay.kind, SD_UNIFORM);
    assert_int_equal(f.cmd[1].delay.lo, 100 * 1000000ull);
    assert_int_equal(f.cmd[2].stage, ST_POP3_PASS);
    assert_int_equal(srv_faults_check(&f, why, sizeof why), 0);

    assert_int_equal(set(&f, "fault.store", "lose_every", "10"), 0);
    assert_int_equal(set(&f, "fault.store", "lose_max", "3"), 0);
    assert_int_equal(set(&f, "fault.store", "corrupt", "0.5"), 0);
    assert_int_equal(set(&f, "fault.store", "lock_windows", "10s every 60s offset 5s"), 0);
    assert_int_equal(f.store.rule[SE_LOSE].every, 10);
    assert_int_equal(f.store.rule[SE_LOSE].max, 3);
    assert_int_equal(f.store.lock_period, 60 * 1000000000ull);
    assert_int_equal(set(&f, "fault.user", "defer", "user000[0-4]@test.local"), 0);
    assert_true(srv_addr_matches(&f.user.defer, "USER0003@test.local"));
    assert_false(srv_addr_matches(&f.user.defer, "user0005@test.local"));

    /* Errors name the key and the reason. */
    assert_int_equal(srv_fault_set(&f, "fault.smtp.rcpt", "kind", "sometimes", why, sizeof why), -1);
    assert_non_null(strstr(why, "fault.smtp.rcpt.kind"));
    assert_int_equal(set(&f, "fault.smtp.bogus", "odds", "0.1"), -1);
    assert_int_equal(set(&f, "fault.smtp.rcpt", "odds", "2"), -1);
    assert_int_equal(set(&f, "fault.store", "lose_sometimes", "1"), -1);
    assert_int_equal(set(&f, "fault.store", "lock_windows", "60s every 10s"), -1);
    assert_int_equal(set(&f, "fault.smtp.rcpt", "delay", "2s-1s"), -1);
    free_faults(&f);
}

static void test_check(void **state)
{
    (void)state;
    struct srv_faults f = { 0 };
    char why[400];
    assert_int_equal(set(&f, "fault.smtp.mail", "kind", "5xx"), 0);
    assert_int_equal(srv_faults_check(&f, why, sizeof why), -1);     /* never strikes */
    assert_int_equal(set(&f, "fault.smtp.mail", "every", "2"), 0);
    assert_int_equal(srv_faults_check(&f, why, sizeof why), 0);
    assert_int_equal(set(&f, "fault.smtp.mail", "code", "451"), 0);
    assert_int_equal(srv_faults_check(&f, why, sizeof why), -1);     /* 4xx code on a 5xx kind */
    free_faults(&f);
}

static void test_exact_counts(void **state)
{
    (void)state;
    struct srv_rule r = { .every = 3, .max = 4, .after = 2 };
    struct srv_rng rng;
    uint64_t seen = 0, fired = 0;
    int hits[40] = { 0 };
    srv_rng_seed(&rng, 1, 0);
    for (int i = 0; i < 40; i++)
        hits[i] = srv_rule_strikes(&r, &seen, &fired, &rng);
    /* Events 1..40: after 2, every third of the rest (5, 8, 11, 14), at most 4. */
    for (int i = 0; i < 40; i++)
        assert_int_equal(hits[i], i + 1 == 5 || i + 1 == 8 || i + 1 == 11 || i + 1 == 14);
    assert_int_equal(fired, 4);
}

static void test_odds_and_replay(void **state)
{
    (void)state;
    struct srv_rule r = { .odds = 0.1 };
    struct srv_rng a, b;
    uint64_t sa = 0, fa = 0, sb = 0, fb = 0;
    srv_rng_seed(&a, 42, 7);
    srv_rng_seed(&b, 42, 7);
    for (int i = 0; i < 20000; i++)
        assert_int_equal(srv_rule_strikes(&r, &sa, &fa, &a), srv_rule_strikes(&r, &sb, &fb, &b));
    assert_true(fa > 1700 && fa < 2300);
    struct srv_rng c;
    srv_rng_seed(&c, 43, 7);
    assert_true(srv_rng_next(&c) != srv_rng_next(&a));
}

static void test_dist(void **state)
{
    (void)state;
    struct srv_rng r;
    srv_rng_seed(&r, 3, 3);
    struct srv_dist u = { SD_UNIFORM, 100, 200 }, e = { SD_EXP, 1000, 20000 }, fx = { SD_FIXED, 5, 5 };
    double sum = 0;
    for (int i = 0; i < 10000; i++) {
        uint64_t v = srv_dist_draw(&u, &r);
        assert_true(v >= 100 && v <= 200);
        uint64_t x = srv_dist_draw(&e, &r);
        assert_true(x <= 20000);
        sum += (double)x;
        assert_int_equal(srv_dist_draw(&fx, &r), 5);
    }
    assert_true(sum / 10000 > 900 && sum / 10000 < 1100);
}

static void test_window(void **state)
{
    (void)state;
    struct srv_store_faults s = { .lock_len = 10, .lock_period = 60, .lock_offset = 5 };
    assert_false(srv_lock_window(&s, 0));
    assert_true(srv_lock_window(&s, 5));
    assert_true(srv_lock_window(&s, 14));
    assert_false(srv_lock_window(&s, 15));
    assert_true(srv_lock_window(&s, 65));
    struct srv_store_faults none = { 0 };
    assert_false(srv_lock_window(&none, 5));
}

static void test_pick_first_only(void **state)
{
    (void)state;
    struct srv_faults f = { 0 };
    struct srv_rng r;
    uint64_t seen[2] = { 0 }, fired[2] = { 0 };
    struct srv_fault_state st = { .seen = seen, .fired = fired };
    set(&f, "fault.smtp.rcpt", "every", "2");
    set(&f, "fault.smtp.rcpt.b", "every", "1");
    srv_rng_seed(&r, 1, 1);
    for (int i = 0; i < 10; i++) {
        const struct srv_cmd_fault *c = srv_fault_pick(&f, &st, ST_SMTP_RCPT, &r);
        assert_ptr_equal(c, (i % 2) ? &f.cmd[0] : &f.cmd[1]);
        assert_null(srv_fault_pick(&f, &st, ST_SMTP_MAIL, &r));
    }
    /* Each fault counts only the strikes it applied. */
    assert_int_equal(fired[0], 5);
    assert_int_equal(fired[1], 5);
    free_faults(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_exact_counts),
        cmocka_unit_test(test_odds_and_replay),
        cmocka_unit_test(test_dist),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_pick_first_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
