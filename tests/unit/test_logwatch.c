/* test_logwatch: the built-in classes on real log excerpts (tests/fixtures/logs), the
 * class settings, and tailing: start at the end, partial lines, rotation by rename
 * and by copytruncate, each losing no line and counting none twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "settings/config.h"
#include "probe/logwatch.h"
#include "result/probe_output.h"
#include "tmpdir.h"

#define T0 1000000000ull
#define SEC 1000000000ull

struct events {
    int rotated, truncated;
    char last[1300];
};

static void on_event(void *ctx, uint64_t t, const char *kind, const char *text)
{
    struct events *e = ctx;
    if (!strcmp(kind, "log_rotated"))
        e->rotated++;
    if (!strcmp(kind, "log_truncated"))
        e->truncated++;
    snprintf(e->last, sizeof e->last, "%s", text);
}

struct dir {
    char path[256], log[300], copy[300];
};

static void make_dir(struct dir *d)
{
    test_tmpname(d->path, sizeof d->path, "test_logwatch.XXXXXX");
    assert_non_null(mkdtemp(d->path));
    snprintf(d->log, sizeof d->log, "%s/server.log", d->path);
    snprintf(d->copy, sizeof d->copy, "%s/server.log.1", d->path);
}

static void remove_dir(struct dir *d)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->path);
    assert_int_equal(system(cmd), 0);
}

/* Appends lines "L<from>".."L<to-1>" the way a logger does (O_APPEND). */
static void append_lines(const char *path, int from, int to)
{
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    for (int i = from; i < to; i++)
        fprintf(f, "L%d\n", i);
    fclose(f);
}

static void append_raw(const char *path, const char *text)
{
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static struct logwatch *counting_watch(const char *path, struct events *ev)
{
    char err[300];
    struct logwatch *lw = logwatch_new(T0, 3);
    assert_int_equal(logwatch_set_class(lw, "n: ^L[0-9]+$", err, sizeof err), 0);
    assert_int_equal(logwatch_add_file(lw, path, err, sizeof err), 0);
    if (ev)
        logwatch_on_event(lw, on_event, ev);
    return lw;
}

static const char *fixture(const char *name)
{
    static char path[4096];
    const char *top = getenv("TOP");
    snprintf(path, sizeof path, "%s/tests/fixtures/logs/%s", top ? top : ".", name);
    return path;
}

static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return 1;
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

/* Each line of the fixture logs (tests/fixtures/logs, one file per server family):
 * its expected classes, exactly. */
static void builtin_classes_on_real_lines(void **state)
{
    static const char *const files[] = { "classes.tsv", "exim.tsv", "opensmtpd.tsv", "courier.tsv", "sql.tsv",
                                         "mailutils.tsv", "reference.tsv", "imap.tsv" };
    struct logwatch *lw = logwatch_new(T0, 5);
    logwatch_add_defaults(lw);
    assert_int_equal(logwatch_nclasses(lw), 15);
    int checked = 0, wrong = 0, none = 0;
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        FILE *f = fopen(fixture(files[k]), "r");
        assert_non_null(f);
        char line[4096];
        int here = 0;
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = 0;
            if (line[0] == '#' || !line[0])
                continue;
            char *tab = strchr(line, '\t');
            assert_non_null(tab);
            *tab = 0;
            const char *want = line, *text = tab + 1;
            none += !strcmp(want, "-");
            for (size_t i = 0; i < logwatch_nclasses(lw); i++) {
                const char *name = logwatch_class_name(lw, i);
                int expect = in_list(want, name), got = logwatch_matches(lw, i, text);
                if (expect != got) {
                    print_error("%s: class %s %s: %s\n", files[k], name, expect ? "missed" : "matched wrongly",
                                text);
                    wrong++;
                }
            }
            here++;
        }
        fclose(f);
        assert_true(here >= 9);
        checked += here;
    }
    assert_true(checked >= 100);
    assert_true(none >= 30);        /* benign lines, which must match nothing */
    assert_int_equal(wrong, 0);
    logwatch_free(lw);
}

