/* Unit tests of the result file both ways: a run's result (result/run_result.h)
 * with every figure the reader's table names set to a value of its own, written
 * by result/run_json.c, put on disk atomically and read back by result_load
 * (result/result.c). Walking the reader's own table (result_field_table), every
 * key must come back as the value the run had: a key added to the table that the
 * writer does not write, or writes from another figure, fails here, and so does
 * one the test does not know yet. The families beside the table (pending by
 * reason, errors by class, the latencies' histograms), the envelope and the
 * messages shown one by one with their trails (what compare and report read) too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/alloc.h"
#include "lib/hist.h"
#include "lib/json.h"
#include "lib/version.h"
#include "result/result.h"
#include "result/run_json.h"
#include "result/run_result.h"
#include "settings/config.h"
#include "tmpdir.h"

/* The value a key of the reader's table should read back as. */
struct want {
    const char *path;
    enum result_field_type type;
    uint64_t u;                      /* RT_COUNT, RT_I64 */
    double d;                        /* RT_NUM */
    int b;                           /* RT_BOOL, RT_TRI */
    const char *s;                   /* RT_STR */
};

#define U(p, v) { p, RT_COUNT, (v), 0, 0, NULL }
#define D(p, v) { p, RT_NUM, 0, (v), 0, NULL }
#define B(p, v) { p, RT_BOOL, 0, 0, (v), NULL }
#define T(p, v) { p, RT_TRI, 0, 0, (v), NULL }
#define S(p, v) { p, RT_STR, 0, 0, 0, (v) }

struct fixture {
    struct config cfg;
    struct run_result r;
    char path[300];
};

/* Every counter and outcome its own value: no two alike, none 0, so a key written
 * from the wrong figure reads back as another's. */
static void distinct(uint64_t *v, size_t n, uint64_t base)
{
    for (size_t i = 0; i < n; i++)
        v[i] = base + 7 * i;
}

static void fill_result(struct fixture *fx)
{
    struct run_result *r = &fx->r;
    memset(r, 0, sizeof *r);
    r->cfg = &fx->cfg;
    snprintf(r->run_id, sizeof r->run_id, "%s", "a1b2c3d4");
    r->seed = 424242;
    r->start_unix_ms = 1780000000123ull;
    snprintf(r->host, sizeof r->host, "roundtrip.test");
    snprintf(r->start_time, sizeof r->start_time, "2026-05-28T20:26:40Z");
    r->duration_s = 61.25;
    r->elapsed_s = 97.5;
    r->interrupted = 1;
    r->users = r->users_total = 50;
    _Static_assert(sizeof r->c % sizeof(uint64_t) == 0, "struct counters: uint64_t only");
    distinct((uint64_t *)(void *)&r->c, sizeof r->c / sizeof(uint64_t), 1000);
    /* the outcomes' uint64_t fields, up to the two uint32_t at their end */
    distinct((uint64_t *)(void *)&r->lo, offsetof(struct ledger_outcome, retried_max_tries) / sizeof(uint64_t), 5001);
    r->lo.retried_max_tries = 3;
    r->lo.retried_max_ms = 4000;
    r->swept = 1;
    r->settled = 1;
    r->sweep_passes = 77;
    r->arrivals_owed = 11;
    r->arrivals_held = 9001;
    r->retry_left = 13;
    r->nerr = 2;
    snprintf(r->err[0].name, sizeof r->err[0].name, "smtp.connect.refused");
    r->err[0].count = 17;
    snprintf(r->err[1].name, sizeof r->err[1].name, "pop3.retr.timeout");
    r->err[1].count = 19;
    for (unsigned k = 0; k < LAT_COUNT; k++)
        for (unsigned i = 0; i <= k; i++)
            hist_record(&r->lat[k], 1000000ull * (k + 1) + 1000 * i);
    r->timeline = json_array();
    /* a lost message with its trail in the logs, a corrupted one with none read */
    r->nexamples[EX_LOST] = 1;
    struct message_example *x = &r->examples[EX_LOST][0];
    *x = (struct message_example){ .seq = 0x2a, .entry = 0x2b, .mailbox = xstrdup("user0007@test.local"),
                                   .accepted_ms = 1500, .read_ms = 42250, .reads = 0, .queue_id = xstrdup("4XyZ1B"),
                                   .has_trail = 1 };
    x->trail = (struct example_trail){ .cause = TC_BOUNCED, .cause_line = xstrdup("status=bounced (550 no)"),
                                       .last_queue = "active", .left = "left", .nlines = 23, .skipped = 20, .n = 3 };
    for (unsigned i = 0; i < 3; i++)
        x->trail.lines[i] = xasprintf("line %u of 4XyZ1B", i);
    r->nexamples[EX_CORRUPTED] = 1;
    x = &r->examples[EX_CORRUPTED][0];
    *x = (struct message_example){ .seq = 0x30, .entry = 0x30, .mailbox = xstrdup("user0009@test.local"),
                                   .accepted_ms = 2500, .reads = 1, .queue_id = xstrdup(""),
                                   .differs = xstrdup("body: byte 12") };
}

