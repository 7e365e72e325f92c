/* test_compare: the classic table. Golden files pin every output format over the
 * fixture runs (tests/fixtures/results, four backends x two repeats); small files made
 * here check units, mean and min-max, "-" for missing keys, marks, and the refusals.
 * UPDATE_GOLDEN=1 rewrites the golden files instead of comparing (review the diff). */
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
#include "analyse/compare_write.h"
#include "cmd/cmd_compare.h"
#include "testfiles.h"
#include "lib/units.h"

#define FIX "tests/fixtures/results/"
static char *const fixtures[] = {
    FIX "maildir-1.json", FIX "maildir-2.json", FIX "mbox-1.json", FIX "mbox-2.json",
    FIX "sdbox-1.json", FIX "sdbox-2.json", FIX "mdbox-1.json", FIX "mdbox-2.json",
};
#define NFIX (sizeof fixtures / sizeof *fixtures)

struct run {
    int rc;
    char *out, *err;
};

static struct run run_compare(int argc, char **argv)
{
    struct run r;
    size_t on, en;
    FILE *out = open_memstream(&r.out, &on), *err = open_memstream(&r.err, &en);
    assert_non_null(out);
    assert_non_null(err);
    r.rc = cmd_compare_io(argc, argv, out, err);
    fclose(out);
    fclose(err);
    return r;
}

static void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
}

/* Runs compare with the given options over all fixtures and checks the golden file. */
static void golden(const char *name, const char *const *opts, size_t nopts)
{
    char *argv[16 + NFIX];
    int argc = 0;
    argv[argc++] = "compare";
    for (size_t i = 0; i < nopts; i++)
        argv[argc++] = (char *)opts[i];
    for (size_t i = 0; i < NFIX; i++)
        argv[argc++] = fixtures[i];
    struct run r = run_compare(argc, argv);
    if (r.rc != 0)
        fprintf(stderr, "%s", r.err);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    char path[256];
    snprintf(path, sizeof path, "tests/golden/%s", name);
    if (getenv("UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(r.out, f);
        fclose(f);
    }
    char *want = tf_slurp(path);
    if (!want)
        fail_msg("missing golden file %s (run with UPDATE_GOLDEN=1 and review it)", path);
    if (strcmp(want, r.out)) {
        fprintf(stderr, "--- %s\n%s\n--- got\n%s\n", path, want, r.out);
        fail_msg("output differs from %s", path);
    }
    free(want);
    run_free(&r);
}

static void test_golden_text(void **s)
{
    (void)s;
    golden("compare.txt", NULL, 0);
    const char *o[] = { "--mark", "--runs" };
    golden("compare-mark-runs.txt", o, 2);
}

static void test_golden_markdown(void **s)
{
    (void)s;
    const char *o1[] = { "--format", "markdown" };
    golden("compare.md", o1, 2);
    const char *o2[] = { "--format=markdown", "--mark", "--runs" };
    golden("compare-mark-runs.md", o2, 3);
}

static void test_golden_csv(void **s)
{
    (void)s;
    const char *o1[] = { "--format", "csv" };
    golden("compare.csv", o1, 2);
    const char *o2[] = { "--format", "csv", "--mark", "--runs" };
    golden("compare-mark-runs.csv", o2, 4);
}

static void test_golden_json(void **s)
{
    (void)s;
    const char *o1[] = { "--format", "json" };
    golden("compare.json", o1, 2);
    const char *o2[] = { "--format", "json", "--mark", "--runs" };
    golden("compare-mark-runs.json", o2, 4);
}

/* The golden numbers are checked against the fixture files read independently here,
 * so a wrong golden file cannot pass unnoticed: sent of maildir is the mean of the
 * two maildir files, and the spread their min and max. */
static void test_golden_numbers_match_fixtures(void **s)
{
    (void)s;
    double v[2];
    for (int i = 0; i < 2; i++) {
        json_t *root = json_load_file(fixtures[i], 0, NULL);
        assert_non_null(root);
        v[i] = json_number_value(json_object_get(json_object_get(root, "summary"), "sent"));
        json_decref(root);
    }
    char *txt = tf_slurp("tests/golden/compare.txt");
    assert_non_null(txt);
    double lo = v[0] < v[1] ? v[0] : v[1], hi = v[0] < v[1] ? v[1] : v[0];
    char cell[64];
    snprintf(cell, sizeof cell, "%.0f (%.0f-%.0f)", (v[0] + v[1]) / 2, lo, hi);
    char *line = strstr(txt, "\nsent ");
    assert_non_null(line);
    char *eol = strchr(line + 1, '\n');
    *eol = 0;
    assert_non_null(strstr(line, cell));
    free(txt);
}

static void test_units(void **s)
{
    (void)s;
    char b[64];
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_COUNT, 16488), "16488");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_COUNT, 99999), "99999");
    /* exact counts, so a row or a column never mixes 274K with 54609 */
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_COUNT, 100000), "100000");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_COUNT, 5000000), "5000000");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_COUNT, 120000000), "120000000");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_COUNT, 0), "0");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_COUNT, 2.5), "2.5");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_BYTES, 73400320), "70MB");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_BYTES, 125829120), "120MB");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_BYTES, 4000000), "3906KB");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_BYTES, 512), "512B");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_MS, 0.12), "120us");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_MS, 150.3), "150.3ms");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_MS, 1500), "1.5s");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_MS, 120000), "120.0s");   /* not 2m00s */
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_RATE, 12345.6), "12345.6");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_RATE, 27.5), "27.5");
    assert_string_equal(cmp_fmt_value(b, sizeof b, CU_RATE, 17), "17.0");
    /* fmt_count must not print 99.999K as "100.0K". */
    assert_string_equal(fmt_count(b, sizeof b, 99999000), "99999K");
    assert_string_equal(fmt_count(b, sizeof b, 99960), "99960");
    assert_string_equal(fmt_bytes(b, sizeof b, 10230), "10KB");
}

