/* cmd_report: `mailsoak report`: reads result files (results_open refuses to mix
 * workloads unless --force), writes the HTML page and, on request, the CSV
 * (analyse/report.c, report_csv.c), each atomically so a failed write leaves the
 * old file. */
#include "cmd/cmd_report.h"

#include <stdlib.h>

#include "analyse/report.h"
#include "analyse/report_csv.h"
#include "lib/cli.h"
#include "lib/atomicfile.h"

/* Writes one output atomically; on any failure the old file stays. */
/* What an output is written from: the files, the workload warning, the runs without a result. */
struct report_in {
    const struct result_set *rs;
    const char *msg;
    const struct cmp_missing *missing;
    size_t nmissing;
};

static int write_out(const char *path, int (*fn)(FILE *, const struct report_in *), const struct report_in *in,
                     FILE *err)
{
    struct atomic_file a;
    char why[600] = "";
    if (atomic_open(&a, path, why, sizeof why) < 0 ||
        atomic_commit(&a, path, fn(a.f, in) == 0, why, sizeof why) < 0) {
        cli_say(err, "report", 0, why);
        return -1;
    }
    return 0;
}

static int html_out(FILE *f, const struct report_in *in)
{
    return report_write_html(f, in->rs, in->msg, in->missing, in->nmissing);
}

static int csv_out(FILE *f, const struct report_in *in)
{
    return report_write_csv(f, in->rs);
}

static void usage(FILE *f)
{
    fputs("usage: mailsoak report -o REPORT.html [--csv TIMELINE.csv] [--force] [--missing LABEL=WHY]...\n"
          "                       FILE.json...\n"
          "  One self-contained HTML page: the summary table, charts over time (one line per run,\n"
          "  coloured by label), errors and log hits by class, the runs and their configuration.\n"
          "  -o, --output F  the HTML file to write (atomically)\n"
          "  --csv F         also write the timeline as CSV, one row per file per entry\n"
          "  --force         report files even when their workloads differ\n"
          "  --missing LABEL=WHY\n"
          "                  a run of LABEL that wrote no result, and why (repeatable): its column\n"
          "                  stays in the summary with the reason under it\n", f);
}

int cmd_report_io(int argc, char **argv, FILE *out, FILE *err)
{
    const char *html = NULL, *csv = NULL;
    int force = 0;
    struct strlist missing = { 0 };
    const struct cli_opt opts[] = {
        { .name = "--output", .alias = "-o", .value = "a file name", .val = &html, .required = "-o REPORT.html is required" },
        { .name = "--csv", .value = "a file name", .val = &csv },
        { .name = "--force", .flag = &force },
        { .name = "--missing", .value = "LABEL=WHY", .list = &missing },
        { 0 },
    };
    const struct cli_cmd cmd = { .name = "report", .usage = usage, .opts = opts, .words = CLI_FILES };
    char **files, msg[2600];
    size_t nfiles;
    int rc;
    if (!cli_parse(&cmd, argc, argv, out, err, &files, &nfiles, &rc)) {
        strlist_free(&missing);
        return rc;
    }
    struct cmp_missing *m = NULL;
    struct result_set rs;
    if (cmp_missing_list(&m, &missing, "report", err) < 0)
        rc = 2;
    else if ((rc = results_open(&rs, files, nfiles, force, "report", err, msg, sizeof msg)) == 0) {
        struct report_in in = { &rs, msg[0] ? msg : NULL, m, missing.n };
        if (write_out(html, html_out, &in, err) < 0 || (csv && write_out(csv, csv_out, &in, err) < 0))
            rc = 1;
        results_free(&rs);
    }
    free(m);
    strlist_free(&missing);
    free(files);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    return cmd_report_io(argc, argv, stdout, stderr);
}
