/* test_merge: result files of shards, made here, added up by merge. The percentiles
 * of the merge must be those of one histogram of every value (not an average of
 * the shards' percentiles); counts, errors and examples add up; timelines line up
 * on the wall clock; a server seen by several shards counts once; and what cannot
 * be added up exactly is refused without touching the output. */
#include <fcntl.h>
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

#include "analyse/compare.h"
#include "result/latency.h"
#include "result/merge.h"
#include "lib/rng.h"
#include "cmd/cmd_compare.h"
#include "cmd/cmd_merge.h"
#include "testfiles.h"

struct shard_spec {
    int k, n;
    long long start_ms;
    int senders;
    const char *size;                /* a workload key that must agree */
    const char *host;
    int samples;                     /* server samples; 0 = no server side */
    long long mem;
};

/* A result file as `mailsoak run --shard` writes it, with the latency histogram h,
 * sent = h->count, and a timeline of entries at t = 10, 20, 30 s (sent 1, 2, 3),
 * each with h as its interval's histogram too. */
static json_t *make_run(const struct shard_spec *sp, const struct hist *h)
{
    json_t *lat = latency_json(h);
    char shard[32];
    snprintf(shard, sizeof shard, "%d/%d", sp->k, sp->n);
    json_t *server = json_pack("{s:[s]}", "pidfile", "/run/master.pid");
    json_t *summary = json_pack(
        "{s:I, s:I, s:i, s:{s:i, s:i}, s:{s:[s], s:[s]}, s:[s], s:I, s:i, s:i, s:i, s:i, s:f, s:f, s:{s:o},"
        " s:o, s:o, s:i}",
        "sent", (json_int_t)h->count, "read", (json_int_t)h->count, "errors", 3 + sp->k, "errors_by_class",
        "smtp_rcpt_450", 2, "pop3_pass_in_use", 1 + sp->k, "error_examples", "smtp_rcpt_450", "450 greylisted",
        "pop3_pass_in_use", "-ERR [IN-USE] locked", "corruption_examples", "body differs", "delivered",
        (json_int_t)h->count - 7, "lost", 2, "duplicated", 0, "corrupted", 1, "pending", 4, "rate_in", 1.0,
        "rate_out", 1.0, "latency", "delivery", lat, "mem", sp->samples ? json_integer(sp->mem) : json_null(),
        "log_classes", sp->samples ? json_pack("{s:{s:i, s:[]}}", "lock", "count", 2, "examples")
                                   : json_null(),
        "server_samples", sp->samples);
    /* what the ledger adds: evidence with times on the run's clock, a verdict flag,
     * a count that is no sum */
    json_object_set_new(summary, "lost_examples", json_pack("[{s:s, s:f}]", "mailbox", "user0001@test.local",
                                                            "accepted_s", 1.5));
    json_object_set_new(summary, "settled", json_boolean(sp->k == 0));
    json_object_set_new(summary, "sweep_passes", json_integer(3 + sp->k));
    json_t *tl = json_array();
    for (int i = 1; i <= 3; i++)
        json_array_append_new(tl, json_pack("{s:f, s:s, s:i, s:i, s:i, s:{}, s:f, s:f, s:i, s:{s:O}, s:{s:i, s:i}}",
                                            "t", 10.0 * i, "phase", i < 3 ? "send" : "drain", "sent", i,
                                            "read", i, "errors", 0, "errors_by_class", "rate_in", i / 10.0,
                                            "rate_out", i / 10.0, "conns", 10 * i, "latency", "delivery", lat,
                                            "server", "mem", (int)sp->mem + i, "input", 5));
    json_t *root = json_pack("{s:s, s:i, s:s, s:s, s:s, s:i, s:s, s:I, s:s, s:{s:i, s:[i]}, s:f, s:f, s:b,"
                     " s:{s:i, s:i, s:s}, s:{s:{s:s, s:s}, s:o}, s:[s, s, s], s:o, s:o, s:[]}",
                     "format", "mailsoak-result", "format_version", 1, "version", "0.1.0", "label", "maildir",
                     "run_id", sp->k ? "bbbbbbbb" : "aaaaaaaa", "seed", 1, "start_time", "2026-01-01T00:00:00Z",
                     "start_unix_ms", (json_int_t)sp->start_ms, "host", sp->host, "shards", "n", sp->n, "k",
                     sp->k, "duration_s", 30.0, "elapsed_s", 35.0, "interrupted", 0, "workload", "senders",
                     sp->senders, "readers", 2, "size", sp->size, "config", "run", "interval", "10s", "shard",
                     shard, "server", server, "server_keys", "mem", "log_classes", "server_samples", "summary", summary,
                     "timeline", tl, "events");
    /* the gates as a run writes its effective settings; the latency gate sits between
     * the shards' medians (b's latencies are slow) and below the load's */
    json_object_set_new(json_object_get(root, "config"), "gate",
                        json_pack("{s:s, s:s, s:s, s:s, s:[s], s:s, s:s, s:[]}", "integrity", "yes", "settled", "no",
                                  "proven", "0.99", "preset", "integrity", "latency", "delivery p50 30ms", "errors",
                                  "1", "error_classes", "any", "allow"));
    if (sp->samples)                 /* a run with a probe: each source's own rows */
        json_object_set_new(root, "servers", json_pack("{s:{s:I, s:[f, f]}}", "mx", "mem", (json_int_t)sp->mem,
                                                       "window_s", 0.5, 29.5));
    return root;
}