/* Counting goes through a prefilter (one expression per case mode standing for its
 * classes); what it counts must be what the classes match, line by line: on every
 * fixture line, and with classes the prefilter must leave out (a back-reference, a
 * literal ')', one too costly to join the others). */
static void counts_through_the_prefilter_equal_each_class(void **state)
{
    static const char *const files[] = { "classes.tsv", "exim.tsv", "opensmtpd.tsv", "courier.tsv", "sql.tsv",
                                         "mailutils.tsv", "reference.tsv", "imap.tsv" };
    static const char *const extra[] = {
        "dup: (ab)\\1", "paren: x)y", "cs: Saved$", "word/i: (^|[^[:alnum:]])mpid=[0-9]+,", NULL,
    };
    static const char *const made[] = {
        "abab", "abba", "zx)yz", "status=sent (250 2.0.0 Saved", "status=sent (250 2.0.0 SAVED",
        "Info: Login: user=<u@test.local>, MPID=614, secured", "Info: Login: xmpid=614,", NULL,
    };
    char err[300], big[2100];
    struct logwatch *lw = logwatch_new(T0, 5);
    logwatch_add_defaults(lw);
    for (int i = 0; extra[i]; i++)
        assert_int_equal(logwatch_set_class(lw, extra[i], err, sizeof err), 0);
    /* alone within the compile guard's bound, too costly to join the others */
    int n = snprintf(big, sizeof big, "huge/i: ");
    for (int i = 0; i < 1900; i++)
        big[n++] = (char)('a' + i % 26);
    snprintf(big + n, sizeof big - (size_t)n, "|deferred");
    assert_int_equal(logwatch_set_class(lw, big, err, sizeof err), 0);
    size_t ncls = logwatch_nclasses(lw);
    uint64_t counts[32];
    assert_true(ncls <= 32);

    int lines = 0, hits = 0;
    for (size_t k = 0; k <= sizeof files / sizeof files[0]; k++) {
        FILE *f = k < sizeof files / sizeof files[0] ? fopen(fixture(files[k]), "r") : NULL;
        char line[4096];
        for (int m = 0; f ? fgets(line, sizeof line, f) != NULL : made[m] != NULL; m++) {
            if (!f)
                snprintf(line, sizeof line, "%s", made[m]);
            line[strcspn(line, "\n")] = 0;
            if (line[0] == '#' || !line[0])
                continue;
            char *text = strchr(line, '\t') ? strchr(line, '\t') + 1 : line;
            logwatch_feed(lw, text, strlen(text), T0 + SEC);
            uint64_t matched = logwatch_take(lw, counts);
            int any = 0;
            for (size_t i = 0; i < ncls; i++) {
                int want = logwatch_matches(lw, i, text);
                if ((uint64_t)want != counts[i])
                    print_error("class %s: counted %llu, matches %d: %s\n", logwatch_class_name(lw, i),
                                (unsigned long long)counts[i], want, text);
                assert_int_equal(counts[i], want);
                any |= want;
                hits += want;
            }
            assert_int_equal(matched, any);
            lines++;
        }
        if (f)
            fclose(f);
    }
    assert_true(lines >= 110);
    assert_true(hits >= 80);
    /* each added class matched where it should, so the check above covered them */
    for (size_t i = 9; i < ncls; i++)
        assert_true(logwatch_count(lw, i) >= 1);
    logwatch_free(lw);
}

