/* cmd_compare: `mailsoak compare`: the classic side-by-side table of result files
 * (analyse/compare.c builds and prints it), in the format asked for. */
#include "cmd/cmd_compare.h"

#include <stdlib.h>
#include <string.h>

#include "analyse/compare.h"
#include "analyse/compare_write.h"
#include "analyse/results.h"
#include "lib/cli.h"

static void usage(FILE *f)
{
    fputs("usage: mailsoak compare [--format text|markdown|csv|json] [--runs] [--mark] [--force]\n"
          "                        [--missing LABEL=WHY]... FILE.json...\n"
          "  One column per label; files with the same label are repeats (mean, and min-max).\n"
          "  --format F  text (default), markdown, csv or json\n"
          "  --runs      also show each run as its own column\n"
          "  --mark      mark the best (*) and the worst (!) column of each row\n"
          "  --force     compare files even when their workloads differ\n"
          "  --missing LABEL=WHY\n"
          "              a run of LABEL that wrote no result, and why (repeatable): its column\n"
          "              stays, counting the runs that did, and the reason is printed under it\n", f);
}

int cmd_compare_io(int argc, char **argv, FILE *out, FILE *err)
{
    static const struct { const char *name; enum cmp_format fmt; } formats[] = {
        { "text", CMP_TEXT }, { "markdown", CMP_MARKDOWN }, { "md", CMP_MARKDOWN },
        { "csv", CMP_CSV }, { "json", CMP_JSON },
    };
    const char *format = "text";
    int runs = 0, mark = 0, force = 0;
    struct strlist missing = { 0 };
    const struct cli_opt opts[] = {
        { .name = "--format", .value = "a value (text, markdown, csv or json)", .val = &format },
        { .name = "--runs", .flag = &runs },
        { .name = "--mark", .flag = &mark },
        { .name = "--force", .flag = &force },
        { .name = "--missing", .value = "LABEL=WHY", .list = &missing },
        { 0 },
    };
    const struct cli_cmd cmd = { .name = "compare", .usage = usage, .opts = opts, .words = CLI_FILES };
    char **files, msg[2600];
    size_t nfiles;
    int rc;
    if (!cli_parse(&cmd, argc, argv, out, err, &files, &nfiles, &rc)) {
        strlist_free(&missing);
        return rc;
    }
    struct cmp_missing *m = NULL;
    if (cmp_missing_list(&m, &missing, "compare", err) < 0) {
        strlist_free(&missing);
        free(files);
        return 2;
    }
    size_t k = 0;
    while (k < sizeof formats / sizeof *formats && strcmp(format, formats[k].name))
        k++;
    if (k == sizeof formats / sizeof *formats) {
        snprintf(msg, sizeof msg, "unknown format '%s' (use text, markdown, csv or json)", format);
        cli_say(err, "compare", 0, msg);
        free(m);
        strlist_free(&missing);
        free(files);
        return 2;
    }
    unsigned flags = (runs ? CMP_RUNS : 0) | (mark ? CMP_MARK : 0);
    struct result_set rs;
    if ((rc = results_open(&rs, files, nfiles, force, "compare", err, msg, sizeof msg)) == 0) {
        struct cmp_table t;
        cmp_build(&t, &rs, m, missing.n);
        if (cmp_write(out, &t, formats[k].fmt, flags) < 0 || fflush(out) != 0) {
            fprintf(err, "compare: write error\n");
            rc = 1;
        }
        cmp_free(&t);
        results_free(&rs);
    }
    free(m);
    strlist_free(&missing);
    free(files);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    return cmd_compare_io(argc, argv, stdout, stderr);
}
