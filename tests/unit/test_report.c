/* test_report: the HTML report and the timeline CSV without a browser: strings from
 * result files are escaped, partial files still give a page, the CSV has a row per
 * file per entry, and the output file is replaced atomically or not at all. The
 * rendering itself is checked in Chromium by tests/integration/t_report_html.sh. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyse/report.h"
#include "cmd/cmd_report.h"
#include "lib/alloc.h"
#include "testfiles.h"

#define FIX "tests/fixtures/results/"
static char *const fixtures[] = {
    FIX "maildir-1.json", FIX "maildir-2.json", FIX "mbox-1.json", FIX "mbox-2.json",
    FIX "sdbox-1.json", FIX "sdbox-2.json", FIX "mdbox-1.json", FIX "mdbox-2.json",
};
#define NFIX (sizeof fixtures / sizeof *fixtures)

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static int run_report(int argc, char **argv, char **err_text)
{
    size_t on, en;
    char *out_text;
    FILE *out = open_memstream(&out_text, &on), *err = open_memstream(err_text, &en);
    int rc = cmd_report_io(argc, argv, out, err);
    fclose(out);
    fclose(err);
    free(out_text);
    return rc;
}

static const char evil_file[] =
    "{\"format\": \"mailsoak-result\", \"format_version\": 1, \"version\": \"<b>0.1</b>\",\n"
    " \"label\": \"<script>alert('label')</script>\", \"run_id\": \"\\\"><img src=x onerror=alert(1)>\",\n"
    " \"workload\": {\"senders\": \"<i>20</i>\"},\n"
    " \"config\": {\"run\": {\"label\": \"<script>x</script>\"}, \"<sec>\": {\"k&y\": [\"<a href=x>\"]}},\n"
    " \"summary\": {\"sent\": 3, \"error_examples\": {\"<cls>\": [\"550 <script>bad</script>\"]},\n"
    "   \"log_classes\": {\"lock\": {\"count\": 1, \"examples\": [{\"t\": 1, \"line\": \"</code></td><script>\"}]}}},\n"
    " \"timeline\": [{\"t\": 10, \"phase\": \"send\", \"sent\": 3, \"rate_in\": 0.3,\n"
    "   \"errors_by_class\": {\"<cls>\": 1}, \"latency\": {\"<cmd>\": {\"p99\": 1}},\n"
    "   \"server\": {\"log_hits\": {\"<lock>\": 1}}}],\n"
    " \"events\": [{\"t\": 5, \"kind\": \"<crash>\", \"text\": \"<script>ev</script>\"}]}\n";

static void test_html_escapes_everything(void **s)
{
    (void)s;
    char *p = tf_write("evil.json", evil_file), err[256];
    struct result_set rs;
    assert_int_equal(results_load(&rs, &p, 1, err, sizeof err), 0);
    char *html;
    size_t n;
    FILE *f = open_memstream(&html, &n);
    assert_int_equal(report_write_html(f, &rs, "senders (<x> in a, <y> in b)", NULL, 0), 0);
    fclose(f);
    /* No element can come from the file: not one script, img, a, i, b or unknown tag. */
    assert_int_equal(count(html, "<script"), 0);
    assert_int_equal(count(html, "<img"), 0);
    assert_int_equal(count(html, "<a href=x"), 0);
    assert_int_equal(count(html, "<i>"), 0);
    assert_int_equal(count(html, "<b>"), 0);
    assert_int_equal(count(html, "<cls>"), 0);
    assert_int_equal(count(html, "<cmd>"), 0);
    assert_int_equal(count(html, "<x>"), 0);
    assert_true(count(html, "&lt;script&gt;alert(&#39;label&#39;)&lt;/script&gt;") > 0);
    assert_true(count(html, "&quot;&gt;&lt;img src=x") > 0);
    assert_true(count(html, "550 &lt;script&gt;bad&lt;/script&gt;") > 0);
    assert_true(count(html, "&lt;/code&gt;&lt;/td&gt;&lt;script&gt;") > 0);
    assert_true(count(html, "k&amp;y") > 0);
    assert_true(count(html, "&lt;x&gt; in a") > 0);
    /* The label in an attribute stays inside its quotes. */
    assert_true(count(html, "data-label=\"&lt;script&gt;alert(&#39;label&#39;)&lt;/script&gt;\"") > 0);
    free(html);
    results_free(&rs);
}

