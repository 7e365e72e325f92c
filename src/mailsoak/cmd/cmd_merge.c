/* cmd_merge: `mailsoak merge`: reads the shards' result files, adds them up
 * (result/merge.c), judges the whole load again with the shards' gates
 * (verdict/judge.h, on the figures result/result.h reads and run/result_read.c hands it) and writes the merged file atomically; the verdict on stdout, the
 * gates' exit status; warnings and refusals on stderr, printable. */
#include "cmd/cmd_merge.h"

#include <stdlib.h>
#include <string.h>

#include "analyse/results.h"
#include "lib/json.h"
#include "result/merge.h"
#include "lib/alloc.h"
#include "lib/cli.h"
#include "run/result_read.h"
#include "result/verdict_output.h"
#include "verdict/judge.h"

static void usage(FILE *f)
{
    fputs("usage: mailsoak merge A.json B.json ... -o all.json [--force] [--label NAME]\n"
          "\n"
          "Adds up the result files of the shards of one load (mailsoak run --shard K/N on\n"
          "several hosts) into one result file that compare and report read like any other:\n"
          "counts, ledger outcomes and errors by class summed; latency histograms added\n"
          "bucket by bucket, percentiles recomputed from the sum; timelines lined up on the\n"
          "wall clock; the server's rows taken once per server. Files of different workloads\n"
          "or of overlapping shards are refused unless --force. The whole load is judged\n"
          "again with the shards' gates (its verdict in the file and on stdout), and the\n"
          "exit status is its gates' (0, 4 integrity, 5 quality of service). The output\n"
          "is written atomically.\n"
          "\n"
          "  -o, --output F  the merged result file (required)\n"
          "  --label NAME    its label (default: the shards' label)\n"
          "  --force         merge different workloads or overlapping shards anyway\n", f);
}

/* The whole load judged again from the merged file's own figures (res, read from
 * root) with the shards' gates: root's "verdict" set, its lines printed to table (when not NULL). The gates'
 * exit status, or -1 with the reason in err. */
static int judge_merged(json_t *root, const struct result *res, FILE *table, char *err, size_t errlen)
{
    struct run_result *r = xcalloc(1, sizeof *r);
    struct config cfg;
    struct judge_figures f;
    memset(&cfg, 0, sizeof cfg);
    int rc = -1;
    if (result_read_judgement(res, r, &cfg, &f, err, errlen) == 0) {
        rc = r->exit_status = judge(&r->gates, &f, &r->judged, &r->verdict);
        struct verdict_view vv = run_verdict_view(r);
        json_object_set_new(root, "verdict", verdict_json(&vv));
        if (table)
            verdict_table(table, &vv);
    }
    gate_judgement_free(&r->judged);
    verdict_window_free(&r->window);
    config_free(&cfg);
    free(r);
    return rc;
}

int cmd_merge_io(int argc, char **argv, FILE *out, FILE *err)
{
    const char *output = NULL, *label = NULL;
    int force = 0;
    const struct cli_opt opts[] = {
        { .name = "--output", .alias = "-o", .value = "a value", .val = &output, .required = "no output file: -o FILE" },
        { .name = "--label", .value = "a value", .val = &label },
        { .name = "--force", .flag = &force },
        { 0 },
    };
    const struct cli_cmd cmd = { .name = "merge", .usage = usage, .opts = opts, .words = CLI_FILES };
    char **files;
    size_t nfiles;
    int rc;
    if (!cli_parse(&cmd, argc, argv, out, err, &files, &nfiles, &rc))
        return rc;
    struct result_set rs;
    char msg[2600], warns[4096];
    if (results_load(&rs, files, nfiles, msg, sizeof msg) < 0) {
        cli_say(err, "merge", 0, msg);
        rc = 2;
        goto done;
    }
    json_t *root = merge_results(rs.v, rs.n, force, label, msg, sizeof msg, warns, sizeof warns);
    cli_say(err, "merge", 1, warns);
    char *verdict = NULL;
    size_t vlen = 0;
    FILE *vf = open_memstream(&verdict, &vlen);
    int status = 0;
    struct result res;
    int read = root && result_from_json(&res, root, output, msg, sizeof msg) == 0;
    if (root && vf && (status = read ? judge_merged(root, &res, vf, msg, sizeof msg) : -1) < 0) {
        /* the sum is still exact; only the judgement is missing */
        char why[2700];
        snprintf(why, sizeof why, "no verdict for the merged load: %s", msg);
        cli_say(err, "merge", 1, why);
        status = 0;
    }
    if (vf)
        fclose(vf);
    if (!root) {
        cli_say(err, "merge", 0, msg);
        rc = 2;
    } else if (write_json_atomic(output, root, msg, sizeof msg) < 0) {
        cli_say(err, "merge", 0, msg);
        rc = 1;
    } else {
        fprintf(out, "merged %zu files into %s: sent %.0f, delivered %.0f, lost %.0f, pending %.0f\n", nfiles,
                output, (double)res.c.sent, (double)res.lo.delivered, (double)res.lo.lost, (double)res.lo.pending);
        fputs(verdict ? verdict : "", out);
        rc = status;
    }
    free(verdict);
    if (read)
        result_free(&res);
    json_decref(root);
    results_free(&rs);
done:
    free(files);
    return rc;
}

int cmd_merge(int argc, char **argv)
{
    return cmd_merge_io(argc, argv, stdout, stderr);
}
