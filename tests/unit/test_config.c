/* Unit tests of settings: units, the INI reader with its file:line errors, flags and
 * --set overrides, repeatable keys, and the users file and pattern. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "settings/config.h"
#include "engine/msg.h"
#include "engine/sizes.h"
#include "lib/units.h"
#include "lib/users.h"
#include "tmpdir.h"

static char *write_tmp(const char *text)
{
    char buf[256], *path = strdup(test_tmpname(buf, sizeof buf, "mailsoak-test-XXXXXX"));
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void units(void **st)
{
    uint64_t v;
    const char *why;
    struct range r;
    assert_int_equal(parse_duration_ns("90s", &v, &why), 0);
    assert_true(v == 90000000000ull);
    assert_int_equal(parse_duration_ns("10m", &v, &why), 0);
    assert_true(v == 600000000000ull);
    assert_int_equal(parse_duration_ns("250ms", &v, &why), 0);
    assert_true(v == 250000000ull);
    assert_int_equal(parse_duration_ns("1.5h", &v, &why), 0);
    assert_true(v == 5400000000000ull);
    assert_int_equal(parse_duration_ns("30", &v, &why), 0);
    assert_true(v == 30000000000ull);
    assert_int_equal(parse_duration_ns("10x", &v, &why), -1);
    assert_int_equal(parse_duration_ns("-5s", &v, &why), -1);
    assert_int_equal(parse_count("1k", &v, &why), 0);
    assert_true(v == 1000);
    assert_int_equal(parse_count("2M", &v, &why), 0);
    assert_true(v == 2000000);
    assert_int_equal(parse_count("1.5", &v, &why), -1);
    assert_int_equal(parse_bytes("1k", &v, &why), 0);
    assert_true(v == 1024);
    assert_int_equal(parse_bytes("64KiB", &v, &why), 0);
    assert_true(v == 65536);
    assert_int_equal(parse_range("0-1000", &r, 1, &why), 0);
    assert_true(r.lo == 0 && r.hi == 1000);
    assert_int_equal(parse_range("5", &r, 0, &why), 0);
    assert_true(r.lo == 5 && r.hi == 5);
    assert_int_equal(parse_range("5-1", &r, 0, &why), -1);
    assert_int_equal(parse_range("-5", &r, 0, &why), -1);
}

static void human_output(void **st)
{
    char b[32];
    assert_string_equal(fmt_count(b, sizeof b, 16488), "16488");
    assert_string_equal(fmt_count(b, sizeof b, 120000000), "120M");
    assert_string_equal(fmt_count(b, sizeof b, 5000000), "5000K");
    assert_string_equal(fmt_count(b, sizeof b, 0), "0");
    assert_string_equal(fmt_bytes(b, sizeof b, 70.0 * 1024 * 1024), "70MB");
}

static int parse(struct config *cfg, int argc, const char **argv)
{
    return config_from_args(cfg, argc, (char **)argv);
}

static void defaults_and_flags(void **st)
{
    struct config cfg;
    const char *argv[] = { "--smtp", "127.0.0.1:25", "--senders=7", "--duration", "90s",
                           "--size", "100-200", "--set", "pop3.max_per_session=3" };
    assert_int_equal(parse(&cfg, 9, argv), 0);
    assert_int_equal(cfg.senders, 7);
    assert_int_equal(cfg.readers, 10);
    assert_true(cfg.duration == 90 * 1000000000ull);
    assert_true(cfg.drain == 60 * 1000000000ull);
    assert_true(cfg.size.lo == 100 && cfg.size.hi == 200);
    assert_true(cfg.msgs_per_conn.lo == 1 && cfg.msgs_per_conn.hi == 5);
    assert_int_equal(cfg.max_per_session, 3);
    assert_int_equal(cfg.smtp_targets.n, 1);
    assert_string_equal(cfg.smtp_targets.v[0], "127.0.0.1:25");
    config_free(&cfg);
}

static void file_then_flags(void **st)
{
    struct config cfg;
    char *path = write_tmp("; comment\n[smtp]\nsenders = 3\ntarget = a:1\ntarget = b:2\n"
                           "[server]\nlog = /x\nlog = /y\n");
    const char *argv[] = { "-c", path, "--senders", "4", "--set", "server.log=/z" };
    assert_int_equal(parse(&cfg, 6, argv), 0);
    assert_int_equal(cfg.senders, 4);                  /* the flag wins */
    assert_int_equal(cfg.smtp_targets.n, 2);           /* repeated key accumulates */
    assert_int_equal(cfg.server.logs.n, 1);            /* a later source replaces */
    assert_string_equal(cfg.server.logs.v[0], "/z");
    config_free(&cfg);
    unlink(path);
    free(path);
}