/* ---- small files made for one test ---- */

/* A file in the temporary directory, from a printf format. */
__attribute__((format(printf, 2, 3)))
static char *write_file(const char *name, const char *fmt, ...)
{
    char *text;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0)
        abort();
    va_end(ap);
    char *p = tf_write(name, text);
    free(text);
    return p;
}

/* The cell of `row` in column `col` (0 = the first label) of a text table equals want. */
#define expect_cell(table, row, col, want)                                                          \
    do {                                                                                            \
        char cell_[64];                                                                             \
        text_cell(table, row, col, cell_, sizeof cell_);                                            \
        assert_string_equal(cell_, want);                                                           \
    } while (0)

#define WORKLOAD "{\"senders\": 20, \"readers\": 10, \"duration\": \"60s\"}"

static char *result(const char *name, const char *label, const char *workload, const char *summary)
{
    return write_file(name,
                      "{\"format\": \"mailsoak-result\", \"format_version\": 1, \"label\": \"%s\",\n"
                      " \"workload\": %s, \"summary\": %s, \"timeline\": []}\n",
                      label, workload, summary);
}

/* The cell of `row` in column `col` (0 = first label) of a text table. */
static void text_cell(const char *table, const char *row, int col, char *buf, size_t n)
{
    char key[64];
    snprintf(key, sizeof key, "\n%s ", row);
    const char *line = strstr(table, key);
    assert_non_null(line);
    line += strlen(key);
    /* Columns are separated by two or more spaces; cells hold at most one. */
    for (int c = 0;; c++) {
        while (*line == ' ')
            line++;
        const char *end = line;
        while (*end && *end != '\n' && !(end[0] == ' ' && end[1] == ' '))
            end++;
        if (c == col) {
            snprintf(buf, n, "%.*s", (int)(end - line), line);
            return;
        }
        assert_true(*end == ' ');
        line = end;
    }
}

/* A row's cells share one style: durations that of the row's largest (seconds
 * beside seconds, not 950.0ms beside 2m00s), counts exact (not 274K beside 54609). */
static void test_one_style_per_row(void **s)
{
    (void)s;
    char *a = result("sa.json", "fast", WORKLOAD,
                     "{\"output\": 54609, \"latency\": {\"delivery\": {\"p50\": 900, \"p99\": 0.5}}}");
    char *b = result("sb.json", "slow", WORKLOAD,
                     "{\"output\": 274123, \"latency\": {\"delivery\": {\"p50\": 120000, \"p99\": 20}}}");
    char *argv[] = { "compare", a, b };
    struct run r = run_compare(3, argv);
    assert_int_equal(r.rc, 0);
    expect_cell(r.out, "output", 0, "54609");
    expect_cell(r.out, "output", 1, "274123");
    expect_cell(r.out, "delivery p50", 0, "0.9s");
    expect_cell(r.out, "delivery p50", 1, "120.0s");
    expect_cell(r.out, "delivery p99", 0, "0.5ms");
    expect_cell(r.out, "delivery p99", 1, "20.0ms");
    run_free(&r);
}