static char *write_run(const char *name, const struct shard_spec *sp, const struct hist *h)
{
    json_t *r = make_run(sp, h);
    char *p = tf_path(name);
    assert_int_equal(json_dump_file(r, p, JSON_INDENT(1)), 0);
    json_decref(r);
    return p;
}

struct out {
    int rc;
    char *out, *err;
};

static struct out merge(int argc, char **argv)
{
    struct out r;
    size_t on, en;
    FILE *o = open_memstream(&r.out, &on), *e = open_memstream(&r.err, &en);
    r.rc = cmd_merge_io(argc, argv, o, e);
    fclose(o);
    fclose(e);
    return r;
}

static void out_free(struct out *r)
{
    free(r->out);
    free(r->err);
}

static json_t *load(const char *path)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    assert_non_null(j);
    return j;
}

static double num(const json_t *root, const char *path)
{
    double v = -1;
    assert_int_equal(json_path_number(root, path, &v), 0);
    return v;
}

/* A merge done: each shard here lost 2 messages, so the whole load's lost gate fails
 * and merge exits with its status (exact_percentiles checks that judgement). */
#define MERGED 4

static const struct shard_spec base0 = { 0, 2, 1700000000000LL, 20, "0-1000", "load1", 0, 0 };

/* Two shards of random latencies; the merge's latency object is the one a single
 * histogram of all the values gives, to the last bucket. */
