/* Unit tests of the probe's data path: a series keeps its indexes across dropped
 * samples and cuts summaries from the baseline on; what a probe encodes, a puller
 * decodes into an equal series; a response that breaks a rule is refused whole;
 * a restarted probe's counters carry on; the clock estimate takes the quickest
 * exchange; probe specs parse; /time's reading goes both ways. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/alloc.h"
#include "probe/series.h"
#include "probe/wire.h"
#include "run/remote.h"

static const char *const names[] = { "lock", "fatal" };

static struct series *make(uint64_t keep)
{
    struct series_opts o = { .has = { 1, 1, 1, 1, 1, DBK_PGSQL }, .t0 = 1000, .classes = names, .ncls = 2, .examples = 2,
                             .keep_ns = keep };
    return series_new(&o);
}

/* Sample k: at 1000 + 100 k ns, I/O growing by 10 a sample, a lock hit on odd k
 * with one line, mem peaking at k = 3. */
static void add(struct series *s, unsigned k)
{
    struct probe_sample x = { .t = 1000 + 100 * (uint64_t)k, .mem = k == 3 ? 900 : 100 + k, .spool = k,
                              .store_messages = 2 * k, .crashes = k / 4, .procs = 3, .log_lines = k % 2 };
    x.io.syscr = 10 * k;
    x.io.wchar = 7 * k;
    x.io.cpu_ms = 30 * k;
    /* the parts, the database's counters: each field its own value, so a field the
     * wire drops or swaps shows */
    for (int p = 0; p < PROBE_NPARTS; p++) {
        x.part[p] = (struct probe_use){ .mem = 1000u * (unsigned)p + k, .pss = 500u * (unsigned)p + k, .procs = (unsigned)p + 1 };
        x.part[p].io.cpu_ms = 10 * k + (unsigned)p;
        x.part[p].io.rchar = 100 * k + (unsigned)p;
        x.part[p].io.cancelled_write_bytes = (unsigned)p;
    }
    x.db = (struct probe_db){ .lock_waits = k, .waiting = k % 3, .deadlocks = k / 2, .errors = 2 * k, .conns = 7 + k,
                              .conns_max = 197, .unreadable = k / 5 };
    uint64_t hits[2] = { k % 2, 0 };
    struct series_line *l = xcalloc(3, sizeof *l);
    size_t n = 0;
    if (k % 2) {
        char b[32];
        for (int i = 0; i < 3; i++) {        /* three lines: the series keeps two */
            snprintf(b, sizeof b, "lock %u.%d", k, i);
            l[n++] = (struct series_line){ x.t, 0, xstrdup(b) };
        }
    }
    series_add(s, &x, hits, l, n);
    free(l);
}

static void series_cuts(void **st)
{
    struct series *s = make(0);
    for (unsigned k = 0; k < 10; k++)
        add(s, k);
    series_event(s, 1450, "crash", "master 42 gone");
    struct probe_summary sum;
    series_summary(s, 1250, &sum);          /* baseline: sample 2 (t 1200) */
    assert_int_equal(sum.first.io.syscr, 20);
    assert_int_equal(sum.last.io.syscr, 90);
    assert_int_equal(sum.last.crashes, 2);  /* 9/4 - 2/4 */
    assert_int_equal(sum.samples, 8);
    assert_int_equal(sum.mem_peak, 900);
    assert_int_equal(sum.log_hits, 4);      /* samples 3, 5, 7, 9 */
    assert_int_equal(sum.ncls, 2);
    assert_int_equal(sum.classes[0].count, 4);
    assert_int_equal(sum.classes[0].nex, 2);
    assert_string_equal(sum.classes[0].ex[0].line, "lock 3.0");
    assert_string_equal(sum.classes[0].ex[1].line, "lock 3.1");
    assert_int_equal(sum.classes[1].count, 0);
    probe_summary_free(&sum);

    struct probe_interval iv;
    series_interval(s, 1350, 1750, &iv);    /* (3, 7]: samples 4..7 */
    assert_int_equal(iv.to.io.syscr - iv.from.io.syscr, 40);
    assert_int_equal(iv.classes[0].count, 2);
    probe_interval_free(&iv);

    struct series_now now;
    series_now(s, &now);                    /* from the series' own t0: sample 0 */
    assert_int_equal(now.spool, 9);
    assert_int_equal(now.log_hits, 5);
    assert_int_equal(now.crashes, 2);
    struct probe_events ev;
    series_events(s, 1000, &ev);
    assert_int_equal(ev.n, 1);
    assert_string_equal(ev.v[0].kind, "crash");
    probe_events_free(&ev);
    series_free(s);
}