static void class_settings(void **state)
{
    char err[300];
    struct logwatch *lw = logwatch_new(T0, 5);
    logwatch_add_defaults(lw);
    /* Replacing keeps the position; removing drops it; adding appends. */
    assert_int_equal(logwatch_set_class(lw, "lock: ^LOCKED$", err, sizeof err), 0);
    assert_string_equal(logwatch_class_name(lw, 2), "lock");
    assert_true(logwatch_matches(lw, 2, "LOCKED"));
    assert_false(logwatch_matches(lw, 2, "cannot lock mailbox"));
    assert_int_equal(logwatch_set_class(lw, "timeout:", err, sizeof err), 0);
    assert_int_equal(logwatch_nclasses(lw), 14);
    assert_int_equal(logwatch_set_class(lw, " reject : reject: RCPT", err, sizeof err), 0);
    assert_string_equal(logwatch_class_name(lw, 14), "reject");
    assert_true(logwatch_matches(lw, 14, "NOQUEUE: reject: RCPT from x"));
    assert_false(logwatch_matches(lw, 14, "NOQUEUE: REJECT: RCPT from x"));
    assert_int_equal(logwatch_set_class(lw, "reject/i: reject: rcpt", err, sizeof err), 0);
    assert_true(logwatch_matches(lw, 14, "NOQUEUE: REJECT: RCPT from x"));

    assert_int_equal(logwatch_set_class(lw, "bad: a(b", err, sizeof err), -1);
    assert_non_null(strstr(err, "bad"));
    assert_int_equal(logwatch_set_class(lw, "no colon", err, sizeof err), -1);
    assert_int_equal(logwatch_set_class(lw, ": x", err, sizeof err), -1);
    assert_int_equal(logwatch_set_class(lw, "sp ace: x", err, sizeof err), -1);
    /* stacked or nested repetition compiles to gigabytes in glibc (fuzz_logwatch
     * found "k" and 41 '+'): refused with a reason, as a bad expression is */
    assert_int_equal(logwatch_set_class(lw, "k: k++++++++++++++++++++++++++++++++++++++++", err, sizeof err), -1);
    assert_non_null(strstr(err, "repetitions"));
    assert_int_equal(logwatch_set_class(lw, "n: ((((((((((((((((((((k)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+", err,
                                        sizeof err), -1);
    assert_int_equal(logwatch_set_class(lw, "b: ((k{1,100}){1,100}){1,50}", err, sizeof err), -1);
    /* a repetition of a repetition of what can match nothing takes minutes to compile
     * although its tree is small (fuzz_logwatch found "l$o*******++*": 7 s) */
    assert_int_equal(logwatch_set_class(lw, "e: l$o*******++*", err, sizeof err), -1);
    assert_non_null(strstr(err, "match nothing"));
    assert_int_equal(logwatch_set_class(lw, "e: (a?)*+", err, sizeof err), -1);
    assert_int_equal(logwatch_set_class(lw, "e: (x|y*){1,5}{1,5}", err, sizeof err), -1);
    assert_int_equal(logwatch_set_class(lw, "e: (($)*)*", err, sizeof err), -1);
    assert_int_equal(logwatch_set_class(lw, "e: (\\<)*+", err, sizeof err), -1);
    /* one such level, or repetitions of what must match something, compile at once */
    assert_int_equal(logwatch_set_class(lw, "e: (o*)*x", err, sizeof err), 0);
    assert_int_equal(logwatch_set_class(lw, "e: ((o*)*x)+{1,5}", err, sizeof err), 0);
    assert_int_equal(logwatch_set_class(lw, "e: (a|b)*+", err, sizeof err), 0);
    /* what real patterns do stays allowed */
    assert_int_equal(logwatch_set_class(lw, "q: (status=deferred|delays=[0-9.]+/[0-9.]+){1,3} x{2,4}", err, sizeof err), 0);
    assert_int_equal(logwatch_set_class(lw, "q: [[:alpha:]+]+ \\++ (a|b)*", err, sizeof err), 0);
    assert_int_equal(logwatch_nclasses(lw), 17);
    logwatch_free(lw);
}

