/* test_result: the result file's reader (result/result.h) against its writers: a
 * timeline entry written by result/interval_output.c and a summary's latencies by
 * result/latency.c read back field for field, histograms bucket for bucket; a
 * newer format_version refused naming the file; a key every run writes reported
 * missing; the settings a file's config holds read back. */
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

#include "lib/json.h"
#include "result/latency.h"
#include "result/result.h"
#include "result/interval_output.h"
#include "settings/config.h"
#include "tmpdir.h"

static char dir[256];

static json_t *summary(void)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:n, s:{s:I, s:I}}", "sent", (json_int_t)1000,
                     "read", (json_int_t)990, "errors", (json_int_t)4, "delivered", (json_int_t)985, "duplicated",
                     (json_int_t)2, "corrupted", (json_int_t)1, "lost", (json_int_t)3, "pending", (json_int_t)9,
                     "pending_unswept", (json_int_t)7, "settled", "errors_by_class", "smtp_rcpt_450", (json_int_t)3,
                     "pop3_retr_closed", (json_int_t)1);
}

/* A document as `mailsoak run` writes it, with the parts given (stolen). */
static json_t *document(json_int_t version, json_t *sum, json_t *timeline)
{
    json_t *d = json_pack("{s:s, s:I, s:s, s:f, s:b, s:{s:I, s:I, s:f}}", "format", RESULT_FORMAT, "format_version",
                          version, "label", "a", "elapsed_s", 61.5, "interrupted", 0, "workload", "senders",
                          (json_int_t)20, "readers", (json_int_t)30, "rate", 150.0);
    json_object_set_new(d, "summary", sum);
    json_object_set_new(d, "timeline", timeline ? timeline : json_array());
    return d;
}

static const char *write_doc(json_t *d, const char *name)
{
    static char path[400];
    char err[200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(write_json_atomic(path, d, err, sizeof err), 0);
    json_decref(d);
    return path;
}

static void hist_equal(const struct hist *a, const struct hist *b)
{
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->sum, b->sum);
    assert_int_equal(a->min, b->min);
    assert_int_equal(a->max, b->max);
    assert_memory_equal(a->b, b->b, sizeof a->b);
}

/* A timeline entry from the run's writer comes back as the run measured it. */
static void interval_round_trip(void **st)
{
    (void)st;
    struct counters prev = { .smtp_sessions = 10, .pop3_sessions = 5, .arrivals = 100, .left_behind = 1 };
    struct counters now = { .smtp_sessions = 17, .pop3_sessions = 9, .arrivals = 160, .late_busy = 2, .late_engine = 1,
                            .left_behind = 4, .empty_visits = 3, .full_visits = 6, .conns_open = 12 };
    struct err_count errs[] = { { "smtp_rcpt_450", 3 }, { "pop3_pass_closed", 1 } };
    struct hist *lat = calloc(LAT_COUNT, sizeof *lat);
    for (uint64_t v = 1; v <= 500; v++) {
        hist_record(&lat[LAT_DELIVERY], v * 1000003);
        if (v % 3 == 0)
            hist_record(&lat[LAT_SMTP_RCPT], v * 7919);
    }
    struct probe_interval srv = { .has = { .active = 1, .spool = 1, .store = 1 } };
    srv.to.spool = 42;
    srv.to.store_messages = 4242;
    struct interval_view v = { .t = 12.5, .dt = 2.5, .phase = "send", .c = &now, .prev = &prev, .dsent = 60,
                               .dread = 55, .derr = 4, .err = errs, .nerr = 2, .lat = lat, .srv = &srv,
                               .unread = -3, .stage = -1 };
    json_t *tl = json_array();
    json_array_append_new(tl, interval_json(&v));
    const char *path = write_doc(document(RESULT_FORMAT_VERSION, summary(), tl), "interval.json");
    struct result r;
    char err[300];
    assert_int_equal(result_load(&r, path, err, sizeof err), 0);
    assert_int_equal(r.nintervals, 1);
    const struct result_interval *e = &r.intervals[0];
    assert_true(e->has_t && e->t == 12.5);
    assert_string_equal(e->phase, "send");
    assert_int_equal(e->c.sent, 60);
    assert_int_equal(e->c.read, 55);
    assert_int_equal(e->c.errors, 4);
    assert_int_equal(e->c.smtp_sessions, 7);
    assert_int_equal(e->c.pop3_sessions, 4);
    assert_true(e->has_arrivals);
    assert_int_equal(e->c.arrivals, 60);
    assert_int_equal(e->c.late_busy, 2);
    assert_int_equal(e->c.late_engine, 1);
    assert_int_equal(e->c.left_behind, 3);
    assert_int_equal(e->c.empty_visits, 3);
    assert_int_equal(e->c.full_visits, 6);
    assert_true(e->has_unread && e->unread == -3);
    assert_true(e->has_spool && e->spool == 42);
    assert_true(e->has_store && e->store_messages == 4242);
    assert_int_equal(e->nerr, 2);
    assert_string_equal(e->err[0].name, "smtp_rcpt_450");
    assert_int_equal(e->err[0].count, 3);
    assert_string_equal(e->err[1].name, "pop3_pass_closed");
    assert_true(e->lat[LAT_DELIVERY].has && e->lat[LAT_DELIVERY].count == 500);
    assert_true(e->lat[LAT_DELIVERY].mean > 250 && e->lat[LAT_DELIVERY].mean < 252);
    assert_false(e->lat[LAT_SMTP_EHLO].has);
    struct hist *back = calloc(LAT_COUNT, sizeof *back);
    assert_int_equal(result_interval_hists(&r, 0, back, err, sizeof err), 0);
    for (unsigned k = 0; k < LAT_COUNT; k++)
        hist_equal(&back[k], &lat[k]);
    result_free(&r);
    free(back);
    free(lat);
}