static void exact_percentiles(void **st)
{
    struct hist *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b), *all = calloc(1, sizeof *all);
    struct rng r;
    rng_seed(&r, 5);
    for (int i = 0; i < 40000; i++) {
        /* the shards differ in shape, so averaging their percentiles would be wrong */
        uint64_t v = i % 4 ? rng_range(&r, 1000000, 20000000) : rng_range(&r, 50000000, 900000000);
        hist_record(i % 4 ? a : b, v);
        hist_record(all, v);
    }
    struct shard_spec s1 = base0;
    s1.k = 1;
    s1.start_ms += 300;
    char *f0 = write_run("a.json", &base0, a), *f1 = write_run("b.json", &s1, b);
    char *out = tf_path("all.json");
    char *argv[] = { "merge", f0, f1, "-o", out };
    struct out o = merge(5, argv);
    assert_int_equal(o.rc, 4);           /* the whole load's integrity gate: 4 lost */
    assert_string_equal(o.err, "");
    json_t *m = load(out);
    /* the whole load judged again with the shards' gates: 4 lost of all, exit 4; its
     * delivery p50 from the summed buckets, within the bound the slow shard's is not */
    assert_string_equal(json_string_value(json_path_get(m, "verdict/state")), "failed");
    assert_true(num(m, "verdict/accepted") == (double)all->count);
    assert_true(num(m, "verdict/gates/exit_status") == 4);
    assert_non_null(strstr(o.out, "\nverdict  FAILED: 4 lost, 0 duplicated, 2 corrupted of "));
    const json_t *g, *gates = json_path_get(m, "verdict/gates/results");
    size_t gi, seen = 0;
    json_array_foreach(gates, gi, g) {
        const char *name = json_string_value(json_object_get(g, "name"));
        if (!strcmp(name, "delivery p50")) {
            assert_true(fabs(num(g, "value") - (double)hist_percentile(all, 50) / 1e6) < 1e-6);
            assert_true(num(g, "value") < 30 && hist_percentile(b, 50) > 30000000);
            assert_true(json_is_true(json_object_get(g, "pass")));
            seen++;
        } else if (!strcmp(name, "lost")) {
            assert_true(num(g, "value") == 4 && json_is_false(json_object_get(g, "pass")));
            seen++;
        }
    }
    assert_int_equal(seen, 2);
    /* as a result file holds it: reals with 10 significant digits */
    json_t *one = latency_json(all);
    char *text = json_dumps(one, JSON_REAL_PRECISION(10));
    json_t *want = json_loads(text, 0, NULL);
    free(text);
    json_decref(one);
    assert_true(json_equal(json_path_get(m, "summary/latency/delivery"), want));
    /* the timeline's entries of the same interval add up the same way */
    assert_true(json_equal(json_path_get(json_array_get(json_object_get(m, "timeline"), 1), "latency/delivery"), want));
    /* and not what averaging the shards' p99 would give */
    json_t *j0 = load(f0), *j1 = load(f1);
    double avg = (num(j0, "summary/latency/delivery/p99") + num(j1, "summary/latency/delivery/p99")) / 2;
    assert_true(num(m, "summary/latency/delivery/p99") != avg);
    json_decref(j0);
    json_decref(j1);
    json_decref(want);

    /* counts add; errors add by class; examples are joined; the rate is recomputed */
    assert_true(num(m, "summary/sent") == (double)all->count);
    assert_true(num(m, "summary/lost") == 4 && num(m, "summary/pending") == 8 && num(m, "summary/corrupted") == 2);
    assert_true(num(m, "summary/delivered") == (double)all->count - 14);
    assert_true(num(m, "summary/errors") == 7);
    assert_true(num(m, "summary/errors_by_class/smtp_rcpt_450") == 4);
    assert_true(num(m, "summary/errors_by_class/pop3_pass_in_use") == 3);
    assert_int_equal(json_array_size(json_path_get(m, "summary/error_examples/smtp_rcpt_450")), 2);
    assert_int_equal(json_array_size(json_path_get(m, "summary/corruption_examples")), 2);
    assert_true(fabs(num(m, "duration_s") - 30.3) < 1e-9 && fabs(num(m, "elapsed_s") - 35.3) < 1e-9);
    assert_true(fabs(num(m, "summary/rate_in") - (double)all->count / 30.3) < 1e-6);
    /* the workload of the whole load: senders add up */
    assert_true(num(m, "workload/senders") == 40);
    assert_true(num(m, "shards/n") == 2);
    assert_int_equal(json_array_size(json_path_get(m, "shards/k")), 2);
    assert_true(json_is_true(json_path_get(m, "shards/complete")));
    assert_string_equal(json_string_value(json_path_get(m, "config/run/shard")), "0,1/2");
    assert_string_equal(json_string_value(json_object_get(m, "run_id")), "aaaaaaaa+bbbbbbbb");
    /* evidence moves onto the merged clock; settled only if every shard settled;
     * sweep passes are the most any shard made */
    const json_t *le = json_path_get(m, "summary/lost_examples");
    assert_int_equal(json_array_size(le), 2);
    assert_true(fabs(num(json_array_get(le, 0), "accepted_s") - 1.5) < 1e-9);
    assert_true(fabs(num(json_array_get(le, 1), "accepted_s") - 1.8) < 1e-9);
    assert_true(json_is_false(json_path_get(m, "summary/settled")));
    assert_true(num(m, "summary/sweep_passes") == 4);

    /* compare reads it like any other result file */
    char *cargv[] = { "compare", out };
    FILE *devnull = fopen("/dev/null", "w");
    assert_int_equal(cmd_compare_io(2, cargv, devnull, devnull), 0);
    fclose(devnull);
    json_decref(m);
    out_free(&o);
    free(a);
    free(b);
    free(all);
}