static int setup(void **st)
{
    struct fixture *fx = xcalloc(1, sizeof *fx);
    const char *argv[] = { "--smtp", "127.0.0.1:25", "--senders", "7", "--readers", "9", "--messages", "123",
                           "--rate", "45.5", "--set", "smtp.retry=yes", "--set", "readers.protocol=imap",
                           "--set", "imap.target=127.0.0.1:143", "--set", "run.label=roundtrip" };
    assert_int_equal(config_from_args(&fx->cfg, sizeof argv / sizeof *argv, (char **)argv), 0);
    fill_result(fx);
    char name[64];
    snprintf(name, sizeof name, "test_result_roundtrip.%ld.json", (long)getpid());
    test_tmpname(fx->path, sizeof fx->path, name);
    *st = fx;
    return 0;
}

static int teardown(void **st)
{
    struct fixture *fx = *st;
    run_result_free(&fx->r);
    config_free(&fx->cfg);
    unlink(fx->path);
    free(fx);
    return 0;
}

/* What each key of the table must read back as, from the run's result. */
static size_t wants(const struct run_result *r, struct want *w, size_t max)
{
    const struct config *cfg = r->cfg;
    const struct counters *c = &r->c;
    const struct ledger_outcome *lo = &r->lo;
    const struct want v[] = {
        S("version", mailsoak_version), S("run_id", r->run_id), S("start_time", r->start_time),
        U("seed", r->seed), D("duration_s", r->duration_s), D("elapsed_s", r->elapsed_s),
        B("interrupted", r->interrupted),
        U("workload/senders", cfg->senders), U("workload/readers", cfg->readers),
        U("workload/messages", cfg->messages), D("workload/rate", cfg->rate),
        U("summary/sent", c->sent), U("summary/read", c->read), U("summary/errors", c->errors),
        U("summary/rejected", c->rejected), U("summary/foreign", c->foreign), U("summary/stale", c->stale),
        U("summary/peeked", c->peeked), U("summary/unattributed", c->corrupt_unattributed),
        U("summary/empty_body_as_line", c->empty_body_as_line), U("summary/tls_handshakes", c->tls_handshakes),
        U("summary/tls_resumed", c->tls_resumed), U("summary/deferrals", c->deferrals),
        U("summary/bounced", c->bounced), U("summary/push_busy", c->push_busy),
        U("summary/push_missed", c->push_missed), U("summary/imap_commands", c->imap_commands),
        U("summary/imap_round_trips", c->imap_rounds),
        U("summary/delivered", lo->delivered), U("summary/duplicated", lo->duplicated),
        U("summary/corrupted", lo->corrupted), U("summary/lost", lo->lost), U("summary/pending", lo->pending),
        U("summary/late", lo->late), U("summary/unconfirmed", lo->unconfirmed),
        U("summary/deferred_attempts", lo->deferred), U("summary/retried", lo->retried),
        U("summary/retried_tries", lo->retried_tries),
        T("summary/settled", r->settled), U("summary/sweep_passes", r->sweep_passes),
        U("summary/arrivals/due", c->arrivals + r->arrivals_owed), U("summary/arrivals/started", c->arrivals),
        U("summary/arrivals/late_busy", c->late_busy), U("summary/arrivals/late_engine", c->late_engine),
        U("summary/arrivals/never_started", r->arrivals_held),
    };
    size_t n = sizeof v / sizeof *v;
    assert_true(n <= max);
    memcpy(w, v, sizeof v);
    return n;
}

static const struct want *want_of(const struct want *w, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(w[i].path, path))
            return &w[i];
    return NULL;
}

/* Written, on disk atomically, read back: the document loaded (its envelope checked). */
static void write_and_load(struct fixture *fx, struct result *res)
{
    char err[300];
    json_t *root = run_result_json(&fx->r);
    assert_non_null(root);
    assert_int_equal(write_json_atomic(fx->path, root, err, sizeof err), 0);
    json_decref(root);
    if (result_load(res, fx->path, err, sizeof err) < 0)
        fail_msg("result_load: %s", err);
}