/* The summary: each table row's key lands in its field; latencies decoded. */
static void summary_read(void **st)
{
    (void)st;
    struct hist h;
    hist_reset(&h);
    for (uint64_t v = 1; v <= 300; v++)
        hist_record(&h, v * v * 1000);
    json_t *s = summary();
    /* push.exists as a file written before the latency object carried p95 */
    json_t *old = latency_json(&h);
    json_object_del(old, "p95");
    json_object_set_new(s, "latency", json_pack("{s:o, s:o}", "smtp.rcpt", latency_json(&h), "push.exists", old));
    json_object_set_new(s, "arrivals", json_pack("{s:I, s:I, s:I, s:I}", "due", (json_int_t)500, "late_busy",
                                                 (json_int_t)2, "late_engine", (json_int_t)1, "never_started",
                                                 (json_int_t)4));
    const char *path = write_doc(document(RESULT_FORMAT_VERSION, s, NULL), "summary.json");
    struct result r;
    char err[300];
    assert_int_equal(result_load(&r, path, err, sizeof err), 0);
    assert_string_equal(r.label, "a");
    assert_true(r.elapsed_s == 61.5);
    assert_int_equal(r.senders, 20);
    assert_int_equal(r.readers, 30);
    assert_true(r.rate == 150.0);
    assert_int_equal(r.c.sent, 1000);
    assert_int_equal(r.c.read, 990);
    assert_int_equal(r.c.errors, 4);
    assert_int_equal(r.lo.accepted, 1000);
    assert_int_equal(r.lo.delivered, 985);
    assert_int_equal(r.lo.duplicated, 2);
    assert_int_equal(r.lo.corrupted, 1);
    assert_int_equal(r.lo.lost, 3);
    assert_int_equal(r.lo.pending, 9);
    assert_int_equal(r.lo.pending_by[PR_UNSWEPT], 7);
    assert_int_equal(r.settled, -1);                    /* null: no sweep ran */
    assert_true(r.has_arrivals);
    assert_int_equal(r.due, 500);
    assert_int_equal(r.late_busy + r.late_engine + r.never_started, 7);
    assert_int_equal(r.nerr, 2);
    assert_true(r.lat[LAT_SMTP_RCPT].has && r.lat[LAT_SMTP_RCPT].count == 300);
    /* p95, which the tables show (push latency), is in the file and read back */
    assert_true(r.lat[LAT_SMTP_RCPT].p95 == (double)hist_percentile(&h, 95) / 1e6);
    assert_true(r.lat[LAT_SMTP_RCPT].p95 > r.lat[LAT_SMTP_RCPT].p90);
    assert_true(r.lat[LAT_SMTP_RCPT].p95 < r.lat[LAT_SMTP_RCPT].p99);
    assert_true(r.lat[LAT_PUSH_EXISTS].has && isnan(r.lat[LAT_PUSH_EXISTS].p95));
    assert_string_equal(r.hist_err, "");
    hist_equal(&r.hist[LAT_SMTP_RCPT], &h);
    assert_int_equal(result_complete(&r, err, sizeof err), 0);
    result_free(&r);
}