/* Shard B started 0.3 s after A: its entries land beside A's of the same interval,
 * on the merged clock; counts add, levels (conns) of one run are its last, and of
 * several runs add; nothing is lost or counted twice. */
static void timelines(void **st)
{
    struct hist *h = calloc(1, sizeof *h);
    hist_record(h, 1000000);
    struct shard_spec s1 = base0;
    s1.k = 1;
    s1.start_ms += 300;
    char *f0 = write_run("t0.json", &base0, h), *f1 = write_run("t1.json", &s1, h);
    /* an extra entry of B at the phase switch, 5 s before its last: two of B's
     * entries then share the last interval */
    json_t *b = load(f1);
    json_t *extra = json_pack("{s:f, s:s, s:i, s:i, s:i, s:{s:i}, s:i, s:{}}", "t", 25.0, "phase", "send", "sent",
                              100, "read", 0, "errors", 1, "errors_by_class", "smtp_eod_451", 1, "conns", 99,
                              "latency");
    json_array_insert_new(json_object_get(b, "timeline"), 2, extra);
    assert_int_equal(json_dump_file(b, f1, 0), 0);
    json_decref(b);
    char *out = tf_path("tl.json");
    char *argv[] = { "merge", f0, f1, "-o", out };
    struct out o = merge(5, argv);
    assert_int_equal(o.rc, MERGED);
    json_t *m = load(out);
    const json_t *tl = json_object_get(m, "timeline");
    assert_int_equal(json_array_size(tl), 3);
    assert_true(num(json_array_get(tl, 0), "t") == 10.3);
    assert_true(num(json_array_get(tl, 2), "t") == 30.3);
    assert_true(num(json_array_get(tl, 0), "sent") == 2);
    assert_true(num(json_array_get(tl, 2), "sent") == 3 + 100 + 3);
    assert_true(num(json_array_get(tl, 2), "errors_by_class/smtp_eod_451") == 1);
    assert_true(num(json_array_get(tl, 2), "conns") == 30 + 30);   /* B's last, not 99 + 30 */
    assert_true(num(json_array_get(tl, 0), "conns") == 20);
    /* B's rate over its own two intervals (5 s and 5 s), plus A's */
    assert_true(fabs(num(json_array_get(tl, 2), "rate_in") - (3.0 / 10 + 103.0 / 10)) < 1e-9);
    assert_string_equal(json_string_value(json_object_get(json_array_get(tl, 2), "phase")), "drain");
    assert_true(num(json_array_get(tl, 2), "latency/delivery/count") == 2);
    /* shards without a server side leave the server's rows out of the timeline */
    assert_null(json_object_get(json_array_get(tl, 0), "server"));
    json_decref(m);
    out_free(&o);
    free(h);
}

/* Every shard that sampled one server saw the same server: the one with the most
 * samples speaks for it. Two different servers add up: the same local settings on
 * two hosts are two servers, one probe pulled from two hosts is one. */