static int count_visit(void *ud, uint64_t idx, const struct probe_sample *x, const uint64_t *hits,
                       const struct series_line *lines, size_t nlines)
{
    uint64_t *v = ud;
    if (!v[1])
        v[0] = idx;                          /* the first index visited */
    v[1]++;
    return 0;
}

static void series_keep(void **st)
{
    struct series *s = make(350);           /* keeps samples at most 350 ns older than the newest */
    for (unsigned k = 0; k < 10; k++)
        add(s, k);
    uint64_t next, nev, v[2] = { 0 };
    series_next(s, &next, &nev);
    assert_int_equal(next, 10);
    /* asked from index 0, the oldest kept (6: 900 - 600 > 350 dropped it... 5 is 400 old) comes first */
    assert_int_equal(series_each(s, 0, 100, count_visit, v), 10);
    assert_int_equal(v[0], 6);
    assert_int_equal(v[1], 4);
    memset(v, 0, sizeof v);
    assert_int_equal(series_each(s, 8, 1, count_visit, v), 9);
    assert_int_equal(v[0], 8);
    assert_int_equal(series_class_total(s, 0), 5);   /* dropped samples' hits still counted */
    series_free(s);
}

static void roundtrip(void **st)
{
    struct series *s = make(0);
    for (unsigned k = 0; k < 6; k++)
        add(s, k);
    series_event(s, 1234, "log_rotated", "a \x1b[31m control byte");
    struct wire_state w = { .examples = 2 };
    /* a first pull without since: the newest sample only, the baseline */
    json_t *j = wire_encode(s, "p1", "mx1", 5000, &(struct wire_query){ 0 });
    char *txt = json_dumps(j, 0);
    char err[300];
    assert_int_equal(wire_decode(&w, txt, strlen(txt), err, sizeof err), 0);
    free(txt);
    json_decref(j);
    assert_string_equal(w.host, "mx1");
    assert_int_equal(w.probe_now, 5000);
    assert_true(w.next.has_since && w.next.since == 6 && w.next.has_events && w.next.events == 1);
    for (unsigned k = 6; k < 9; k++)
        add(s, k);
    w.next.events = 0;                       /* ask for the old event too */
    j = wire_encode(s, "p1", "mx1", 6000, &w.next);
    txt = json_dumps(j, 0);
    assert_int_equal(wire_decode(&w, txt, strlen(txt), err, sizeof err), 0);
    free(txt);
    json_decref(j);

    struct probe_summary a, b;
    series_summary(s, 1500, &a);
    series_summary(w.series, 1500, &b);
    assert_memory_equal(&a.first, &b.first, sizeof a.first);
    assert_memory_equal(&a.last, &b.last, sizeof a.last);
    assert_int_equal(b.last.db.deadlocks, 4);
    assert_int_equal(b.last.part[PART_DB].io.cpu_ms, 82);
    assert_int_equal(b.has.db, DBK_PGSQL);
    assert_memory_equal(a.part_mem_peak, b.part_mem_peak, sizeof a.part_mem_peak);
    assert_int_equal(a.db_conns_peak, b.db_conns_peak);
    assert_int_equal(a.log_hits, b.log_hits);
    assert_int_equal(a.classes[0].count, b.classes[0].count);
    assert_int_equal(a.classes[0].nex, b.classes[0].nex);
    for (size_t i = 0; i < a.classes[0].nex; i++)
        assert_string_equal(a.classes[0].ex[i].line, b.classes[0].ex[i].line);
    probe_summary_free(&a);
    probe_summary_free(&b);
    struct probe_events ev;
    series_events(w.series, 0, &ev);
    assert_int_equal(ev.n, 1);
    assert_string_equal(ev.v[0].text, "a \\x1b[31m control byte");   /* printable() on the way */
    probe_events_free(&ev);

    /* the probe restarted: new id, its counters from zero; ours carry on */
    struct series *s2 = make(0);
    add(s2, 0);
    add(s2, 1);
    j = wire_encode(s2, "p2", "mx1", 100, &w.next);
    txt = json_dumps(j, 0);
    assert_int_equal(wire_decode(&w, txt, strlen(txt), err, sizeof err), 0);
    assert_int_equal(w.restarts, 1);
    assert_false(w.next.has_since);          /* next: the new probe's newest sample */
    free(txt);
    json_decref(j);
    j = wire_encode(s2, "p2", "mx1", 200, &w.next);
    txt = json_dumps(j, 0);
    assert_int_equal(wire_decode(&w, txt, strlen(txt), err, sizeof err), 0);
    free(txt);
    json_decref(j);
    assert_int_equal(w.last.io.syscr, 80 + 10);   /* 8 samples' worth before, 1 after */
    assert_int_equal(w.last.part[PART_MTA].io.rchar, 800 + 100);   /* the parts carry on too */
    series_free(s2);
    wire_state_free(&w);
    series_free(s);
}