/* A file of a later mailsoak is refused, naming the file and both versions. */
static void newer_version_refused(void **st)
{
    (void)st;
    const char *path = write_doc(document(RESULT_FORMAT_VERSION + 1, summary(), NULL), "newer.json");
    struct result r;
    char err[300] = "", want[300];
    assert_int_equal(result_load(&r, path, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: format_version %d is newer than this mailsoak reads (%d)", path,
             RESULT_FORMAT_VERSION + 1, RESULT_FORMAT_VERSION);
    assert_non_null(strstr(err, want));
    path = write_doc(json_pack("{s:s, s:I}", "format", "something-else", "format_version", (json_int_t)1), "other.json");
    assert_int_equal(result_load(&r, path, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a mailsoak result file"));
}

/* A key every run writes, missing, is named with the file; the others read as 0. */
static void missing_key_reported(void **st)
{
    (void)st;
    json_t *s = summary();
    json_object_del(s, "lost");
    const char *path = write_doc(document(RESULT_FORMAT_VERSION, s, NULL), "missing.json");
    struct result r;
    char err[300] = "", want[300];
    assert_int_equal(result_load(&r, path, err, sizeof err), 0);
    assert_int_equal(r.lo.lost, 0);
    assert_int_equal(result_complete(&r, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: no \"summary/lost\"", path);
    assert_non_null(strstr(err, want));
    result_free(&r);
    /* buckets that do not hold their count: the histogram is not taken, and said why */
    s = summary();
    json_t *bad = json_pack("{s:I, s:{s:I, s:I, s:I, s:s}}", "count", (json_int_t)5, "hist", "min_ns", (json_int_t)1,
                            "max_ns", (json_int_t)2, "sum_ns", (json_int_t)3, "buckets", "0:1");
    json_object_set_new(s, "latency", json_pack("{s:o}", "delivery", bad));
    path = write_doc(document(RESULT_FORMAT_VERSION, s, NULL), "badhist.json");
    assert_int_equal(result_load(&r, path, err, sizeof err), 0);
    assert_non_null(strstr(r.hist_err, "latency \"delivery\""));
    assert_int_equal(r.hist[LAT_DELIVERY].count, 0);
    result_free(&r);
}

/* The settings a file's config holds come back as the run read them. */
static void settings_read_back(void **st)
{
    (void)st;
    json_t *d = document(RESULT_FORMAT_VERSION, summary(), NULL);
    json_object_set_new(d, "config", json_pack("{s:{s:s, s:[s]}, s:{s:s}}", "gate", "integrity", "on", "allow",
                                               "smtp_rcpt_450: greylisting", "run", "sweep_timeout", "2m"));
    struct result r;
    char err[300];
    assert_int_equal(result_from_json(&r, d, "doc", err, sizeof err), 0);
    struct config cfg;
    memset(&cfg, 0, sizeof cfg);
    assert_int_equal(result_settings(&r, &cfg), 0);
    assert_int_equal(cfg.sweep_timeout, 120 * 1000000000ull);
    assert_int_equal(cfg.server.queue_interval, 1000000000ull);  /* the default */
    config_free(&cfg);
    result_free(&r);
    /* a file from before queue_interval: its queue was counted at the walks */
    json_object_set_new(json_object_get(d, "config"), "server", json_pack("{s:s}", "walk_interval", "30s"));
    assert_int_equal(result_from_json(&r, d, "doc", err, sizeof err), 0);
    memset(&cfg, 0, sizeof cfg);
    assert_int_equal(result_settings(&r, &cfg), 0);
    assert_int_equal(cfg.server.walk_interval, 30 * 1000000000ull);
    assert_int_equal(cfg.server.queue_interval, 30 * 1000000000ull);
    config_free(&cfg);
    result_free(&r);
    json_object_set_new(json_object_get(json_object_get(d, "config"), "server"), "queue_interval", json_string("2s"));
    assert_int_equal(result_from_json(&r, d, "doc", err, sizeof err), 0);
    memset(&cfg, 0, sizeof cfg);
    assert_int_equal(result_settings(&r, &cfg), 0);
    assert_int_equal(cfg.server.queue_interval, 2 * 1000000000ull);
    config_free(&cfg);
    result_free(&r);
    json_object_del(d, "config");
    assert_int_equal(result_from_json(&r, d, "doc", err, sizeof err), 0);
    memset(&cfg, 0, sizeof cfg);
    assert_int_equal(result_settings(&r, &cfg), -1);    /* no [gate]: a file of an older mailsoak */
    config_free(&cfg);
    result_free(&r);
    json_decref(d);
}

static int setup(void **st)
{
    (void)st;
    return mkdtemp(test_tmpname(dir, sizeof dir, "test_result.XXXXXX")) ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    const char *names[] = { "interval.json", "summary.json", "newer.json", "other.json", "missing.json",
                            "badhist.json" };
    char p[400];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(interval_round_trip),
        cmocka_unit_test(summary_read),
        cmocka_unit_test(newer_version_refused),
        cmocka_unit_test(missing_key_reported),
        cmocka_unit_test(settings_read_back),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