static void server_once(void **st)
{
    struct hist *h = calloc(1, sizeof *h);
    hist_record(h, 1000000);
    struct shard_spec s0 = base0, s1 = base0;
    s0.samples = 5;
    s0.mem = 100;
    s1.k = 1;
    s1.samples = 7;
    s1.mem = 110;
    s1.host = "load1";
    s1.start_ms += 200;
    char *f0 = write_run("s0.json", &s0, h), *f1 = write_run("s1.json", &s1, h);
    char *out = tf_path("srv.json");
    char *argv[] = { "merge", f0, f1, "-o", out };
    struct out o = merge(5, argv);
    assert_int_equal(o.rc, MERGED);
    json_t *m = load(out);
    assert_true(num(m, "summary/mem") == 110);
    assert_true(num(m, "summary/log_classes/lock/count") == 2);
    assert_true(num(m, "summary/server_samples") == 7);
    assert_true(num(json_array_get(json_object_get(m, "timeline"), 0), "server/mem") == 111);
    json_decref(m);
    out_free(&o);

    s1.host = "load2";               /* the same settings on another host: another server */
    f1 = write_run("s1.json", &s1, h);
    o = merge(5, argv);
    assert_int_equal(o.rc, MERGED);
    m = load(out);
    assert_true(num(m, "summary/mem") == 210);
    assert_true(num(m, "summary/log_classes/lock/count") == 4);
    assert_true(num(json_array_get(json_object_get(m, "timeline"), 0), "server/mem") == 101 + 111);
    assert_true(num(json_array_get(json_object_get(m, "timeline"), 0), "server/input") == 10);
    assert_true(num(m, "servers/mx/mem") == 100 && num(m, "servers/mx#2/mem") == 110);
    assert_true(fabs(num(json_array_get(json_path_get(m, "servers/mx#2/window_s"), 0), "") - 0.7) < 1e-9);
    json_decref(m);
    out_free(&o);

    /* shards on two hosts pulling one probe: one server, whatever the hosts */
    const char *files[] = { f0, f1 };
    for (int i = 0; i < 2; i++) {
        json_t *b = load(files[i]);
        json_object_set_new(json_object_get(b, "config"), "server",
                            json_pack("{s:[], s:[s]}", "pidfile", "probe", "http://198.18.0.1:9465"));
        assert_int_equal(json_dump_file(b, files[i], 0), 0);
        json_decref(b);
    }
    o = merge(5, argv);
    assert_int_equal(o.rc, MERGED);
    m = load(out);
    assert_true(num(m, "summary/mem") == 110);
    assert_int_equal(json_object_size(json_object_get(m, "servers")), 1);
    assert_true(num(m, "servers/mx/mem") == 110);
    json_decref(m);
    out_free(&o);
    free(h);
}

/* What cannot be added up is refused, naming why, and the output stays as it was;
 * --force merges different workloads and overlapping shards, never files without
 * histogram buckets. */