static void test_mean_and_spread(void **s)
{
    (void)s;
    char *a = result("a.json", "x", WORKLOAD, "{\"sent\": 10, \"errors\": 1, \"mem\": 1048576}");
    char *b = result("b.json", "x", WORKLOAD, "{\"sent\": 20, \"errors\": 2}");
    char *c = result("c.json", "x", WORKLOAD, "{\"sent\": 60, \"errors\": 2}");
    char *d = result("d.json", "y", WORKLOAD, "{\"sent\": 7}");
    char *argv[] = { "compare", a, b, d, c };
    struct run r = run_compare(5, argv);
    assert_int_equal(r.rc, 0);
    expect_cell(r.out, "runs", 0, "3");
    expect_cell(r.out, "sent", 0, "30 (10-60)");
    expect_cell(r.out, "sent", 1, "7");
    /* Fractional mean of small counts is kept. */
    expect_cell(r.out, "errors", 0, "1.7 (1-2)");
    /* Only one run measured memory: its value, no spread; y measured none: "-". */
    expect_cell(r.out, "mem", 0, "1024KB");
    expect_cell(r.out, "mem", 1, "-");
    expect_cell(r.out, "errors", 1, "-");
    run_free(&r);

    /* The same numbers, exactly, in JSON. */
    char *argv2[] = { "compare", "--format", "json", "--runs", a, b, c };
    r = run_compare(7, argv2);
    assert_int_equal(r.rc, 0);
    json_t *root = json_loads(r.out, 0, NULL);
    assert_non_null(root);
    json_t *row = json_array_get(json_object_get(root, "rows"), 0);
    assert_string_equal(json_string_value(json_object_get(row, "metric")), "sent");
    json_t *v = json_array_get(json_object_get(row, "values"), 0);
    assert_int_equal(json_integer_value(json_object_get(v, "mean")), 30);
    assert_int_equal(json_integer_value(json_object_get(v, "min")), 10);
    assert_int_equal(json_integer_value(json_object_get(v, "max")), 60);
    assert_int_equal(json_integer_value(json_object_get(v, "n")), 3);
    assert_int_equal(json_array_size(json_object_get(v, "runs")), 3);
    json_t *mem = json_array_get(json_object_get(root, "rows"), 3);
    assert_string_equal(json_string_value(json_object_get(mem, "metric")), "mem");
    json_t *mv = json_array_get(json_object_get(mem, "values"), 0);
    assert_int_equal(json_integer_value(json_object_get(mv, "n")), 1);
    assert_true(json_is_null(json_array_get(json_object_get(mv, "runs"), 1)));
    json_decref(root);
    run_free(&r);
}

static void test_missing_collector_prints_dash(void **s)
{
    (void)s;
    char *a = result("col.json", "withcollector", WORKLOAD,
                     "{\"sent\": 100, \"spool\": 0, \"mem\": 0, \"input\": 0, \"log_hits\": 0}");
    char *b = result("nocol.json", "nocollector", WORKLOAD, "{\"sent\": 100}");
    const char *const fmts[] = { "text", "markdown", "csv", "json" };
    for (size_t f = 0; f < 4; f++) {
        char *argv[] = { "compare", "--format", (char *)fmts[f], a, b };
        struct run r = run_compare(5, argv);
        assert_int_equal(r.rc, 0);
        if (f == 0) {
            const char *rows[] = { "spool", "mem", "input", "log hits" };
            const char *zero[] = { "0", "0B", "0", "0" };
            for (size_t i = 0; i < 4; i++) {
                expect_cell(r.out, rows[i], 0, zero[i]);  /* measured zero stays zero */
                expect_cell(r.out, rows[i], 1, "-");
            }
        } else if (f == 1) {
            assert_non_null(strstr(r.out, "| spool | 0 | - |"));
            assert_non_null(strstr(r.out, "| mem | 0B | - |"));
        } else if (f == 2) {
            assert_non_null(strstr(r.out, "\nspool,count,less,0,0,0,1,,,,0\n"));
        } else {
            json_t *root = json_loads(r.out, 0, NULL);
            json_t *spool = json_array_get(json_object_get(root, "rows"), 2);
            json_t *vals = json_object_get(spool, "values");
            assert_int_equal(json_integer_value(json_object_get(json_array_get(vals, 0), "mean")), 0);
            assert_true(json_is_null(json_object_get(json_array_get(vals, 1), "mean")));
            json_decref(root);
        }
        run_free(&r);
    }
}