static void from_config(void **state)
{
    struct dir d;
    make_dir(&d);
    append_raw(d.log, "old line\n");
    struct tested_server cfg = { .log_defaults = 0, .log_examples = 2 };
    char err[600];
    strlist_add(&cfg.logs, d.log);
    strlist_add(&cfg.log_classes, "mine: ^x");
    struct logwatch *lw = logwatch_from_config(&cfg, T0, err, sizeof err);
    assert_non_null(lw);
    assert_int_equal(logwatch_nclasses(lw), 1);
    logwatch_free(lw);

    cfg.log_defaults = 1;
    lw = logwatch_from_config(&cfg, T0, err, sizeof err);
    assert_non_null(lw);
    assert_int_equal(logwatch_nclasses(lw), 16);
    logwatch_free(lw);

    strlist_add(&cfg.log_classes, "broken: (");
    assert_null(logwatch_from_config(&cfg, T0, err, sizeof err));
    assert_non_null(strstr(err, "server.log_class"));
    assert_non_null(strstr(err, "broken: ("));
    strlist_free(&cfg.log_classes);

    /* A log that does not exist yet is awaited; a directory is refused. */
    strlist_add(&cfg.logs, "/nonexistent/mail.log");
    lw = logwatch_from_config(&cfg, T0, err, sizeof err);
    assert_non_null(lw);
    assert_string_equal(logwatch_awaited(lw, 0), "/nonexistent/mail.log");
    assert_null(logwatch_awaited(lw, 1));
    logwatch_free(lw);
    strlist_add(&cfg.logs, d.path);
    assert_null(logwatch_from_config(&cfg, T0, err, sizeof err));
    assert_non_null(strstr(err, "server.log"));
    assert_non_null(strstr(err, "not a regular file"));
    strlist_free(&cfg.logs);
    remove_dir(&d);
}

/* Exim creates paniclog on its first write: the whole file is the run's. */
static void a_log_that_appears_later_is_read_from_its_first_line(void **state)
{
    struct dir d;
    struct events ev = { 0 };
    char err[300];
    make_dir(&d);
    struct logwatch *lw = logwatch_new(T0, 3);
    assert_int_equal(logwatch_set_class(lw, "n: ^L[0-9]+$", err, sizeof err), 0);
    assert_int_equal(logwatch_add_file(lw, d.log, err, sizeof err), 1);
    assert_non_null(strstr(err, "does not exist yet"));
    logwatch_on_event(lw, on_event, &ev);
    logwatch_poll(lw, T0 + SEC);
    assert_int_equal(logwatch_total(lw), 0);
    assert_int_equal(ev.rotated, 0);
    append_lines(d.log, 0, 5);
    logwatch_poll(lw, T0 + 2 * SEC);
    assert_int_equal(logwatch_total(lw), 5);
    assert_non_null(strstr(ev.last, "appeared"));
    assert_null(logwatch_awaited(lw, 0));
    append_lines(d.log, 5, 7);
    logwatch_poll(lw, T0 + 3 * SEC);
    assert_int_equal(logwatch_total(lw), 7);
    /* once seen, its disappearance is a rotation like any other log's */
    assert_int_equal(rename(d.log, d.copy), 0);
    append_lines(d.copy, 7, 8);
    logwatch_poll(lw, T0 + 4 * SEC);
    append_lines(d.log, 8, 10);
    logwatch_poll(lw, T0 + 5 * SEC);
    assert_int_equal(logwatch_total(lw), 10);
    assert_true(ev.rotated >= 2);
    logwatch_free(lw);
    remove_dir(&d);
}

static void every_matching_class_counts_and_total_counts_lines(void **state)
{
    struct logwatch *lw = logwatch_new(T0, 5);
    logwatch_add_defaults(lw);
    const char *l1 = "ERROR (1213, 'Deadlock found when trying to get lock')";     /* sql_lock, deadlock */
    const char *l2 = "pop3: Fatal: pool_system_malloc(8192): Out of memory";        /* oom, fatal */
    const char *l3 = "nothing to see";
    logwatch_feed(lw, l1, strlen(l1), T0 + 2 * SEC);
    logwatch_feed(lw, l2, strlen(l2), T0 + 3 * SEC);
    logwatch_feed(lw, l3, strlen(l3), T0 + 4 * SEC);
    assert_int_equal(logwatch_total(lw), 2);
    assert_int_equal(logwatch_count(lw, 0), 1);     /* sql_lock */
    assert_int_equal(logwatch_count(lw, 1), 1);     /* deadlock */
    assert_int_equal(logwatch_count(lw, 2), 0);     /* lock */
    assert_int_equal(logwatch_count(lw, 4), 1);     /* oom */
    assert_int_equal(logwatch_count(lw, 6), 1);     /* fatal */
    uint64_t counts[16];
    assert_true(logwatch_nclasses(lw) <= 16);
    assert_int_equal(logwatch_take(lw, counts), 2);
    assert_int_equal(counts[1], 1);
    assert_int_equal(counts[6], 1);
    assert_int_equal(logwatch_take(lw, counts), 0);
    assert_int_equal(counts[1], 0);
    assert_int_equal(logwatch_count(lw, 1), 1);     /* totals stay */
    logwatch_free(lw);
}