static void refusals(void **st)
{
    struct hist *h = calloc(1, sizeof *h);
    hist_record(h, 1000000);
    char *out = tf_write("keep.json", "untouched\n");
    struct shard_spec s1 = base0;
    s1.k = 1;
    s1.size = "0-2000";
    char *f0 = write_run("r0.json", &base0, h), *f1 = write_run("r1.json", &s1, h);
    char *argv[] = { "merge", f0, f1, "-o", out, "--force" };
    struct out o = merge(5, argv);
    assert_int_equal(o.rc, 2);
    assert_non_null(strstr(o.err, "different workloads: size"));
    out_free(&o);
    char *text = tf_slurp(out);
    assert_string_equal(text, "untouched\n");
    free(text);
    o = merge(6, argv);
    assert_int_equal(o.rc, MERGED);
    assert_non_null(strstr(o.err, "warning: different workloads"));
    out_free(&o);

    s1 = base0;                      /* the same shard twice */
    f1 = write_run("r1.json", &s1, h);
    tf_write("keep.json", "untouched\n");
    o = merge(5, argv);
    assert_int_equal(o.rc, 2);
    assert_non_null(strstr(o.err, "shard 0/2 is in both"));
    out_free(&o);
    s1.n = 3;                        /* cut differently */
    f1 = write_run("r1.json", &s1, h);
    o = merge(5, argv);
    assert_int_equal(o.rc, 2);
    assert_non_null(strstr(o.err, "shards cut differently"));
    out_free(&o);

    s1 = base0;
    s1.k = 1;
    f1 = write_run("r1.json", &s1, h);
    json_t *b = load(f1);            /* a file of an older mailsoak: no buckets */
    json_object_del(json_object_get(json_path_get(b, "summary/latency"), "delivery"), "hist");
    json_dump_file(b, f1, 0);
    json_decref(b);
    o = merge(6, argv);
    assert_int_equal(o.rc, 2);
    assert_non_null(strstr(o.err, "no histogram buckets"));
    out_free(&o);
    text = tf_slurp(out);
    assert_string_equal(text, "untouched\n");
    free(text);

    /* one shard of two: merged, with a warning that half the users are missing */
    char *argv1[] = { "merge", f0, "-o", out };
    o = merge(4, argv1);
    assert_int_equal(o.rc, MERGED);
    assert_non_null(strstr(o.err, "1 of 2 shards missing (1)"));
    json_t *m = load(out);
    assert_true(json_is_false(json_path_get(m, "shards/complete")));
    json_decref(m);
    out_free(&o);
    char *argv2[] = { "merge", f0 };
    o = merge(2, argv2);
    assert_int_equal(o.rc, 2);
    assert_non_null(strstr(o.err, "no output file"));
    out_free(&o);
    free(h);
}

/* Shards 0/2 and 1/2 of one latency in files NAME0.json and NAME1.json, their gate
 * settings removed (preset NULL: an older mailsoak's) or their preset replaced. */
static void shards_with_preset(const char *name, const char *preset, struct hist *h, char *f[2])
{
    struct shard_spec s1 = base0;
    s1.k = 1;
    char file[64];
    for (int i = 0; i < 2; i++) {
        snprintf(file, sizeof file, "%s%d.json", name, i);
        f[i] = write_run(file, i ? &s1 : &base0, h);
        json_t *j = load(f[i]), *cfg = json_object_get(j, "config");
        if (preset)
            json_object_set_new(json_object_get(cfg, "gate"), "preset", json_string(preset));
        else
            json_object_del(cfg, "gate");
        assert_int_equal(json_dump_file(j, f[i], 0), 0);
        json_decref(j);
    }
}

/* Files without gate settings (an older mailsoak's): still merged exactly, with a
 * warning that the whole load has no verdict, and exit 0, not a gate's status. */
static void no_gates_no_verdict(void **st)
{
    (void)st;
    struct hist *h = calloc(1, sizeof *h);
    hist_record(h, 1000000);
    char *f[2];
    shards_with_preset("g", NULL, h, f);
    char *out = tf_path("g.json");
    char *argv[] = { "merge", f[0], f[1], "-o", out };
    struct out o = merge(5, argv);
    assert_int_equal(o.rc, 0);
    assert_non_null(strstr(o.err, "no verdict for the merged load: its [gate] settings are missing"));
    json_t *m = load(out);
    assert_null(json_object_get(m, "verdict"));
    assert_true(num(m, "summary/lost") == 4);
    json_decref(m);
    out_free(&o);
    free(h);
}

/* Gate settings with control bytes (a damaged or hostile file; a run writes none):
 * no verdict, and the bytes never reach the terminal, not even through the settings'
 * own complaint on stderr. */