static void test_marks(void **s)
{
    (void)s;
    char *a = result("ma.json", "a", WORKLOAD, "{\"sent\": 10, \"errors\": 1, \"lost\": 0}");
    char *b = result("mb.json", "b", WORKLOAD, "{\"sent\": 20, \"errors\": 5, \"lost\": 0}");
    char *c = result("mc.json", "c", WORKLOAD, "{\"sent\": 15, \"errors\": 3}");
    /* One run a column: its spread is unknown, nothing is marked, and the table says why. */
    char *argv1[] = { "compare", "--mark", a, b, c };
    struct run r = run_compare(5, argv1);
    assert_int_equal(r.rc, 0);
    expect_cell(r.out, "sent", 0, "10");
    expect_cell(r.out, "sent", 1, "20");
    expect_cell(r.out, "errors", 0, "1");
    assert_null(strchr(r.out, '*'));
    assert_non_null(strstr(r.out, "(nothing marked: a column with one run cannot tell noise from a difference"));
    run_free(&r);

    /* Two runs each, every range clear of the others'. */
    char *a2 = result("ma2.json", "a", WORKLOAD, "{\"sent\": 10, \"errors\": 1, \"lost\": 0}");
    char *b2 = result("mb2.json", "b", WORKLOAD, "{\"sent\": 20, \"errors\": 5, \"lost\": 0}");
    char *c2 = result("mc2.json", "c", WORKLOAD, "{\"sent\": 15, \"errors\": 3}");
    char *argv[] = { "compare", "--mark", a, a2, b, b2, c, c2 };
    r = run_compare(8, argv);
    assert_int_equal(r.rc, 0);
    /* More sent is better; fewer errors is better. */
    expect_cell(r.out, "sent", 0, "10!");
    expect_cell(r.out, "sent", 1, "20*");
    expect_cell(r.out, "sent", 2, "15");
    expect_cell(r.out, "errors", 0, "1*");
    expect_cell(r.out, "errors", 1, "5!");
    /* All equal (and one missing): nothing to mark. */
    expect_cell(r.out, "lost", 0, "0");
    run_free(&r);

    char *argv2[] = { "compare", "--mark", "--format", "markdown", a, a2, b, b2, c, c2 };
    r = run_compare(10, argv2);
    assert_non_null(strstr(r.out, "| sent | _10_ | **20** | 15 |"));
    run_free(&r);
    char *argv3[] = { "compare", "--mark", "--format", "csv", a, a2, b, b2, c, c2 };
    r = run_compare(10, argv3);
    assert_non_null(strstr(r.out, ",best,worst\n"));
    assert_non_null(strstr(r.out, "\nerrors,count,less,1,1,1,2,5,5,5,2,3,3,3,2,a,b\n"));
    run_free(&r);
}

/* A column is marked best (or worst) only when its range over the repeats is clear
 * of every other column's, and only against columns of the same run.server_kind;
 * per-message rows divide by the accepted messages. */
static void test_marks_need_clear_ranges_and_one_kind(void **s)
{
    (void)s;
#define PF "{\"format\": \"mailsoak-result\", \"format_version\": 1, \"label\": \"%s\", \"workload\": " WORKLOAD \
           ", \"config\": {\"run\": {\"server_kind\": \"%s\"}}, \"summary\": {\"sent\": %d, \"errors\": %d, " \
           "\"cpu\": %g, \"input\": %d}, \"timeline\": []}\n"
    char *a1 = write_file("k-a1.json", PF, "a", "postfix+dovecot", 100, 1, 2.0, 500);
    char *a2 = write_file("k-a2.json", PF, "a", "postfix+dovecot", 120, 1, 2.4, 600);
    char *b1 = write_file("k-b1.json", PF, "b", "postfix+dovecot", 110, 9, 1.1, 200);
    char *b2 = write_file("k-b2.json", PF, "b", "postfix+dovecot", 200, 7, 2.0, 400);
    char *r1 = write_file("k-r1.json", PF, "ref", "reference", 9000, 0, 0.1, 10);
    char *argv[] = { "compare", "--mark", a1, a2, b1, b2, r1 };
    struct run r = run_compare(7, argv);
    assert_int_equal(r.rc, 0);
    /* sent: a 100-120 and b 110-200 overlap: no mark, though b's mean is higher; the
     * reference server's 9000 is of another kind and marks nothing */
    expect_cell(r.out, "sent", 0, "110 (100-120)");
    expect_cell(r.out, "sent", 1, "155 (110-200)");
    expect_cell(r.out, "sent", 2, "9000");
    /* errors: a 1-1 clear of b 7-9: a best, b worst */
    expect_cell(r.out, "errors", 0, "1*");
    expect_cell(r.out, "errors", 1, "8 (7-9)!");
    expect_cell(r.out, "errors", 2, "0");
    /* per message: a 5 calls (500/100, 600/120), b 1.8-2: clear */
    expect_cell(r.out, "input/msg", 0, "5.0!");
    expect_cell(r.out, "input/msg", 1, "1.9 (1.8-2.0)*");
    expect_cell(r.out, "cpu/msg", 0, "20.0ms!");
    expect_cell(r.out, "cpu/msg", 1, "10.0ms*");
    assert_non_null(strstr(r.out, "among columns of the same run.server_kind only"));
    run_free(&r);
}

/* A run that wrote no result keeps its column: "1 of 2" where a repeat died, an empty
 * column where every run did, the reason under the table in every format, and a
 * column some of whose runs died is never marked best. */