/* A file with nothing but the envelope still gives a page, with "-" and no-data notes. */
static void test_partial_file(void **s)
{
    (void)s;
    char *p = tf_write("bare.json", "{\"format\": \"mailsoak-result\", \"format_version\": 1}");
    char *out = tf_path("bare.html"), *csv = tf_path("bare.csv"), *err;
    char *argv[] = { "report", "-o", out, "--csv", csv, p };
    assert_int_equal(run_report(6, argv, &err), 0);
    assert_string_equal(err, "");
    free(err);
    char *html = tf_slurp(out);
    assert_non_null(html);
    assert_int_equal(count(html, "<path class=\"series\""), 0);
    assert_int_equal(count(html, "<figure class=\"chart empty\""), 16);
    assert_int_equal(count(html, "<svg"), 0);
    assert_non_null(strstr(html, "No errors and no log hits."));
    assert_true(count(html, "<td>-</td>") >= 17);
    /* the runs table: every value of the envelope and the summary not measured, "-" */
    assert_non_null(strstr(html, "</code></td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>"
                                 "<td>-</td><td>-</td><td>-</td><td>-</td><td class=\"l\">-</td>"
                                 "<td>-</td><td>-</td></tr>"));
    assert_non_null(strstr(html, "</html>"));
    free(html);
    char *c = tf_slurp(csv);
    assert_int_equal(count(c, "\n"), 1);           /* the header only */
    free(c);
}

/* The CSV is read on terminals too: a file's control bytes (label, run_id, phase,
 * class names) come out as \xNN and a CR or LF never breaks a row; so do report's
 * messages, which quote the files' workloads. */
static void test_csv_and_messages_printable(void **s)
{
    (void)s;
    char *a = tf_write("ctl-a.json",
                       "{\"format\": \"mailsoak-result\", \"format_version\": 1, \"label\": \"l\\u001b[2J\\r\\n\",\n"
                       " \"run_id\": \"r\\u009b1\\u007f\", \"workload\": {\"k\\u001b]0;t\\u0007\": 1},\n"
                       " \"timeline\": [{\"t\": 1, \"phase\": \"p\\u0007\", \"errors_by_class\": {\"c\\u001b\": 1}}]}\n");
    char *b = tf_write("ctl-b.json", "{\"format\": \"mailsoak-result\", \"format_version\": 1, \"workload\": {}}\n");
    char *out = tf_path("ctl.html"), *csv = tf_path("ctl.csv"), *err;
    char *argv[] = { "report", "-o", out, "--csv", csv, "--force", a, b };
    assert_int_equal(run_report(8, argv, &err), 0);
    char *c = tf_slurp(csv);
    assert_non_null(c);
    for (const char *t[] = { c, err }, **p = t; p < t + 2; p++)
        for (const unsigned char *u = (const unsigned char *)*p; *u; u++)
            if ((*u < 0x20 && *u != '\n') || *u == 0x7f || (*u == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f))
                fail_msg("control byte 0x%02x in:\n%s", *u, *p);
    assert_int_equal(count(c, "\n"), 2);           /* the header and one entry */
    assert_non_null(strstr(c, "l\\x1b[2J\\x0d\\x0a,r\\xc2\\x9b1\\x7f,"));
    assert_non_null(strstr(c, "p\\x07"));
    assert_non_null(strstr(c, "error c\\x1b"));
    assert_non_null(strstr(err, "k\\x1b]0;t\\x07"));
    free(c);
    free(err);
    char *argv2[] = { "report", "-o", out, a, b };
    assert_int_equal(run_report(5, argv2, &err), 2);
    assert_non_null(strstr(err, "k\\x1b]0;t\\x07"));
    assert_null(strchr(err, '\x1b'));
    free(err);
}