static void hostile_gates_stay_off_the_terminal(void **st)
{
    (void)st;
    struct hist *h = calloc(1, sizeof *h);
    hist_record(h, 1000000);
    char *f[2];
    shards_with_preset("x", "x\x1b[2J\xc2\x9b", h, f);
    char *out = tf_path("x.json"), *errpath = tf_path("x.stderr");
    char *argv[] = { "merge", f[0], f[1], "-o", out };
    fflush(stderr);
    int saved = dup(2), fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    struct out o = merge(5, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    assert_int_equal(o.rc, 0);
    assert_non_null(strstr(o.err, "no verdict for the merged load"));
    char buf[4096] = "";
    FILE *e = fopen(errpath, "r");
    assert_non_null(e);
    size_t n = fread(buf, 1, sizeof buf - 1, e);
    fclose(e);
    buf[n] = 0;
    if (strchr(buf, '\x1b') || strstr(buf, "\xc2\x9b") || strchr(o.err, '\x1b'))
        fail_msg("a control byte reached stderr: %s%s", buf, o.err);
    out_free(&o);
    free(h);
}

/* A flag that does not apply to one shard (settled is null when it needed no
 * sweep) is the others'; counts whose sum does not fit are refused as a conflict
 * (null, with a warning), never wrapped. */
static void unknowns(void **st)
{
    struct hist *h = calloc(1, sizeof *h);
    hist_record(h, 1000000);
    struct shard_spec s1 = base0;
    s1.k = 1;
    char *f0 = write_run("u0.json", &base0, h), *f1 = write_run("u1.json", &s1, h);
    json_t *b = load(f1);
    json_object_set_new(json_object_get(b, "summary"), "settled", json_null());
    json_object_set_new(json_object_get(b, "summary"), "peeked", json_integer(INT64_MAX));
    assert_int_equal(json_dump_file(b, f1, 0), 0);
    json_decref(b);
    b = load(f0);
    json_object_set_new(json_object_get(b, "summary"), "peeked", json_integer(1));
    assert_int_equal(json_dump_file(b, f0, 0), 0);
    json_decref(b);
    char *out = tf_path("u.json");
    char *argv[] = { "merge", f0, f1, "-o", out };
    struct out o = merge(5, argv);
    assert_int_equal(o.rc, MERGED);
    assert_non_null(strstr(o.err, "summary.peeked: the files disagree"));
    json_t *m = load(out);
    assert_true(json_is_true(json_path_get(m, "summary/settled")));
    assert_true(json_is_null(json_path_get(m, "summary/peeked")));
    json_decref(m);
    out_free(&o);
    free(h);
}

/* Shards 0/2 and 1/2 in NAME0.json and NAME1.json whose ledgers are set here: each
 * shard's delivered, duplicated, pending and settled (read = delivered + duplicated,
 * the copies read again), nothing lost or corrupted, the gates integrity with
 * settled = yes and proven 0.5, no latency or error gate. */
struct ledger_spec {
    int delivered, duplicated, pending, settled;
};
static void shards_with_ledgers(const char *name, const struct ledger_spec l[2], struct hist *h, char *f[2])
{
    struct shard_spec s1 = base0;
    s1.k = 1;
    char file[64];
    for (int i = 0; i < 2; i++) {
        snprintf(file, sizeof file, "%s%d.json", name, i);
        f[i] = write_run(file, i ? &s1 : &base0, h);
        json_t *j = load(f[i]), *s = json_object_get(j, "summary");
        int sent = l[i].delivered + l[i].duplicated + l[i].pending;
        json_object_set_new(s, "sent", json_integer(sent));
        json_object_set_new(s, "read", json_integer(l[i].delivered + 2 * l[i].duplicated));
        json_object_set_new(s, "delivered", json_integer(l[i].delivered));
        json_object_set_new(s, "duplicated", json_integer(l[i].duplicated));
        json_object_set_new(s, "pending", json_integer(l[i].pending));
        json_object_set_new(s, "pending_unsettled", json_integer(l[i].pending));
        json_object_set_new(s, "lost", json_integer(0));
        json_object_set_new(s, "corrupted", json_integer(0));
        json_object_set_new(s, "errors", json_integer(0));
        json_object_set_new(s, "errors_by_class", json_object());
        json_object_set_new(s, "settled", json_boolean(l[i].settled));
        json_object_set_new(json_object_get(json_object_get(j, "config"), "gate"), "settled", json_string("yes"));
        json_object_set_new(json_object_get(json_object_get(j, "config"), "gate"), "proven", json_string("0.5"));
        json_object_set_new(json_object_get(json_object_get(j, "config"), "gate"), "latency", json_array());
        assert_int_equal(json_dump_file(j, f[i], 0), 0);
        json_decref(j);
    }
}

/* The name of the merged verdict's failed gates, comma-separated. */
static char *failed_gates(const json_t *m, char *buf, size_t n)
{
    size_t i;
    const json_t *g;
    buf[0] = 0;
    json_array_foreach(json_path_get(m, "verdict/gates/failed"), i, g)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? "," : "", json_string_value(g));
    return buf;
}