static void a_java_stack_trace_counts_once(void **state)
{
    struct dir d;
    make_dir(&d);
    append_raw(d.log, "");
    char err[300];
    struct logwatch *lw = logwatch_new(T0, 5);
    logwatch_add_defaults(lw);
    assert_int_equal(logwatch_add_file(lw, d.log, err, sizeof err), 0);
    append_raw(d.log,
               "28/11/05 11:36:04 ERROR mailet: failed\n"
               "java.lang.IllegalStateException: queue closed\n"
               "\tat org.apache.james.queue.FileMailQueue.deQueue(FileMailQueue.java:201)\n"
               "\tat org.apache.james.Spool.run(Spool.java:88)\n"
               "\tat java.base/java.lang.Thread.run(Thread.java:833)\n"
               "Caused by: java.io.IOException: Stream closed\n"
               "\tat java.io.FileInputStream.read(Native Method)\n"
               "\t... 3 more\n"
               "28/11/05 11:36:05 INFO spool: resumed\n"
               "Exception in thread \"pool-1\" java.lang.NullPointerException\n"
               "\tat org.apache.james.Spool.run(Spool.java:90)\n");
    logwatch_poll(lw, T0 + SEC);
    assert_int_equal(logwatch_count(lw, 5), 2);
    assert_int_equal(logwatch_total(lw), 2);
    logwatch_free(lw);
    remove_dir(&d);
}

/* The classes as the run's result holds them. */
static json_t *classes_json(struct logwatch *lw)
{
    struct probe_class *v;
    size_t n = logwatch_classes(lw, &v);
    json_t *j = probe_json_classes(v, n, T0);
    probe_classes_free(v, n);
    return j;
}

static void examples_keep_the_first_lines_with_their_time(void **state)
{
    struct logwatch *lw = logwatch_new(T0, 2);
    char err[300];
    assert_int_equal(logwatch_set_class(lw, "x: ^x", err, sizeof err), 0);
    assert_int_equal(logwatch_set_class(lw, "y: ^y", err, sizeof err), 0);
    logwatch_feed(lw, "x1", 2, T0 + 1500000000ull);
    logwatch_feed(lw, "x2 \xff\xfe end", 9, T0 + 2 * SEC);
    logwatch_feed(lw, "x3", 2, T0 + 3 * SEC);
    json_t *j = classes_json(lw);
    json_t *x = json_object_get(j, "x"), *y = json_object_get(j, "y");
    assert_non_null(x);
    assert_non_null(y);
    assert_int_equal(json_integer_value(json_object_get(x, "count")), 3);
    assert_int_equal(json_integer_value(json_object_get(y, "count")), 0);
    assert_int_equal(json_array_size(json_object_get(y, "examples")), 0);
    json_t *ex = json_object_get(x, "examples");
    assert_int_equal(json_array_size(ex), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(ex, 0), "line")), "x1");
    assert_true(json_real_value(json_object_get(json_array_get(ex, 0), "t")) == 1.5);
    /* Not UTF-8: replaced, so the JSON stays valid. */
    assert_string_equal(json_string_value(json_object_get(json_array_get(ex, 1), "line")), "x2 ?? end");
    json_decref(j);
    logwatch_free(lw);
}

static void starts_at_the_end_and_waits_for_whole_lines(void **state)
{
    struct dir d;
    make_dir(&d);
    append_lines(d.log, 0, 5);
    append_raw(d.log, "L5");                 /* being written when the run began */
    struct logwatch *lw = counting_watch(d.log, NULL);
    append_raw(d.log, "0\n");
    logwatch_poll(lw, T0 + SEC);
    assert_int_equal(logwatch_total(lw), 0);
    append_raw(d.log, "L6");
    logwatch_poll(lw, T0 + SEC);
    assert_int_equal(logwatch_total(lw), 0);
    append_raw(d.log, "7\r\nL8\n");
    logwatch_poll(lw, T0 + 2 * SEC);
    assert_int_equal(logwatch_total(lw), 2);
    json_t *j = classes_json(lw);
    json_t *ex = json_object_get(json_object_get(j, "n"), "examples");
    assert_string_equal(json_string_value(json_object_get(json_array_get(ex, 0), "line")), "L67");
    json_decref(j);
    logwatch_free(lw);
    remove_dir(&d);
}