static void test_died_runs_keep_their_column(void **s)
{
    (void)s;
    char *a = result("d-a.json", "a", WORKLOAD, "{\"sent\": 30, \"errors\": 1}");
    char *c = result("d-c.json", "c", WORKLOAD, "{\"sent\": 10, \"errors\": 5}");
    char *c2 = result("d-c2.json", "c", WORKLOAD, "{\"sent\": 11, \"errors\": 6}");
    char *a2 = result("d-a2.json", "a", WORKLOAD, "{\"sent\": 31, \"errors\": 1}");
    char m1[] = "a=run 2 killed by SIGBUS (status 135)", m2[] = "b=run 1: testbed did not start";
    char *argv[] = { "compare", "--mark", "--missing", m1, "--missing", m2, a, a2, c, c2 };
    struct run r = run_compare(10, argv);
    assert_int_equal(r.rc, 0);
    char head[200];
    snprintf(head, sizeof head, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    assert_non_null(strstr(head, " a"));
    assert_non_null(strstr(head, " b"));          /* the column whose only run died */
    assert_non_null(strstr(head, " c"));
    /* columns a, c, then b (a label without any result comes last) */
    expect_cell(r.out, "runs", 0, "2 of 3");
    expect_cell(r.out, "runs", 1, "2");
    expect_cell(r.out, "runs", 2, "0 of 1");
    expect_cell(r.out, "sent", 2, "-");
    /* a sent the most, clear of c, but one of its runs died: not the best */
    expect_cell(r.out, "sent", 0, "30.5 (30-31)");
    expect_cell(r.out, "sent", 1, "10.5 (10-11)!");
    assert_non_null(strstr(r.out, "runs without a result"));
    assert_non_null(strstr(r.out, "\n  a: run 2 killed by SIGBUS (status 135)\n"));
    assert_non_null(strstr(r.out, "\n  b: run 1: testbed did not start\n"));
    run_free(&r);

    char *argv2[] = { "compare", "--format", "markdown", "--missing", m1, "--missing", m2, a, c };
    r = run_compare(9, argv2);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "| | a | c | b |"));
    assert_non_null(strstr(r.out, "| runs | 1 of 2 | 1 | 0 of 1 |"));
    assert_non_null(strstr(r.out, "- b: run 1: testbed did not start\n"));
    run_free(&r);

    char *argv3[] = { "compare", "--format", "json", "--missing", m1, "--missing", m2, a, c };
    r = run_compare(9, argv3);
    assert_int_equal(r.rc, 0);
    json_t *root = json_loads(r.out, 0, NULL), *cols = json_object_get(root, "columns");
    assert_int_equal(json_array_size(cols), 3);
    json_t *b = json_array_get(cols, 2);
    assert_string_equal(json_string_value(json_object_get(b, "label")), "b");
    assert_string_equal(json_string_value(json_array_get(json_object_get(b, "without_result"), 0)),
                        "run 1: testbed did not start");
    assert_int_equal(json_array_size(json_object_get(json_array_get(cols, 1), "without_result")), 0);
    json_decref(root);
    run_free(&r);

    char bad[] = "no-reason";
    char *argv4[] = { "compare", "--missing", bad, a };
    r = run_compare(4, argv4);
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(r.err, "--missing wants LABEL=WHY"));
    run_free(&r);
}

/* The summary under the table: what held up, each question's best with its margin and
 * whether the repeats allow saying so, and the answer. */
#define SUMMARY_RESULT                                                                              \
    "{\"format\": \"mailsoak-result\", \"format_version\": 1, \"label\": \"%s\", \"workload\": " WORKLOAD \
    ", \"summary\": {\"sent\": 100, \"lost\": %d, \"rate_out\": %g, \"latency\": {\"delivery\": {\"p99\": %g}}},"  \
    " \"verdict\": {\"kept_up\": %s, \"gates\": {\"failed\": %s}}, \"timeline\": []}\n"