/* Pending beside lost, in the runs table with its reasons and in the comparison
 * table with a row per reason some run has (none for the reasons all runs lack). */
static void test_pending_next_to_lost(void **s)
{
    (void)s;
    struct result_set rs;
    char err[256];
    assert_int_equal(results_load(&rs, fixtures, NFIX, err, sizeof err), 0);
    char *html;
    size_t n;
    FILE *f = open_memstream(&html, &n);
    assert_int_equal(report_write_html(f, &rs, NULL, NULL, 0), 0);
    fclose(f);
    assert_non_null(strstr(html, "<th>lost</th><th>pending</th><th>pending because</th>"));
    assert_int_equal(count(html, "<td class=\"l\">queued "), NFIX);   /* every fixture has both */
    assert_non_null(strstr(html, "queued 6, unswept 3859"));             /* maildir-1 */
    assert_int_equal(count(html, "<tr><th>pending</th>"), 1);
    assert_int_equal(count(html, "<tr><th>pending queued</th>"), 1);
    assert_int_equal(count(html, "<tr><th>pending unswept</th>"), 1);
    assert_int_equal(count(html, "<tr><th>pending peeked</th>"), 0);    /* 0 in every run */
    free(html);
    results_free(&rs);
}

/* Late messages (delivered intact) apart from the failures; the pending said, not
 * left out silently. */
static void test_late_apart_pending_said(void **s)
{
    (void)s;
    static const char text[] =
        "{\"format\": \"mailsoak-result\", \"format_version\": 1, \"label\": \"r\",\n"
        " \"summary\": {\"sent\": 10, \"delivered\": 2, \"lost\": 1, \"pending\": 7, \"pending_queued\": 7,\n"
        "   \"lost_examples\": [{\"message_id\": \"<LOST@x>\", \"mailbox\": \"u1\", \"queue_id\": \"\"}],\n"
        "   \"late_examples\": [{\"message_id\": \"<LATE@x>\", \"mailbox\": \"u2\", \"queue_id\": \"Q1\"}]}}\n";
    char *p = tf_write("late.json", text), err[256];
    struct result_set rs;
    assert_int_equal(results_load(&rs, &p, 1, err, sizeof err), 0);
    char *html;
    size_t n;
    FILE *f = open_memstream(&html, &n);
    assert_int_equal(report_write_html(f, &rs, NULL, NULL, 0), 0);
    fclose(f);
    const char *failed = strstr(html, "Messages not delivered exactly once"), *late = strstr(html, "Late messages:");
    assert_non_null(failed);
    assert_non_null(late);
    const char *lost_at = strstr(failed, "&lt;LOST@x&gt;"), *late_at = strstr(html, "&lt;LATE@x&gt;");
    assert_non_null(lost_at);
    assert_non_null(late_at);
    assert_true(late_at > late);                       /* the late one only in its own section */
    assert_int_equal(count(html, "&lt;LATE@x&gt;"), 1);
    assert_non_null(strstr(failed, "7 pending messages, neither delivered nor proven lost"));
    free(html);
    results_free(&rs);
}

/* Counts CSV fields of one record (quotes respected); returns the end of the record. */
static const char *csv_record(const char *p, size_t *fields)
{
    int q = 0;
    *fields = 1;
    for (; *p; p++) {
        if (*p == '"')
            q = !q;
        else if (!q && *p == ',')
            (*fields)++;
        else if (!q && *p == '\n')
            return p + 1;
    }
    return p;
}