static void overlong_lines_count_once(void **state)
{
    struct dir d;
    make_dir(&d);
    append_raw(d.log, "");
    char err[300];
    struct logwatch *lw = logwatch_new(T0, 1);
    assert_int_equal(logwatch_set_class(lw, "x: ^x", err, sizeof err), 0);
    assert_int_equal(logwatch_add_file(lw, d.log, err, sizeof err), 0);
    char *big = malloc(200001);
    memset(big, 'x', 200000);
    big[200000] = 0;
    append_raw(d.log, big);
    append_raw(d.log, "\nx\n");
    free(big);
    logwatch_poll(lw, T0 + SEC);
    assert_int_equal(logwatch_total(lw), 2);
    logwatch_free(lw);
    remove_dir(&d);
}

static void rotation_by_rename_loses_nothing(void **state)
{
    struct dir d;
    make_dir(&d);
    append_lines(d.log, 0, 3);                       /* before the run: not counted */
    struct events ev = { 0 };
    struct logwatch *lw = counting_watch(d.log, &ev);
    append_lines(d.log, 0, 10);
    logwatch_poll(lw, T0 + SEC);
    assert_int_equal(logwatch_total(lw), 10);

    /* The logger still holds the old file when it is renamed. */
    int late = open(d.log, O_WRONLY | O_APPEND);
    assert_true(late >= 0);
    append_lines(d.log, 10, 15);
    assert_int_equal(rename(d.log, d.copy), 0);
    assert_int_equal(write(late, "L15\nL16\n", 8), 8);
    logwatch_poll(lw, T0 + 2 * SEC);                 /* the name is gone for now */
    assert_int_equal(logwatch_total(lw), 17);
    append_lines(d.log, 17, 24);                     /* the new file */
    assert_int_equal(write(late, "L99\nL98\nL97\n", 12), 12);   /* still writing the old one */
    logwatch_poll(lw, T0 + 3 * SEC);
    assert_int_equal(logwatch_total(lw), 27);
    assert_true(ev.rotated >= 1);
    close(late);
    append_lines(d.log, 24, 28);
    logwatch_poll(lw, T0 + 4 * SEC);
    logwatch_poll(lw, T0 + 5 * SEC);
    assert_int_equal(logwatch_total(lw), 31);
    logwatch_free(lw);
    remove_dir(&d);
}

struct collected {
    char text[4096];
    size_t n;
};

static void collect(void *ctx, size_t file, const char *line, size_t len)
{
    struct collected *c = ctx;
    assert_int_equal(file, 0);
    assert_int_equal(strlen(line), len);
    c->n++;
    strncat(c->text, line, sizeof c->text - strlen(c->text) - 2);
    strcat(c->text, ",");
}

/* The second pass (issue 26's trails): every line since the run began, again, from
 * the file it was in when the run began (past the line being written then) and the
 * file that replaced it after a rotation; nothing from before, nothing counted. */
static void rescan_reads_the_run_again_across_a_rotation(void **state)
{
    struct dir d;
    make_dir(&d);
    append_lines(d.log, 0, 3);                       /* before the run */
    append_raw(d.log, "half");                       /* being written when it began */
    struct logwatch *lw = counting_watch(d.log, NULL);
    append_raw(d.log, "-line\n");
    append_lines(d.log, 3, 5);
    logwatch_poll(lw, T0 + SEC);
    assert_int_equal(rename(d.log, d.copy), 0);
    append_lines(d.log, 5, 7);
    logwatch_poll(lw, T0 + 2 * SEC);
    append_raw(d.log, "last");                       /* no newline yet: still a line */
    logwatch_poll(lw, T0 + 3 * SEC);
    uint64_t counted = logwatch_total(lw);
    struct collected c = { "", 0 };
    logwatch_rescan(lw, collect, &c);
    assert_string_equal(c.text, "L3,L4,L5,L6,last,");
    assert_int_equal(logwatch_total(lw), counted);
    memset(&c, 0, sizeof c);
    logwatch_rescan(lw, collect, &c);                /* as often as asked */
    assert_int_equal(c.n, 5);
    logwatch_free(lw);
    remove_dir(&d);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[800];
    snprintf(cmd, sizeof cmd, "cp -p '%s' '%s'", from, to);
    assert_int_equal(system(cmd), 0);
}