static void every_table_key_survives(void **st)
{
    struct fixture *fx = *st;
    struct want w[128];
    size_t nw = wants(&fx->r, w, sizeof w / sizeof *w);
    /* no two counts alike, none the default: a key read from the wrong figure shows */
    for (size_t i = 0; i < nw; i++) {
        if (w[i].type != RT_COUNT)
            continue;
        assert_true(w[i].u != 0);
        for (size_t j = i + 1; j < nw; j++)
            if (w[j].type == RT_COUNT && w[i].u == w[j].u)
                fail_msg("%s and %s both %llu: the fixture must tell them apart", w[i].path, w[j].path,
                         (unsigned long long)w[i].u);
    }
    struct result res;
    write_and_load(fx, &res);
    size_t checked = 0;
    for (const struct result_field *f = result_field_table(); f->path; f++, checked++) {
        const struct want *x = want_of(w, nw, f->path);
        if (!x)
            fail_msg("the reader's table has \"%s\", which this test does not know: add what it should read", f->path);
        assert_int_equal(x->type, f->type);
        const char *p = (const char *)&res + f->off;
        switch (f->type) {
        case RT_COUNT:
        case RT_I64:
            if (*(const uint64_t *)(const void *)p != x->u)
                fail_msg("%s: read %llu, the run had %llu", f->path,
                         (unsigned long long)*(const uint64_t *)(const void *)p, (unsigned long long)x->u);
            break;
        case RT_NUM:
            if (*(const double *)(const void *)p != x->d)
                fail_msg("%s: read %g, the run had %g", f->path, *(const double *)(const void *)p, x->d);
            break;
        case RT_BOOL:
        case RT_TRI:
            if (*(const int *)(const void *)p != x->b)
                fail_msg("%s: read %d, the run had %d", f->path, *(const int *)(const void *)p, x->b);
            break;
        case RT_STR: {
            const char *got = *(char *const *)(const void *)p;
            if (!got || strcmp(got, x->s))
                fail_msg("%s: read \"%s\", the run had \"%s\"", f->path, got ? got : "(none)", x->s);
            break;
        }
        case RT_PHASE:
            fail_msg("%s: a phase is a timeline entry's, not the file's", f->path);
        }
    }
    assert_int_equal(checked, nw);   /* and the test knows no key the reader lost */
    assert_int_equal(res.missing[0], 0);
    result_free(&res);
}

static void envelope_and_families_survive(void **st)
{
    struct fixture *fx = *st;
    const struct run_result *r = &fx->r;
    struct result res;
    write_and_load(fx, &res);
    assert_int_equal(res.format_version, RESULT_FORMAT_VERSION);
    assert_string_equal(res.label, "roundtrip");
    char err[200];
    assert_int_equal(result_complete(&res, err, sizeof err), 0);
    for (unsigned k = 0; k < PR_COUNT; k++)
        if (res.lo.pending_by[k] != r->lo.pending_by[k])
            fail_msg("pending_%s: read %llu, the run had %llu", pending_reason_names[k],
                     (unsigned long long)res.lo.pending_by[k], (unsigned long long)r->lo.pending_by[k]);
    assert_int_equal(res.nerr, r->nerr);
    for (unsigned i = 0; i < r->nerr; i++) {
        assert_string_equal(res.err[i].name, r->err[i].name);
        assert_int_equal(res.err[i].count, r->err[i].count);
    }
    assert_string_equal(res.hist_err, "");
    for (unsigned k = 0; k < LAT_COUNT; k++) {
        const struct hist *a = &r->lat[k], *b = &res.hist[k];
        assert_int_equal(res.lat[k].count, a->count);
        assert_int_equal(b->count, a->count);
        assert_int_equal(b->min, a->min);
        assert_int_equal(b->max, a->max);
        assert_int_equal(hist_percentile(b, 50), hist_percentile(a, 50));
        assert_int_equal(hist_percentile(b, 99), hist_percentile(a, 99));
    }
    result_free(&res);
}

/* The messages shown one by one, as compare and report read them (result/display.h). */
static void examples_survive(void **st)
{
    struct fixture *fx = *st;
    const struct run_result *r = &fx->r;
    struct result res;
    write_and_load(fx, &res);
    const struct result_messages *lost = &res.display.lost, *corrupted = &res.display.corrupted;
    assert_int_equal(lost->n, 1);
    const struct result_message *m = &lost->v[0];
    char id[64], mid[80], at[40];
    msg_ids(r, 0x2a, id, sizeof id, mid, sizeof mid);
    assert_string_equal(m->id, id);
    assert_string_equal(m->id, "a1b2c3d4-2a");
    assert_string_equal(m->message_id, mid);
    assert_string_equal(m->queue_id, "4XyZ1B");
    assert_string_equal(m->mailbox, "user0007@test.local");
    assert_string_equal(m->accepted, run_time(r, 1500, at, sizeof at));
    assert_string_equal(m->mailbox_read, run_time(r, 42250, at, sizeof at));
    assert_true(m->ev.has);
    assert_string_equal(m->ev.cause, trail_cause_names[TC_BOUNCED]);
    assert_string_equal(m->ev.cause_line, "status=bounced (550 no)");
    assert_string_equal(m->ev.lines, "23");
    assert_int_equal(m->ev.ntrail, 3);
    for (unsigned i = 0; i < 3; i++)
        assert_string_equal(m->ev.trail[i], r->examples[EX_LOST][0].trail.lines[i]);
    assert_int_equal(corrupted->n, 1);
    assert_string_equal(corrupted->v[0].mailbox, "user0009@test.local");
    assert_false(corrupted->v[0].ev.has);     /* no log was read: null, not an empty trail */
    assert_int_equal(res.display.duplicated.n, 0);
    result_free(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_table_key_survives, setup, teardown),
        cmocka_unit_test_setup_teardown(envelope_and_families_survive, setup, teardown),
        cmocka_unit_test_setup_teardown(examples_survive, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
