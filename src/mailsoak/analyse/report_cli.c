/* report_cli: `mailsoak report`: reads result files (results_open refuses to mix
 * workloads unless --force), writes the HTML page and, on request, the CSV, each
 * atomically so a failed write leaves the old file. */
#include "analyse/report.h"

#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/atomicfile.h"

/* Writes one output atomically; on any failure the old file stays. */
static int write_out(const char *path, int (*fn)(FILE *, const struct result_set *, const char *),
                     const struct result_set *rs, const char *msg, FILE *err)
{
    struct atomic_file a;
    char why[600] = "";
    if (atomic_open(&a, path, why, sizeof why) < 0 ||
        atomic_commit(&a, path, fn(a.f, rs, msg) == 0, why, sizeof why) < 0) {
        if (why[0])
            fprintf(err, "report: %s\n", why);
        return -1;
    }
    return 0;
}

static int html_out(FILE *f, const struct result_set *rs, const char *msg)
{
    return report_write_html(f, rs, msg);
}

static int csv_out(FILE *f, const struct result_set *rs, const char *msg)
{
    (void)msg;
    return report_write_csv(f, rs);
}

static void usage(FILE *f)
{
    fputs("usage: mailsoak report -o REPORT.html [--csv TIMELINE.csv] [--force] FILE.json...\n"
          "  One self-contained HTML page: the summary table, charts over time (one line per run,\n"
          "  coloured by label), errors and log hits by class, the runs and their configuration.\n"
          "  -o, --output F  the HTML file to write (atomically)\n"
          "  --csv F         also write the timeline as CSV, one row per file per entry\n"
          "  --force         report files even when their workloads differ\n", f);
}

static int want_value(int argc, char **argv, int *i, const char **val, FILE *err)
{
    const char *a = argv[*i], *eq = strchr(a, '=');
    if (a[0] == '-' && a[1] == '-' && eq) {
        *val = eq + 1;
        return 0;
    }
    if (*i + 1 >= argc) {
        fprintf(err, "report: %s needs a file name\n", a);
        return -1;
    }
    *val = argv[++*i];
    return 0;
}

static int is_opt(const char *a, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(a, name, n) && (a[n] == 0 || (a[n] == '=' && name[1] == '-'));
}

int report_main(int argc, char **argv, FILE *out, FILE *err)
{
    const char *html = NULL, *csv = NULL;
    int force = 0, rc = 0;
    char **files = xcalloc((size_t)argc, sizeof *files);
    size_t nfiles = 0;
    char msg[2600];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            while (++i < argc)
                files[nfiles++] = argv[i];
            break;
        }
        if (is_opt(a, "-o") || is_opt(a, "--output")) {
            if (want_value(argc, argv, &i, &html, err) < 0)
                goto usage_error;
        } else if (is_opt(a, "--csv")) {
            if (want_value(argc, argv, &i, &csv, err) < 0)
                goto usage_error;
        } else if (!strcmp(a, "--force"))
            force = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(out);
            goto done;
        } else if (a[0] == '-' && a[1]) {
            fprintf(err, "report: unknown option '%s'\n", a);
            goto usage_error;
        } else
            files[nfiles++] = argv[i];
    }
    if (!nfiles || !html || !*html) {
        fprintf(err, "report: %s\n", !nfiles ? "no result files given" : "-o REPORT.html is required");
        goto usage_error;
    }
    struct result_set rs;
    if ((rc = results_open(&rs, files, nfiles, force, "report", err, msg, sizeof msg)) != 0)
        goto done;
    if (write_out(html, html_out, &rs, msg[0] ? msg : NULL, err) < 0 ||
        (csv && write_out(csv, csv_out, &rs, NULL, err) < 0))
        rc = 1;
    results_free(&rs);
    goto done;
usage_error:
    usage(err);
    rc = 2;
done:
    free(files);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    return report_main(argc, argv, stdout, stderr);
}