static void test_timeline_csv(void **s)
{
    (void)s;
    char *csv = tf_path("t.csv"), *html = tf_path("t.html"), *err;
    char *argv[4 + 2 + NFIX] = { "report", "-o", html, "--csv", csv };
    for (size_t i = 0; i < NFIX; i++)
        argv[5 + i] = fixtures[i];
    assert_int_equal(run_report(5 + NFIX, argv, &err), 0);
    free(err);
    char *text = tf_slurp(csv);
    assert_non_null(text);
    size_t entries = 0;
    for (size_t i = 0; i < NFIX; i++) {
        json_t *root = json_load_file(fixtures[i], 0, NULL);
        entries += json_array_size(json_object_get(root, "timeline"));
        json_decref(root);
    }
    size_t header, fields, rows = 0;
    const char *p = csv_record(text, &header);
    assert_true(strncmp(text, "file,label,run_id,t,phase,sent,read,errors,", 43) == 0);
    while (*p) {
        p = csv_record(p, &fields);
        assert_int_equal(fields, header);
        rows++;
    }
    assert_int_equal(rows, entries);
    /* A value straight from the files: mbox-1's first entry. */
    json_t *root = json_load_file(FIX "mbox-1.json", 0, NULL);
    json_t *e = json_array_get(json_object_get(root, "timeline"), 0);
    char want[200];
    snprintf(want, sizeof want, "\n" FIX "mbox-1.json,mbox,%s,10,send,%lld,%lld,",
             json_string_value(json_object_get(root, "run_id")),
             (long long)json_integer_value(json_object_get(e, "sent")),
             (long long)json_integer_value(json_object_get(e, "read")));
    assert_non_null(strstr(text, want));
    json_decref(root);
    free(text);
}