/* A puller that fell behind gets WIRE_MAX_SAMPLES at a time and is told more wait. */
static void catch_up(void **st)
{
    struct series *s = make(0);
    for (unsigned k = 0; k < WIRE_MAX_SAMPLES + 100; k++)
        add(s, k);
    struct wire_state w = { .examples = 2, .next = { .has_since = 1, .since = 0 } };
    char err[300];
    size_t rounds = 0;
    do {
        json_t *j = wire_encode(s, "p1", "h", 1, &w.next);
        char *txt = json_dumps(j, 0);
        assert_int_equal(wire_decode(&w, txt, strlen(txt), err, sizeof err), 0);
        free(txt);
        json_decref(j);
        rounds++;
    } while (w.more && rounds < 10);
    assert_int_equal(rounds, 2);
    uint64_t next, nev;
    series_next(w.series, &next, &nev);
    assert_int_equal(next, WIRE_MAX_SAMPLES + 100);
    wire_state_free(&w);
    series_free(s);
}

/* However long the lines a burst of log errors left, a response stays within
 * WIRE_MAX_BYTES (give or take a sample): the puller asks again for the rest. */
static void bounded(void **st)
{
    struct series_opts o = { .has = { 1, 1, 1, 1, 1 }, .classes = names, .ncls = 2, .examples = 2 };
    struct series *s = series_new(&o);
    char line[1001];
    memset(line, '\x01', 1000);            /* printable() makes each byte 4 */
    line[1000] = 0;
    enum { N = 300 };
    for (unsigned k = 0; k < N; k++) {
        struct probe_sample x = { .t = 1000 + k };
        struct series_line *l = xcalloc(4, sizeof *l);
        for (size_t i = 0; i < 4; i++)
            l[i] = (struct series_line){ x.t, i % 2, xstrdup(line) };
        series_add(s, &x, (uint64_t[]){ 2, 2 }, l, 4);
        free(l);
    }
    struct wire_state w = { .examples = 2, .next = { .has_since = 1, .since = 0 } };
    char err[300];
    size_t rounds = 0, largest = 0;
    do {
        json_t *j = wire_encode(s, "p1", "h", 1, &w.next);
        char *txt = json_dumps(j, JSON_COMPACT);
        largest = strlen(txt) > largest ? strlen(txt) : largest;
        assert_int_equal(wire_decode(&w, txt, strlen(txt), err, sizeof err), 0);
        free(txt);
        json_decref(j);
        rounds++;
    } while (w.more && rounds < 100);
    assert_true(rounds > 1);
    assert_true(largest < WIRE_MAX_BYTES + 20000);
    uint64_t next, nev;
    series_next(w.series, &next, &nev);
    assert_int_equal(next, N);
    wire_state_free(&w);
    series_free(s);
}