/* A bad key or value in a file is reported as file:line: key: reason, exit 2. */
static void bad_input(void **st)
{
    struct config cfg;
    char *path = write_tmp("[smtp]\nsenders = 3\n\nsendrs = 4\n");
    const char *argv[] = { "-c", path };
    char errbuf[4096] = { 0 };
    FILE *saved = stderr;
    stderr = fmemopen(errbuf, sizeof errbuf, "w");
    assert_int_equal(parse(&cfg, 2, argv), 2);
    config_free(&cfg);
    char *path2 = write_tmp("[run]\nduration = soon\n");
    const char *argv2[] = { "-c", path2 };
    assert_int_equal(parse(&cfg, 2, argv2), 2);
    config_free(&cfg);
    const char *argv3[] = { "--senders", "many" };
    assert_int_equal(parse(&cfg, 2, argv3), 2);
    config_free(&cfg);
    const char *argv4[] = { "--no-such-flag", "1" };
    assert_int_equal(parse(&cfg, 2, argv4), 2);
    config_free(&cfg);
    const char *argv5[] = { "--duration", "10" };   /* seconds or minutes? said, not guessed */
    assert_int_equal(parse(&cfg, 2, argv5), 2);
    config_free(&cfg);
    const char *argv6[] = { "--duration", "10s", "--drain", "0" };
    assert_int_equal(parse(&cfg, 4, argv6), 0);
    config_free(&cfg);
    fclose(stderr);
    stderr = saved;
    char want[256];
    snprintf(want, sizeof want, "%s:4: smtp.sendrs: unknown key", path);
    assert_non_null(strstr(errbuf, want));
    snprintf(want, sizeof want, "%s:2: run.duration: expected a duration", path2);
    assert_non_null(strstr(errbuf, want));
    assert_non_null(strstr(errbuf, "--senders: smtp.senders: expected a number"));
    assert_non_null(strstr(errbuf, "unknown option '--no-such-flag'"));
    assert_non_null(strstr(errbuf, "--duration: run.duration: a duration needs its unit: 90s, 10m, 1h or 250ms"));
    unlink(path);
    unlink(path2);
    free(path);
    free(path2);
}

static void users_file_and_pattern(void **st)
{
    struct users u;
    char err[256];
    char *path = write_tmp("# comment\nuser1@test.local pw1\n\nuser2@test.local  pass word\r\n");
    assert_int_equal(users_load_file(&u, path, err, sizeof err), 0);
    assert_int_equal(u.n, 2);
    assert_string_equal(u.v[1].addr, "user2@test.local");
    assert_string_equal(u.v[1].pass, "pass word");
    assert_int_equal(users_find(&u, "USER1@test.local"), 0);
    users_free(&u);
    unlink(path);
    free(path);

    path = write_tmp("user1@test.local pw\nnot-an-address pw\n");
    assert_int_equal(users_load_file(&u, path, err, sizeof err), -1);
    assert_non_null(strstr(err, ":2: 'not-an-address' is not an address"));
    unlink(path);
    free(path);

    assert_int_equal(users_from_pattern(&u, "user%04d@test.local", "pw%d", 1200, err, sizeof err), 0);
    assert_int_equal(u.n, 1200);
    assert_string_equal(u.v[7].addr, "user0007@test.local");
    assert_string_equal(u.v[7].pass, "pw7");
    users_free(&u);
    assert_int_equal(users_from_pattern(&u, "user%s@test.local", "", 3, err, sizeof err), -1);
    assert_int_equal(users_from_pattern(&u, "user%d%d@test.local", "", 3, err, sizeof err), -1);
}