static void test_summary(void **s)
{
    (void)s;
    /* fast: clearly best in msg/s out and p99 over two repeats; slow holds up too;
     * fastest out-ran both but lost mail: it did not hold up and is not the answer */
    char *f1 = write_file("s-f1.json", SUMMARY_RESULT, "fast", 0, 30.0, 100.0, "true", "[]");
    char *f2 = write_file("s-f2.json", SUMMARY_RESULT, "fast", 0, 31.0, 110.0, "true", "[]");
    char *s1 = write_file("s-s1.json", SUMMARY_RESULT, "slow", 0, 20.0, 300.0, "true", "[]");
    char *s2 = write_file("s-s2.json", SUMMARY_RESULT, "slow", 0, 21.0, 320.0, "true", "[]");
    char *x1 = write_file("s-x1.json", SUMMARY_RESULT, "lossy", 3, 50.0, 90.0, "true", "[\"lost\"]");
    char *x2 = write_file("s-x2.json", SUMMARY_RESULT, "lossy", 0, 52.0, 80.0, "false", "[]");
    char *argv[] = { "compare", "--mark", f1, f2, s1, s2, x1, x2 };
    struct run r = run_compare(8, argv);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "\nsummary:\n"));
    assert_non_null(strstr(r.out, "\n  holds up      fast, slow; not: lossy (lost, duplicated or corrupted mail in 1 "
                                  "of 2, did not keep up in 1 of 2, failed gates in 1 of 2)\n"));
    assert_non_null(strstr(r.out, "\n  msg/s out     lossy 51.0, 67 % above fast 30.5; beyond the spread of the repeats\n"));
    assert_non_null(strstr(r.out, "\n  answer        fast holds up best: beyond the spread of the repeats in msg/s out, "
                                  "delivery p99\n"));
    run_free(&r);

    /* Ranges that overlap: the runs cannot tell. */
    char *o1 = write_file("s-o1.json", SUMMARY_RESULT, "other", 0, 29.0, 105.0, "true", "[]");
    char *o2 = write_file("s-o2.json", SUMMARY_RESULT, "other", 0, 32.0, 95.0, "true", "[]");
    char *argv2[] = { "compare", f1, f2, o1, o2 };
    r = run_compare(5, argv2);
    assert_non_null(strstr(r.out, "; within the spread of the repeats: cannot tell\n"));
    assert_non_null(strstr(r.out, "\n  answer        the runs cannot tell which of those that held up is best: their "
                                  "differences lie within the spread of the repeats"));
    run_free(&r);

    /* One repeat: said, and nothing marked even where the means differ widely. */
    char *argv3[] = { "compare", "--mark", f1, s1 };
    r = run_compare(4, argv3);
    assert_non_null(strstr(r.out, "\n  msg/s out     fast 30.0, 50 % above slow 20.0; one repeat: cannot tell noise from "
                                  "difference\n"));
    assert_non_null(strstr(r.out, "one repeat cannot tell noise from difference (--repeat 2 or more)"));
    assert_null(strchr(r.out, '*'));
    run_free(&r);

    /* JSON carries the same lines. */
    char *argv4[] = { "compare", "--format", "json", f1, f2, s1, s2 };
    r = run_compare(7, argv4);
    json_t *root = json_loads(r.out, 0, NULL), *sum = json_object_get(root, "summary");
    json_t *last = json_array_get(sum, json_array_size(sum) - 1);
    assert_string_equal(json_string_value(json_object_get(last, "question")), "answer");
    assert_non_null(strstr(json_string_value(json_object_get(last, "answer")), "fast holds up best"));
    json_decref(root);
    run_free(&r);
}

static void test_refuses_different_workloads(void **s)
{
    (void)s;
    char *a = result("w1.json", "a", WORKLOAD, "{\"sent\": 1}");
    char *b = result("w2.json", "b", "{\"senders\": 40, \"readers\": 10, \"duration\": \"600s\"}", "{\"sent\": 2}");
    char *c = result("w3.json", "c", "{\"senders\": 20, \"readers\": 10, \"duration\": \"60s\", \"size\": \"5\"}",
                     "{\"sent\": 3}");
    char *argv[] = { "compare", a, b, c };
    struct run r = run_compare(4, argv);
    assert_int_equal(r.rc, 2);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "senders (20 in "));
    assert_non_null(strstr(r.err, "40 in "));
    assert_non_null(strstr(r.err, "duration (\"60s\" in "));
    assert_non_null(strstr(r.err, "size (absent in "));
    assert_non_null(strstr(r.err, "w2.json"));
    assert_null(strstr(r.err, "readers"));
    assert_non_null(strstr(r.err, "--force"));
    run_free(&r);

    char *argv2[] = { "compare", "--force", a, b, c };
    r = run_compare(5, argv2);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.err, "warning: different workloads"));
    expect_cell(r.out, "sent", 2, "3");
    run_free(&r);

    /* Same workload, keys in another order: the same. */
    char *d = result("w4.json", "d", "{\"duration\": \"60s\", \"readers\": 10, \"senders\": 20}", "{}");
    char *argv3[] = { "compare", a, d };
    r = run_compare(3, argv3);
    assert_int_equal(r.rc, 0);
    run_free(&r);
}