/* A valid response as text, with one replacement done. */
static int decode_with(const char *from, const char *to, char *err, size_t errlen)
{
    struct series *s = make(0);
    add(s, 1);
    add(s, 2);
    json_t *j = wire_encode(s, "p1", "h", 1, &(struct wire_query){ .has_since = 1, .since = 0 });
    char *txt = json_dumps(j, JSON_COMPACT);
    char *at = strstr(txt, from);
    assert_non_null(at);
    size_t len = strlen(txt) + strlen(to) + 1;
    char *out = xmalloc(len);
    snprintf(out, len, "%.*s%s%s", (int)(at - txt), txt, to, at + strlen(from));
    struct wire_state w = { .examples = 2 };
    int rc = wire_decode(&w, out, strlen(out), err, errlen);
    uint64_t n = 0, e;                       /* refused: nothing half added */
    if (w.series)
        series_next(w.series, &n, &e);
    if (rc < 0)
        assert_int_equal(n, 0);
    free(out);
    free(txt);
    json_decref(j);
    wire_state_free(&w);
    series_free(s);
    return rc;
}

static void refused(void **st)
{
    char err[300];
    assert_int_equal(decode_with("\"format\":\"mailsoak-probe\"", "\"format\":\"x\"", err, sizeof err), -1);
    assert_non_null(strstr(err, "not a mailsoak probe"));
    assert_int_equal(decode_with("\"hits\":[1,0]", "\"hits\":[1]", err, sizeof err), -1);
    assert_non_null(strstr(err, "hits"));
    assert_int_equal(decode_with("\"mem\":102", "\"mem\":-5", err, sizeof err), -1);
    assert_int_equal(decode_with("\"t\":1200", "\"t\":1", err, sizeof err), -1);
    assert_non_null(strstr(err, "out of order"));
    assert_int_equal(decode_with("\"class\":0", "\"class\":7", err, sizeof err), -1);
    assert_int_equal(decode_with("{\"format\"", "[{\"format\"", err, sizeof err), -1);
    /* the unchanged text passes, so each refusal above is the replacement's doing */
    assert_int_equal(decode_with("\"mem\":102", "\"mem\":102", err, sizeof err), 0);
}

/* A probe is another machine: the texts it sends (log lines, events, its host's
 * name) are made printable as they are read, whatever a broken or hostile probe
 * put in them. */
static void hostile_texts(void **st)
{
    struct series *s = make(0);
    add(s, 0);
    add(s, 1);
    series_event(s, 1100, "log_rotated", "EVENT");
    json_t *j = wire_encode(s, "p1", "mx1", 5000, &(struct wire_query){ .has_since = 1, .has_events = 1 });
    char *txt = json_dumps(j, JSON_COMPACT), *out = NULL;
    size_t len;
    FILE *f = open_memstream(&out, &len);
    static const char *const from[] = { "\"lock 1.0\"", "\"EVENT\"", "\"mx1\"" },
                             *const to[] = { "\"lock \\u001b[2J\\u009b31m\"", "\"ev\\u0007\\r\\n\"", "\"mx\\u001b]0;x\\u0007\"" };
    for (const char *p = txt; *p;) {
        size_t k = 0;
        while (k < 3 && strncmp(p, from[k], strlen(from[k])))
            k++;
        if (k < 3) {
            fputs(to[k], f);
            p += strlen(from[k]);
        } else
            fputc(*p++, f);
    }
    fclose(f);
    struct wire_state w = { .examples = 2 };
    char err[300];
    assert_int_equal(wire_decode(&w, out, len, err, sizeof err), 0);
    assert_string_equal(w.host, "mx\\x1b]0;x\\x07");
    struct probe_summary sum;
    series_summary(w.series, 1000, &sum);
    assert_int_equal(sum.classes[0].nex, 2);
    assert_string_equal(sum.classes[0].ex[0].line, "lock \\x1b[2J\\xc2\\x9b31m");
    probe_summary_free(&sum);
    struct probe_events ev;
    series_events(w.series, 0, &ev);
    assert_int_equal(ev.n, 1);
    assert_string_equal(ev.v[0].text, "ev\\x07\\x0d\\x0a");
    probe_events_free(&ev);
    free(out);
    free(txt);
    json_decref(j);
    wire_state_free(&w);
    series_free(s);
}