static void rotation_by_copytruncate_loses_nothing(void **state)
{
    struct dir d;
    make_dir(&d);
    append_raw(d.log, "");
    struct events ev = { 0 };
    struct logwatch *lw = counting_watch(d.log, &ev);
    append_lines(d.log, 0, 10);
    logwatch_poll(lw, T0 + SEC);
    assert_int_equal(logwatch_total(lw), 10);
    append_lines(d.log, 10, 15);                     /* not yet read when the copy is made */
    copy_file(d.log, d.copy);
    assert_int_equal(truncate(d.log, 0), 0);
    append_lines(d.log, 15, 22);
    logwatch_poll(lw, T0 + 2 * SEC);
    assert_int_equal(logwatch_total(lw), 22);
    assert_int_equal(ev.truncated, 1);
    assert_non_null(strstr(ev.last, "server.log.1"));
    logwatch_poll(lw, T0 + 3 * SEC);
    assert_int_equal(logwatch_total(lw), 22);

    /* Again, now with the file grown past our old offset before we look. */
    append_lines(d.log, 22, 24);
    copy_file(d.log, d.copy);
    assert_int_equal(truncate(d.log, 0), 0);
    append_lines(d.log, 1000, 1100);
    logwatch_poll(lw, T0 + 4 * SEC);
    assert_int_equal(logwatch_total(lw), 124);
    assert_int_equal(ev.truncated, 2);
    logwatch_free(lw);
    remove_dir(&d);
}

static void truncation_without_copy_and_a_writer_without_append(void **state)
{
    struct dir d;
    make_dir(&d);
    append_raw(d.log, "");
    struct events ev = { 0 };
    struct logwatch *lw = counting_watch(d.log, &ev);
    int w = open(d.log, O_WRONLY);                   /* no O_APPEND: writes at its own offset */
    assert_true(w >= 0);
    assert_int_equal(write(w, "L1\nL2\n", 6), 6);
    logwatch_poll(lw, T0 + SEC);
    assert_int_equal(logwatch_total(lw), 2);
    assert_int_equal(truncate(d.log, 0), 0);
    assert_int_equal(write(w, "L3\n", 3), 3);        /* lands at offset 6 behind a hole */
    logwatch_poll(lw, T0 + 2 * SEC);
    assert_int_equal(logwatch_total(lw), 3);
    assert_int_equal(ev.truncated, 1);
    assert_non_null(strstr(ev.last, "may be lost"));
    close(w);
    logwatch_free(lw);
    remove_dir(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builtin_classes_on_real_lines),
        cmocka_unit_test(counts_through_the_prefilter_equal_each_class),
        cmocka_unit_test(class_settings),
        cmocka_unit_test(from_config),
        cmocka_unit_test(a_log_that_appears_later_is_read_from_its_first_line),
        cmocka_unit_test(every_matching_class_counts_and_total_counts_lines),
        cmocka_unit_test(a_java_stack_trace_counts_once),
        cmocka_unit_test(examples_keep_the_first_lines_with_their_time),
        cmocka_unit_test(starts_at_the_end_and_waits_for_whole_lines),
        cmocka_unit_test(overlong_lines_count_once),
        cmocka_unit_test(rotation_by_rename_loses_nothing),
        cmocka_unit_test(rescan_reads_the_run_again_across_a_rotation),
        cmocka_unit_test(rotation_by_copytruncate_loses_nothing),
        cmocka_unit_test(truncation_without_copy_and_a_writer_without_append),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