static void test_bad_files(void **s)
{
    (void)s;
    struct { char *path; const char *reason; } cases[] = {
        { NULL, "No such file" },
        { write_file("bad1.json", "{\"format\": \"mailsoak-result\", "), "invalid JSON" },
        { write_file("bad2.json", "{\"format\": \"other\", \"format_version\": 1}"), "not a mailsoak result file" },
        { write_file("bad3.json", "{\"format\": \"mailsoak-result\", \"format_version\": 2}"), "format_version 2" },
        { write_file("bad4.json", "{\"format\": \"mailsoak-result\"}"), "format_version\" is missing" },
        { write_file("bad5.json", "{\"format\": \"mailsoak-result\", \"format_version\": 1, \"summary\": []}"),
          "\"summary\" is not an object" },
        { write_file("bad6.json", "[1, 2]"), "not a mailsoak result file" },
    };
    char missing[320];
    snprintf(missing, sizeof missing, "%s/does-not-exist.json", tf_dir);
    cases[0].path = missing;
    char *good = result("good.json", "g", WORKLOAD, "{}");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *argv[] = { "compare", good, cases[i].path };
        struct run r = run_compare(3, argv);
        assert_int_equal(r.rc, 2);
        assert_string_equal(r.out, "");
        /* "file: reason" */
        assert_memory_equal(r.err, cases[i].path, strlen(cases[i].path));
        assert_true(r.err[strlen(cases[i].path)] == ':');
        if (!strstr(r.err, cases[i].reason))
            fail_msg("case %zu: '%s' lacks '%s'", i, r.err, cases[i].reason);
        run_free(&r);
    }
    char *argv[] = { "compare", "--format", "yaml", good };
    struct run r = run_compare(4, argv);
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(r.err, "unknown format 'yaml'"));
    run_free(&r);
    char *argv2[] = { "compare" };
    r = run_compare(1, argv2);
    assert_int_equal(r.rc, 2);
    run_free(&r);
}

static void test_labels_and_escaping(void **s)
{
    (void)s;
    /* Unlabelled files are their own columns, named after the file. */
    char *u1 = write_file("first-run.json", "{\"format\": \"mailsoak-result\", \"format_version\": 1, "
                                            "\"summary\": {\"sent\": 5}}");
    char *u2 = write_file("second-run.json", "{\"format\": \"mailsoak-result\", \"format_version\": 1, \"label\": \"\", "
                                             "\"summary\": {\"sent\": 6}}");
    char *p = result("pipe.json", "a|b,c\\\"d", "{}", "{\"sent\": 7}");
    char *argv[] = { "compare", "--format", "markdown", u1, u2, p };
    struct run r = run_compare(6, argv);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "| | first-run | second-run | a\\|b,c\"d |"));
    run_free(&r);
    char *argv2[] = { "compare", "--format", "csv", u1, p };
    r = run_compare(5, argv2);
    assert_non_null(strstr(r.out, ",\"a|b,c\"\"d\","));
    run_free(&r);
    /* Order of columns = first appearance; repeats join their label's column. */
    char *x1 = result("x1.json", "zeta", "{}", "{\"sent\": 1}");
    char *y1 = result("y1.json", "alpha", "{}", "{\"sent\": 2}");
    char *x2 = result("x2.json", "zeta", "{}", "{\"sent\": 3}");
    char *argv3[] = { "compare", x1, y1, x2 };
    r = run_compare(4, argv3);
    assert_int_equal(r.rc, 0);
    assert_true(strstr(r.out, "zeta") < strstr(r.out, "alpha"));
    expect_cell(r.out, "sent", 0, "2 (1-3)");
    run_free(&r);
}

/* A byte a terminal would obey: C0 but the line end, DEL, C1 (UTF-8 0xc2 0x80..0x9f). */
static int has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            return 1;
    return 0;
}

/* A result file can carry a server's bytes: its label, run_id and workload reach the
 * terminal as \xNN, in every format and in the messages. */
static void test_control_bytes_stay_off_the_terminal(void **s)
{
    (void)s;
    char *a = write_file("evil-a.json",
                         "{\"format\": \"mailsoak-result\", \"format_version\": 1,\n"
                         " \"label\": \"evil\\u001b[2J\\u009b31m\\u0007,\\nx\", \"run_id\": \"id\\u009b1\\u007f\",\n"
                         " \"workload\": {\"senders\": 20, \"k\\u001b]0;t\\u0007\": \"v\\u009b\\u001b[1m\"},\n"
                         " \"summary\": {\"sent\": 5}, \"timeline\": []}\n");
    char *b = result("evil-b.json", "b", "{\"senders\": 40}", "{\"sent\": 6}");
    static const char *const formats[] = { "text", "markdown", "csv", "json" };
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        char *argv[] = { "compare", "--force", "--format", (char *)formats[i], a, b };
        struct run r = run_compare(6, argv);
        assert_int_equal(r.rc, 0);
        if (has_control(r.out) || has_control(r.err))
            fail_msg("%s: a control byte reached the terminal:\n%s\n%s", formats[i], r.out, r.err);
        /* the bytes are shown, escaped (and quoted as each format quotes), not dropped */
        assert_non_null(strstr(r.out, "evil\\"));
        assert_non_null(strstr(r.out, "x1b"));
        assert_non_null(strstr(r.out, "x9b31m"));
        assert_non_null(strstr(r.err, "k\\x1b]0;t\\x07"));
        run_free(&r);
    }
    char *argv[] = { "compare", a, b };
    struct run r = run_compare(3, argv);
    assert_int_equal(r.rc, 2);
    assert_false(has_control(r.err));
    assert_non_null(strstr(r.err, "\\xc2\\x9b"));
    run_free(&r);
}

