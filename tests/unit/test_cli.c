/* Unit tests of lib/cli: the option parser the commands share
 * (both value forms, --help, "--", required options, the refusals with their
 * usage) and cli_say, which keeps a result file's control bytes off the terminal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/cli.h"

static void usage(FILE *f)
{
    fputs("usage: test\n", f);
}

struct parsed {
    int rc;
    const char *output;
    int force;
    char **files;
    size_t nfiles;
    char *out, *err;
};

/* required: what is said when --output is not given, or NULL: it may be left out. */
static struct parsed parse_with(const char *required, int argc, char **argv)
{
    struct parsed p = { 0 };
    size_t on, en;
    FILE *out = open_memstream(&p.out, &on), *err = open_memstream(&p.err, &en);
    const struct cli_opt opts[] = {
        { .name = "--output", .alias = "-o", .value = "a file name", .val = &p.output, .required = required },
        { .name = "--force", .flag = &p.force },
        { 0 },
    };
    const struct cli_cmd cmd = { .name = "test", .usage = usage, .opts = opts, .words = CLI_FILES };
    int status;
    p.rc = cli_parse(&cmd, argc, argv, out, err, &p.files, &p.nfiles, &status)
               ? 0 : status == 0 ? 1 : status;
    if (p.rc)
        assert_null(p.files);
    fclose(out);
    fclose(err);
    return p;
}

static struct parsed parse(int argc, char **argv)
{
    return parse_with(NULL, argc, argv);
}

static void parsed_free(struct parsed *p)
{
    free(p->files);
    free(p->out);
    free(p->err);
}

static void values_flags_and_files(void **st)
{
    (void)st;
    char *a[] = { "test", "a.json", "--output", "x.html", "--force", "b.json" };
    struct parsed p = parse(6, a);
    assert_int_equal(p.rc, 0);
    assert_string_equal(p.output, "x.html");
    assert_int_equal(p.force, 1);
    assert_int_equal(p.nfiles, 2);
    assert_string_equal(p.files[0], "a.json");
    assert_string_equal(p.files[1], "b.json");
    assert_string_equal(p.err, "");
    parsed_free(&p);

    char *b[] = { "test", "--output=y.html", "-o", "z.html", "-", "--", "--force", "-o" };
    p = parse(8, b);
    assert_int_equal(p.rc, 0);
    assert_string_equal(p.output, "z.html");   /* the last one given */
    assert_int_equal(p.force, 0);              /* after "--": a file */
    assert_int_equal(p.nfiles, 3);
    assert_string_equal(p.files[0], "-");
    assert_string_equal(p.files[1], "--force");
    assert_string_equal(p.files[2], "-o");
    parsed_free(&p);
}

static void help_and_refusals(void **st)
{
    (void)st;
    char *h[] = { "test", "a.json", "--help" };
    struct parsed p = parse(3, h);
    assert_int_equal(p.rc, 1);
    assert_string_equal(p.out, "usage: test\n");
    assert_string_equal(p.err, "");
    parsed_free(&p);

    static const struct { int argc; char *argv[3]; const char *err; } bad[] = {
        { 1, { "test" }, "test: no result files given\nusage: test\n" },
        { 3, { "test", "a.json", "-o" }, "test: -o needs a file name\nusage: test\n" },
        { 3, { "test", "a.json", "--outpt=x" }, "test: unknown option '--outpt=x'\nusage: test\n" },
        { 3, { "test", "a.json", "-o=x" }, "test: unknown option '-o=x'\nusage: test\n" },
        { 3, { "test", "a.json", "--force=1" }, "test: unknown option '--force=1'\nusage: test\n" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        p = parse(bad[i].argc, (char **)bad[i].argv);
        assert_int_equal(p.rc, 2);
        assert_string_equal(p.out, "");
        assert_string_equal(p.err, bad[i].err);
        parsed_free(&p);
    }
}

/* A required option: refused when missing or empty, after the files are checked. */
static void a_required_option(void **st)
{
    (void)st;
    static const struct { int argc; char *argv[4]; int rc; const char *err; } cases[] = {
        { 2, { "test", "a.json" }, 2, "test: no output: -o FILE\nusage: test\n" },
        { 4, { "test", "a.json", "-o", "" }, 2, "test: no output: -o FILE\nusage: test\n" },
        { 1, { "test" }, 2, "test: no result files given\nusage: test\n" },
        { 4, { "test", "a.json", "-o", "x.json" }, 0, "" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct parsed p = parse_with("no output: -o FILE", cases[i].argc, (char **)cases[i].argv);
        assert_int_equal(p.rc, cases[i].rc);
        assert_string_equal(p.err, cases[i].err);
        parsed_free(&p);
    }
}

static void say_keeps_control_bytes_off(void **st)
{
    (void)st;
    char *text;
    size_t n;
    FILE *f = open_memstream(&text, &n);
    cli_say(f, "compare", 0, "label \x1b[2J\xc2\x9b" "31m \xc3\xa9t\xc3\xa9");
    cli_say(f, "merge", 1, "one\ntwo\x07\n");
    fclose(f);
    assert_string_equal(text, "compare: label \\x1b[2J\\xc2\\x9b31m \xc3\xa9t\xc3\xa9\n"
                              "merge: warning: one\nmerge: warning: two\\x07\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_flags_and_files),
        cmocka_unit_test(help_and_refusals),
        cmocka_unit_test(a_required_option),
        cmocka_unit_test(say_keeps_control_bytes_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