static size_t files_in_dir(void)
{
    DIR *d = opendir(tf_dir);
    struct dirent *de;
    size_t n = 0;
    while ((de = readdir(d)))
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_atomic_and_errors(void **s)
{
    (void)s;
    char *out = tf_write("keep.html", "old report\n"), *err;
    char *bad = tf_write("bad.json", "{\"format\": \"mailsoak-result\", \"format_version\": 1, \"timeline\": 5}");
    size_t before = files_in_dir();
    char *argv[] = { "report", "-o", out, bad };
    assert_int_equal(run_report(4, argv, &err), 2);
    assert_non_null(strstr(err, "\"timeline\" is not an array"));
    free(err);
    char *text = tf_slurp(out);
    assert_string_equal(text, "old report\n");   /* untouched */
    free(text);
    assert_int_equal(files_in_dir(), before);       /* and no temp file left */

    char *nodir = tf_path("no/such/dir/r.html");
    char *argv2[] = { "report", "-o", nodir, fixtures[0] };
    assert_int_equal(run_report(4, argv2, &err), 1);
    assert_non_null(strstr(err, "No such file or directory"));
    free(err);

    char *argv3[] = { "report", fixtures[0] };
    assert_int_equal(run_report(2, argv3, &err), 2);
    assert_non_null(strstr(err, "-o REPORT.html is required"));
    free(err);

    /* Different workloads: refused, then reported with a warning under --force. */
    char *w = tf_write("w.json", "{\"format\": \"mailsoak-result\", \"format_version\": 1, "
                                   "\"workload\": {\"senders\": 99}}");
    char *argv4[] = { "report", "-o", out, fixtures[0], w };
    assert_int_equal(run_report(5, argv4, &err), 2);
    assert_non_null(strstr(err, "different workloads"));
    free(err);
    char *argv5[] = { "report", "--force", "-o", out, fixtures[0], w };
    assert_int_equal(run_report(6, argv5, &err), 0);
    free(err);
    text = tf_slurp(out);
    assert_non_null(strstr(text, "These runs are not comparable: different workloads: senders"));
    free(text);
}

/* `report --missing`: a run that wrote no result keeps its column in the summary, its
 * reason under it (escaped: it quotes a log), and the page's first line counts it. */
static void test_died_run_keeps_its_column(void **s)
{
    (void)s;
    char *out = tf_path("died.html"), *err = NULL;
    char m[] = "mbox=run 1 killed by SIGBUS <status 135>";
    char *argv[] = { "report", "-o", out, "--missing", m, (char *)fixtures[0] };
    assert_int_equal(run_report(6, argv, &err), 0);
    free(err);
    char *html = tf_slurp(out);
    assert_non_null(html);
    assert_non_null(strstr(html, "1 run without a result"));
    assert_non_null(strstr(html, "<th>mbox</th>"));
    assert_non_null(strstr(html, "<td class=\"died\">0 of 1</td>"));
    assert_non_null(strstr(html, "<li>mbox: run 1 killed by SIGBUS &lt;status 135&gt;</li>"));
    free(html);
}

/* Charts apart per kind of server (the reference server's thousands of messages a second
 * would flatten Postfix + Dovecot's hundreds on one axis), and a delivery axis labelled
 * in the unit its ticks are written in. */
#define KIND_RESULT                                                                                  \
    "{\"format\": \"mailsoak-result\", \"format_version\": 1, \"label\": \"%s\", \"workload\": {},"       \
    " \"config\": {\"run\": {\"server_kind\": \"%s\"}}, \"summary\": {\"sent\": 1},"                      \
    " \"timeline\": [{\"t\": 10, \"phase\": \"send\", \"rate_in\": %d, \"latency\": {\"delivery\": {\"p99\": %d}}},"\
    " {\"t\": 20, \"phase\": \"send\", \"rate_in\": %d, \"latency\": {\"delivery\": {\"p99\": %d}}}]}\n"
static void test_charts_per_kind_and_units(void **s)
{
    (void)s;
    char text[1024], *p[2], err[256];
    snprintf(text, sizeof text, KIND_RESULT, "maildir", "postfix+dovecot", 700, 2500, 720, 3000);
    p[0] = xstrdup(tf_write("k-pd.json", text));
    snprintf(text, sizeof text, KIND_RESULT, "ref-memory", "reference", 4000, 40, 4100, 60);
    p[1] = xstrdup(tf_write("k-ref.json", text));
    struct result_set rs;
    assert_int_equal(results_load(&rs, p, 2, err, sizeof err), 0);
    char *html;
    size_t n;
    FILE *f = open_memstream(&html, &n);
    assert_int_equal(report_write_html(f, &rs, NULL, NULL, 0), 0);
    fclose(f);
    /* one chart of each kind, one line each */
    assert_non_null(strstr(html, "id=\"chart-rate_in-1\" data-series=\"1\""));
    assert_non_null(strstr(html, "id=\"chart-rate_in-2\" data-series=\"1\""));
    assert_non_null(strstr(html, "<figcaption>postfix+dovecot: Messages sent per second</figcaption>"));
    assert_non_null(strstr(html, "<figcaption>reference: Messages sent per second</figcaption>"));
    assert_null(strstr(html, "id=\"chart-rate_in\""));
    /* 2.5-3 s of delivery ticks in seconds and says so; 40-60 ms in ms */
    const char *pd = strstr(html, "id=\"chart-delivery_p99-1\""), *ref = strstr(html, "id=\"chart-delivery_p99-2\"");
    assert_non_null(pd);
    assert_non_null(ref);
    const char *pd_end = strstr(pd, "</figure>"), *ref_end = strstr(ref, "</figure>");
    const char *lab = strstr(pd, "rotate(-90)\" text-anchor=\"middle\">seconds<");
    assert_true(lab && lab < pd_end);
    lab = strstr(ref, "rotate(-90)\" text-anchor=\"middle\">ms<");
    assert_true(lab && lab < ref_end);
    free(html);
    results_free(&rs);
    free(p[0]);
    free(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_html_escapes_everything),
        cmocka_unit_test(test_partial_file),
        cmocka_unit_test(test_csv_and_messages_printable),
        cmocka_unit_test(test_pending_next_to_lost),
        cmocka_unit_test(test_late_apart_pending_said),
        cmocka_unit_test(test_timeline_csv),
        cmocka_unit_test(test_atomic_and_errors),
        cmocka_unit_test(test_died_run_keeps_its_column),
        cmocka_unit_test(test_charts_per_kind_and_units),
    };
    return cmocka_run_group_tests(tests, tf_setup, tf_teardown);
}