/* The merged load is judged as one: a shard that never settled leaves the whole
 * load unsettled, and the settled gate fails (exit 4) though the other shard
 * settled and nothing was lost. */
static void a_merged_load_that_never_settled_fails(void **st)
{
    (void)st;
    struct hist *h = calloc(1, sizeof *h);
    hist_record(h, 1000000);
    char *f[2], gates[200];
    const struct ledger_spec l[2] = { { 100, 0, 0, 1 }, { 90, 0, 10, 0 } };
    shards_with_ledgers("ns", l, h, f);
    char *out = tf_path("ns.json");
    char *argv[] = { "merge", f[0], f[1], "-o", out };
    struct out o = merge(5, argv);
    assert_int_equal(o.rc, 4);
    json_t *m = load(out);
    assert_true(json_is_false(json_path_get(m, "summary/settled")));
    assert_string_equal(failed_gates(m, gates, sizeof gates), "settled");
    assert_string_equal(json_string_value(json_path_get(m, "verdict/state")), "unproven");
    json_decref(m);
    out_free(&o);
    free(h);
}

/* Copies read twice are duplicates, not deliveries: the merged proven share is the
 * messages delivered exactly once over those accepted (never above 100 %), and a
 * load whose only fault is duplicates reads FAILED with the duplicated gate's exit 4. */
static void duplicates_are_no_deliveries(void **st)
{
    (void)st;
    struct hist *h = calloc(1, sizeof *h);
    hist_record(h, 1000000);
    char *f[2], gates[200];
    const struct ledger_spec l[2] = { { 98, 2, 0, 1 }, { 100, 0, 0, 1 } };
    shards_with_ledgers("dp", l, h, f);
    char *out = tf_path("dp.json");
    char *argv[] = { "merge", f[0], f[1], "-o", out };
    struct out o = merge(5, argv);
    assert_int_equal(o.rc, 4);
    json_t *m = load(out);
    assert_true(num(m, "summary/read") == 202);
    assert_true(num(m, "verdict/proven") == 198);
    assert_true(fabs(num(m, "verdict/proven_share") - 0.99) < 1e-9);
    assert_string_equal(json_string_value(json_path_get(m, "verdict/state")), "failed");
    assert_string_equal(failed_gates(m, gates, sizeof gates), "duplicated");
    assert_non_null(strstr(o.out, "FAILED: 0 lost, 2 duplicated, 0 corrupted of 200 accepted"));
    json_decref(m);
    out_free(&o);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_percentiles), cmocka_unit_test(timelines), cmocka_unit_test(server_once),
        cmocka_unit_test(refusals), cmocka_unit_test(unknowns), cmocka_unit_test(no_gates_no_verdict),
        cmocka_unit_test(hostile_gates_stay_off_the_terminal), cmocka_unit_test(a_merged_load_that_never_settled_fails),
        cmocka_unit_test(duplicates_are_no_deliveries),
    };
    return cmocka_run_group_tests(tests, tf_setup, getenv("KEEP") ? NULL : tf_teardown);
}
