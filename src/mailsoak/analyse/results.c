/* results: result files loaded (result/result.h) and grouped by label, and their
 * workloads compared; what is inside may be partial, and readers treat a missing
 * key as "not measured". */
#include "analyse/results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cli.h"
#include "lib/alloc.h"
#include "lib/printable.h"
#include "result/workload.h"

int results_load(struct result_set *rs, char *const *paths, size_t n, char *err, size_t errlen)
{
    memset(rs, 0, sizeof *rs);
    if (n == 0) {
        snprintf(err, errlen, "no result files given");
        return -1;
    }
    rs->v = xcalloc(n, sizeof *rs->v);
    rs->groups = xcalloc(n, sizeof *rs->groups);
    for (size_t i = 0; i < n; i++) {
        if (result_load(&rs->v[i], paths[i], err, errlen) < 0) {
            results_free(rs);
            return -1;
        }
        rs->n++;
        struct result_group *g = NULL;
        for (size_t k = 0; k < rs->ngroups && !g; k++)
            if (!strcmp(rs->groups[k].label, rs->v[i].label))
                g = &rs->groups[k];
        if (!g) {
            g = &rs->groups[rs->ngroups++];
            g->label = rs->v[i].label;
            g->runs = xcalloc(n, sizeof *g->runs);
        }
        g->runs[g->n++] = i;
    }
    return 0;
}

void results_free(struct result_set *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        result_free(&rs->v[i]);
    for (size_t k = 0; k < rs->ngroups; k++)
        free(rs->groups[k].runs);
    free(rs->v);
    free(rs->groups);
    memset(rs, 0, sizeof *rs);
}

int results_check_workload(const struct result_set *rs, char *err, size_t errlen)
{
    return result_workload_check(rs->v, rs->n, NULL, err, errlen);
}

int results_open(struct result_set *rs, char *const *paths, size_t n, int force, const char *cmd,
                 FILE *err, char *warn, size_t warnlen)
{
    char msg[2600];
    warn[0] = 0;
    if (results_load(rs, paths, n, msg, sizeof msg) < 0) {
        cli_say(err, NULL, 0, msg);
        return 2;
    }
    if (results_check_workload(rs, msg, sizeof msg) == 0)
        return 0;
    if (!force) {
        cli_say(err, cmd, 0, msg);
        cli_say(err, cmd, 0, "use --force to put them side by side anyway");
        results_free(rs);
        return 2;
    }
    cli_say(err, cmd, 1, msg);
    snprintf(warn, warnlen, "%s", msg);
    return 0;
}