/* run.shard K/N: parsed with its reason when wrong (file:line: key: reason), echoed
 * as written, and a shard keeps exactly the users whose index mod N is K. */
static void shards(void **st)
{
    struct shard sh;
    const char *why;
    assert_int_equal(parse_shard("1/3", &sh, &why), 0);
    assert_true(sh.k == 1 && sh.n == 3);
    assert_int_equal(parse_shard("0/1", &sh, &why), 0);
    const char *bad[] = { "3/3", "1/0", "1", "/2", "a/2", "1/b", "-1/2", "1/2/3" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(parse_shard(bad[i], &sh, &why), -1);

    struct config cfg;
    const char *argv[] = { "--shard", "2/5" };
    assert_int_equal(parse(&cfg, 2, argv), 0);
    assert_true(cfg.shard.k == 2 && cfg.shard.n == 5);
    char buf[64];
    for (const struct opt *o = config_opts; o->key; o++)
        if (!strcmp(o->key, "shard"))
            assert_string_equal(opts_format(o, &cfg, buf, sizeof buf), "2/5");
    config_free(&cfg);
    char *path = write_tmp("[run]\nshard = 2/2\n");
    const char *argv2[] = { "-c", path };
    char errbuf[1024] = { 0 };
    FILE *saved = stderr;
    stderr = fmemopen(errbuf, sizeof errbuf, "w");
    assert_int_equal(parse(&cfg, 2, argv2), 2);
    fclose(stderr);
    stderr = saved;
    config_free(&cfg);
    char want[300];
    snprintf(want, sizeof want, "%s:2: run.shard: K must be below N", path);
    assert_non_null(strstr(errbuf, want));
    unlink(path);
    free(path);

    /* smtp.profile: stages parsed and echoed as written; the run lasts their sum at
     * their highest rate; a bad one is refused with its file, line and key */
    struct rate_stages stg;
    assert_int_equal(parse_rate_stages("30s@50, 1m@150,500ms@0", &stg, &why), 0);
    assert_true(stg.n == 3 && stg.dur_ns[1] == 60000000000ull && stg.rate[1] == 150 && stg.rate[2] == 0);
    assert_int_equal(rate_stages_at(&stg, 0), 0);
    assert_int_equal(rate_stages_at(&stg, 29999999999ull), 0);
    assert_int_equal(rate_stages_at(&stg, 30000000000ull), 1);
    assert_int_equal(rate_stages_at(&stg, 90499999999ull), 2);
    assert_int_equal(rate_stages_at(&stg, 90500000000ull), -1);
    assert_int_equal(parse_rate_stages("", &stg, &why), 0);
    assert_int_equal(stg.n, 0);
    const char *bad_stages[] = { "30s", "@50", "30s@", "0s@5", "30s@-1", "30x@5", "30s@5,,", "30s@5;10s@6" };
    for (size_t i = 0; i < sizeof bad_stages / sizeof *bad_stages; i++)
        assert_int_equal(parse_rate_stages(bad_stages[i], &stg, &why), -1);
    const char *argv3[] = { "--set", "smtp.profile=30s@50, 1m@150", "--duration", "5s" };
    assert_int_equal(parse(&cfg, 4, argv3), 0);
    assert_true(cfg.duration == 90000000000ull && cfg.rate == 150 && cfg.profile.n == 2);
    for (const struct opt *o = config_opts; o->key; o++)
        if (!strcmp(o->key, "profile"))
            assert_string_equal(opts_format(o, &cfg, buf, sizeof buf), "30s@50, 60s@150");
    config_free(&cfg);
    path = write_tmp("[smtp]\nprofile = 30s@fifty\n");
    const char *argv4[] = { "-c", path };
    memset(errbuf, 0, sizeof errbuf);
    stderr = fmemopen(errbuf, sizeof errbuf, "w");
    assert_int_equal(parse(&cfg, 2, argv4), 2);
    fclose(stderr);
    stderr = saved;
    config_free(&cfg);
    snprintf(want, sizeof want, "%s:2: smtp.profile: ", path);
    assert_non_null(strstr(errbuf, want));
    unlink(path);
    free(path);

    struct users u;
    char err[200];
    assert_int_equal(users_from_pattern(&u, "user%04d@test.local", "pw%d", 10, err, sizeof err), 0);
    assert_int_equal(users_keep_shard(&u, 1, 3, err, sizeof err), 0);
    assert_int_equal(u.n, 3);                          /* 1, 4, 7 */
    assert_string_equal(u.v[0].addr, "user0001@test.local");
    assert_string_equal(u.v[1].addr, "user0004@test.local");
    assert_string_equal(u.v[2].addr, "user0007@test.local");
    assert_string_equal(u.v[2].pass, "pw7");
    users_free(&u);
    assert_int_equal(users_from_pattern(&u, "user%04d@test.local", "", 2, err, sizeof err), 0);
    assert_int_equal(users_keep_shard(&u, 2, 3, err, sizeof err), -1);   /* owns nobody */
    assert_non_null(strstr(err, "run.shard"));
    users_free(&u);
}

/* Parses argv with stderr captured into out; returns what config_from_args did. */
static int parse_quietly(struct config *cfg, int argc, const char **argv, char *out, size_t n)
{
    memset(out, 0, n);
    FILE *saved = stderr;
    stderr = fmemopen(out, n, "w");
    int rc = parse(cfg, argc, argv);
    fclose(stderr);
    stderr = saved;
    return rc;
}

/* Bounds live in the settings table: a value outside is refused where it is read,
 * naming the file, the line and the key; the edges themselves are allowed. */
static void bounds_in_the_table(void **st)
{
    struct config cfg;
    char out[1024], want[400];
    char *path = write_tmp("[smtp]\nsenders = 1\nmsgs_per_conn = 0-3\n");
    const char *a1[] = { "-c", path };
    assert_int_equal(parse_quietly(&cfg, 2, a1, out, sizeof out), 2);
    config_free(&cfg);
    snprintf(want, sizeof want, "%s:3: smtp.msgs_per_conn: must be at least 1", path);
    assert_non_null(strstr(out, want));
    unlink(path);
    free(path);

    const char *a2[] = { "--set", "pop3.delete_share=1.5" };
    assert_int_equal(parse_quietly(&cfg, 2, a2, out, sizeof out), 2);
    config_free(&cfg);
    assert_non_null(strstr(out, "pop3.delete_share: must be between 0 and 1"));

    const char *a3[] = { "--set", "pop3.delete_share=1", "--msgs-per-conn", "1" };
    assert_int_equal(parse_quietly(&cfg, 4, a3, out, sizeof out), 0);
    assert_true(cfg.delete_share == 1 && cfg.msgs_per_conn.lo == 1);
    config_free(&cfg);
}

/* The rules between keys are one check, after every source was read. */
static void rules_between_keys(void **st)
{
    struct config cfg;
    char err[400];
    const char *a1[] = { "--readers", "0" };
    assert_int_equal(parse(&cfg, 2, a1), 0);
    assert_int_equal(config_check(&cfg, err, sizeof err), -1);      /* senders, no target */
    assert_non_null(strstr(err, "no SMTP target"));
    config_free(&cfg);
    const char *a2[] = { "--senders", "0", "--readers", "0" };
    assert_int_equal(parse(&cfg, 4, a2), 0);
    assert_int_equal(config_check(&cfg, err, sizeof err), 0);
    config_free(&cfg);
    const char *a3[] = { "--smtp", "127.0.0.1:25", "--readers", "0", "--smtp-tls", "starttls",
                         "--smtp-tls-ca", "/nonexistent/ca.pem" };
    assert_int_equal(parse(&cfg, 8, a3), 0);
    assert_int_equal(config_check(&cfg, err, sizeof err), -1);
    assert_non_null(strstr(err, "smtp.tls_ca"));
    config_free(&cfg);
}

/* The files a run writes: their folder is checked before any load, the error naming
 * the key, its flag and the path. */
static void output_folders_checked_first(void **st)
{
    struct config cfg;
    char err[400];
    const char *a1[] = { "--json", "/nonexistent-h1/dir/x.json", "--senders", "0", "--readers", "0" };
    assert_int_equal(parse(&cfg, 6, a1), 0);
    assert_int_equal(config_check_limits(&cfg, err, sizeof err), -1);
    assert_non_null(strstr(err, "run.json (--json): /nonexistent-h1/dir/x.json: the folder /nonexistent-h1/dir does not exist"));
    config_free(&cfg);
    const char *a2[] = { "--ledger-csv", "/tmp", "--senders", "0", "--readers", "0" };
    assert_int_equal(parse(&cfg, 6, a2), 0);
    assert_int_equal(config_check_limits(&cfg, err, sizeof err), -1);
    assert_non_null(strstr(err, "run.ledger_csv (--ledger-csv): /tmp is a folder"));
    config_free(&cfg);
    const char *a3[] = { "--set", "capacity.report=/nonexistent-h1/r.html", "--senders", "0", "--readers", "0" };
    assert_int_equal(parse(&cfg, 6, a3), 0);
    assert_int_equal(config_check_outputs(&cfg, err, sizeof err), -1);
    assert_non_null(strstr(err, "capacity.report: /nonexistent-h1/r.html"));
    config_free(&cfg);
    const char *a4[] = { "--json", "/tmp/x.json", "--ledger-csv", "relative.csv", "--senders", "0", "--readers", "0" };
    assert_int_equal(parse(&cfg, 8, a4), 0);
    assert_int_equal(config_check_limits(&cfg, err, sizeof err), 0);
    config_free(&cfg);
}

/* The profiles in conf/ load (every key known, every value in bounds) and say what
 * they are: the classic as the JAMES-393 comparison had it, the office's mail
 * clients and fill, the ISP's leave-on-server clients. */
static void profiles_load(void **st)
{
    (void)st;
    char path[1024];
    const char *top = getenv("TOP") ? getenv("TOP") : ".";
    struct config cfg;
    snprintf(path, sizeof path, "%s/conf/james-393.conf", top);
    const char *classic[] = { "-c", path };
    assert_int_equal(parse(&cfg, 2, classic), 0);
    assert_int_equal(cfg.senders, 20);
    assert_int_equal(cfg.readers, 10);
    assert_true(cfg.size.lo == 0 && cfg.size.hi == 1000);
    assert_false(cfg.smtp_retry);
    assert_true(cfg.poll_interval == 0 && cfg.fill_messages.hi == 0 && cfg.content == MSG_RANDOM);
    config_free(&cfg);

    snprintf(path, sizeof path, "%s/conf/office.conf", top);
    const char *office[] = { "-c", path };
    assert_int_equal(parse(&cfg, 2, office), 0);
    assert_true(cfg.poll_interval == 600 * 1000000000ull);
    assert_false(cfg.pop3_leave);
    assert_true(cfg.smtp_retry && cfg.retry_min == 300 * 1000000000ull);
    assert_int_equal(cfg.content, MSG_MIME);
    assert_int_equal(cfg.size_dist, SIZE_CDF);
    assert_non_null(strstr(cfg.size_file, "conf/sizes/email-2002.cdf"));   /* against the profile's directory */
    assert_true(cfg.fill_messages.lo == 50 && cfg.fill_messages.hi == 150);
    assert_string_equal(cfg.rcpts_weights, "70,15,8,4,3");
    config_free(&cfg);

    snprintf(path, sizeof path, "%s/conf/isp.conf", top);
    const char *isp[] = { "-c", path };
    assert_int_equal(parse(&cfg, 2, isp), 0);
    assert_true(cfg.pop3_leave && cfg.keep_polls == 3 && cfg.preview);
    assert_true(cfg.poll_interval == 900 * 1000000000ull);
    assert_true(cfg.fill_messages.hi == 40);
    config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(profiles_load),
        cmocka_unit_test(units), cmocka_unit_test(human_output), cmocka_unit_test(defaults_and_flags),
        cmocka_unit_test(file_then_flags), cmocka_unit_test(bad_input), cmocka_unit_test(users_file_and_pattern),
        cmocka_unit_test(shards), cmocka_unit_test(bounds_in_the_table), cmocka_unit_test(rules_between_keys),
        cmocka_unit_test(output_folders_checked_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