static void clock_quickest(void **st)
{
    struct clock_est c = { 0 };
    int64_t off;
    uint64_t rtt;
    assert_false(clock_est_best(&c, &off, &rtt));
    clock_est_add(&c, 1000, 1600, 5700);     /* offset 5700 - 1300 = 4400, rtt 600 */
    clock_est_add(&c, 2000, 2020, 7010);     /* offset 5000, rtt 20: the one to trust */
    clock_est_add(&c, 3000, 3400, 8100);     /* offset 4900, rtt 400 */
    assert_true(clock_est_best(&c, &off, &rtt));
    assert_int_equal(off, 5000);
    assert_int_equal(rtt, 20);
    for (int i = 0; i < CLOCK_EXCHANGES; i++)   /* the quick one ages out of the window */
        clock_est_add(&c, 10000 + 1000 * (uint64_t)i, 10100 + 1000 * (uint64_t)i, 15050 + 1000 * (uint64_t)i);
    assert_true(clock_est_best(&c, &off, &rtt));
    assert_int_equal(off, 5000);
    assert_int_equal(rtt, 100);
}

static void specs(void **st)
{
    char label[64], url[256], err[200];
    assert_int_equal(remote_parse("mx1=http://198.18.0.1:9470", label, sizeof label, url, sizeof url, err, sizeof err), 0);
    assert_string_equal(label, "mx1");
    assert_string_equal(url, "http://198.18.0.1:9470");
    assert_int_equal(remote_parse("http://[::1]:9470/", label, sizeof label, url, sizeof url, err, sizeof err), 0);
    assert_string_equal(label, "[::1]:9470");
    assert_string_equal(url, "http://[::1]:9470");
    assert_int_equal(remote_parse("ftp://x:1", label, sizeof label, url, sizeof url, err, sizeof err), -1);
    assert_int_equal(remote_parse("http://x:1/metrics", label, sizeof label, url, sizeof url, err, sizeof err), -1);
    assert_int_equal(remote_parse("a b=http://x:1", label, sizeof label, url, sizeof url, err, sizeof err), -1);
    assert_int_equal(remote_parse("=http://x:1", label, sizeof label, url, sizeof url, err, sizeof err), -1);
}

/* /time both ways: the probe's reading comes back exact; what is not a reading
 * (no "now", a negative one, a string, not JSON, nothing) is refused. */
static void time_both_ways(void **st)
{
    (void)st;
    char b[96];
    uint64_t now = 0;
    size_t n = wire_time_encode(b, sizeof b, 18446744073709551615ull);
    assert_string_equal(b, "{\"format\":\"mailsoak-probe\",\"now\":18446744073709551615}");
    assert_int_equal(n, strlen(b));
    n = wire_time_encode(b, sizeof b, 123456789012ull);
    assert_int_equal(wire_time_decode(b, n, &now), 0);
    assert_true(now == 123456789012ull);
    static const char *const bad[] = { "{\"format\":\"mailsoak-probe\"}", "{\"now\":-1}", "{\"now\":\"12\"}",
                                       "{\"now\":1.5}", "[12]", "now=12", "" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(wire_time_decode(bad[i], strlen(bad[i]), &now), -1);
    assert_int_equal(wire_time_decode(NULL, 0, &now), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(series_cuts), cmocka_unit_test(series_keep), cmocka_unit_test(roundtrip),
        cmocka_unit_test(catch_up),    cmocka_unit_test(bounded),     cmocka_unit_test(refused),     cmocka_unit_test(clock_quickest), cmocka_unit_test(specs),
        cmocka_unit_test(hostile_texts), cmocka_unit_test(time_both_ways),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