/* Each run's verdict in the table: the share proven (never rounded up to 100 %), the
 * gates failed, and under the table what each failed gate measured, so that the
 * column that moved the most mail is not read as healthy when it failed its gates. */
#define VERDICT_RESULT(label, sent, share, failed, results)                                         \
    "{\"format\": \"mailsoak-result\", \"format_version\": 1, \"label\": \"" label "\",\n"         \
    " \"workload\": " WORKLOAD ", \"summary\": {\"sent\": " sent "}, \"timeline\": [],\n"           \
    " \"verdict\": {\"proven_share\": " share ", \"gates\": {\"failed\": " failed ",\n"              \
    "  \"results\": " results "}}}\n"
static void test_verdict_rows(void **s)
{
    (void)s;
    char *a = write_file("va.json", VERDICT_RESULT("busy", "900", "0.99995", "[\"lost\", \"delivery p95\"]",
                                                   "[{\"name\": \"lost\", \"pass\": false, \"text\": \"lost 3, must be = 0\"},"
                                                   " {\"name\": \"sent\", \"pass\": true, \"text\": \"sent 900, must be > 0\"},"
                                                   " {\"name\": \"delivery p95\", \"pass\": false,"
                                                   " \"text\": \"delivery p95 \\u001b[2J9 s, must be <= 5 s\"}]"));
    char *b = write_file("vb.json", VERDICT_RESULT("calm", "500", "1", "[]",
                                                   "[{\"name\": \"lost\", \"pass\": true, \"text\": \"lost 0, must be = 0\"}]"));
    char *c = result("vc.json", "old", WORKLOAD, "{\"sent\": 700}");
    char *argv[] = { "compare", "--mark", a, b, c };
    struct run r = run_compare(5, argv);
    assert_int_equal(r.rc, 0);
    expect_cell(r.out, "proven", 0, "99.99%");
    expect_cell(r.out, "proven", 1, "100%");
    expect_cell(r.out, "proven", 2, "-");
    expect_cell(r.out, "gates failed", 0, "2");
    expect_cell(r.out, "gates failed", 1, "0");
    expect_cell(r.out, "gates failed", 2, "-");
    assert_non_null(strstr(r.out, "gates failed:\n  busy: lost 3, must be = 0\n"
                                  "  busy: delivery p95 \\x1b[2J9 s, must be <= 5 s\n"));
    assert_null(strstr(r.out, "sent 900, must be"));
    assert_null(strstr(r.out, "calm:"));
    assert_false(has_control(r.out));
    run_free(&r);

    /* Files of no verdict (older ones) add no rows and no list. */
    char *argv2[] = { "compare", c };
    r = run_compare(2, argv2);
    assert_null(strstr(r.out, "proven"));
    assert_null(strstr(r.out, "gates failed"));
    run_free(&r);

    char *argv3[] = { "compare", "--format", "markdown", a, b };
    r = run_compare(5, argv3);
    assert_non_null(strstr(r.out, "| proven | 99.99% | 100% |\n| gates failed | 2 | 0 |\n"));
    assert_non_null(strstr(r.out, "\nGates failed:\n\n- busy: lost 3, must be = 0\n"));
    run_free(&r);
    char *argv4[] = { "compare", "--format", "csv", a, b };
    r = run_compare(5, argv4);
    assert_non_null(strstr(r.out, "\nproven,%,more,99.995,99.995,99.995,1,100,100,100,1\n"));
    run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_text),
        cmocka_unit_test(test_golden_markdown),
        cmocka_unit_test(test_marks_need_clear_ranges_and_one_kind),
        cmocka_unit_test(test_golden_csv),
        cmocka_unit_test(test_golden_json),
        cmocka_unit_test(test_golden_numbers_match_fixtures),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_mean_and_spread),
        cmocka_unit_test(test_one_style_per_row),
        cmocka_unit_test(test_missing_collector_prints_dash),
        cmocka_unit_test(test_marks),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_died_runs_keep_their_column),
        cmocka_unit_test(test_refuses_different_workloads),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_labels_and_escaping),
        cmocka_unit_test(test_control_bytes_stay_off_the_terminal),
        cmocka_unit_test(test_verdict_rows),
    };
    return cmocka_run_group_tests(tests, tf_setup, tf_teardown);
}
