/* results: result files loaded (result/result.h) and grouped by label, and their
 * workloads compared; what is inside may be partial, and readers treat a missing
 * key as "not measured". */
#include "analyse/results.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cli.h"
#include "lib/alloc.h"
#include "lib/printable.h"

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

__attribute__((format(printf, 4, 5)))
static void bufcat(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
    va_list ap;
    if (*pos >= len)
        return;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (k > 0)
        *pos += (size_t)k;
}

static void describe_value(char *buf, size_t len, size_t *pos, const json_t *v, const char *path)
{
    char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    bufcat(buf, len, pos, "%s in %s", s ? s : "absent", path);
    free(s);
}

static int skipped(const char *key, const char *const *skip)
{
    for (; skip && *skip; skip++)
        if (!strcmp(key, *skip))
            return 1;
    return 0;
}

int results_check_workload(const struct result_set *rs, char *err, size_t errlen)
{
    return results_check_workload_except(rs, NULL, err, errlen);
}

int results_check_workload_except(const struct result_set *rs, const char *const *skip, char *err, size_t errlen)
{
    char body[2048] = "";
    size_t pos = 0;
    if (rs->n < 2)
        return 0;
    const json_t *first = rs->v[0].workload;
    /* Keys in the order they first appear in any file, each named once, against the
     * first file that disagrees with the first file. */
    json_t *seen = json_object();
    for (size_t i = 0; i < rs->n; i++) {
        const char *key;
        json_t *val;
        json_object_foreach(rs->v[i].workload, key, val) {
            if (json_object_get(seen, key) || skipped(key, skip))
                continue;
            json_object_set_new(seen, key, json_true());
            const json_t *a = json_object_get(first, key);
            for (size_t j = 1; j < rs->n; j++) {
                const json_t *b = json_object_get(rs->v[j].workload, key);
                if ((a || b) && !json_equal(a, b)) {
                    bufcat(body, sizeof body, &pos, "%s%s (", pos ? "; " : "", key);
                    describe_value(body, sizeof body, &pos, a, rs->v[0].path);
                    bufcat(body, sizeof body, &pos, ", ");
                    describe_value(body, sizeof body, &pos, b, rs->v[j].path);
                    bufcat(body, sizeof body, &pos, ")");
                    break;
                }
            }
        }
    }
    json_decref(seen);
    if (!pos)
        return 0;
    if (pos >= sizeof body - 1)
        strcpy(body + sizeof body - 4, "...");
    snprintf(err, errlen, "different workloads: %s", body);
    return -1;
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
