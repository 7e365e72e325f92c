/* results: loads and validates result files and groups repeats by label. Validation
 * is of the envelope only (format, version, the types of the top-level parts); what
 * is inside may be partial, and readers treat a missing key as "not measured". */
#include "analyse/results.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cli.h"
#include "lib/alloc.h"
#include "lib/printable.h"

/* A part that must be an object/array when present; sets *out to NULL when absent. */
static int part(json_t *root, const char *key, int want_array, json_t **out,
                const char *path, char *err, size_t errlen)
{
    json_t *v = json_object_get(root, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (want_array ? !json_is_array(v) : !json_is_object(v)) {
        snprintf(err, errlen, "%s: \"%s\" is not an %s", path, key, want_array ? "array" : "object");
        return -1;
    }
    *out = v;
    return 0;
}

/* Labels reach terminals (compare's table) and files other programs read (CSV):
 * the file's bytes, or its name's, made printable once here. */
static char *label_from_path(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    if (n > 5 && !strcmp(b + n - 5, ".json"))
        n -= 5;
    return printable_dup(b, n);
}

int result_load(struct result *r, const char *path, char *err, size_t errlen)
{
    json_error_t je;
    memset(r, 0, sizeof *r);
    r->root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!r->root) {
        if (je.line > 0)
            snprintf(err, errlen, "%s:%d: invalid JSON: %s", path, je.line, je.text);
        else
            snprintf(err, errlen, "%s: %s", path, je.text);
        return -1;
    }
    json_t *fmt = json_object_get(r->root, "format"), *ver = json_object_get(r->root, "format_version");
    if (!json_is_object(r->root) || !json_is_string(fmt) || strcmp(json_string_value(fmt), RESULT_FORMAT)) {
        snprintf(err, errlen, "%s: not a mailsoak result file (no \"format\": \"" RESULT_FORMAT "\")", path);
        goto fail;
    }
    if (!json_is_integer(ver)) {
        snprintf(err, errlen, "%s: \"format_version\" is missing or not an integer", path);
        goto fail;
    }
    if (json_integer_value(ver) != RESULT_FORMAT_VERSION) {
        snprintf(err, errlen, "%s: format_version %lld is not one this mailsoak reads (%d)", path,
                 (long long)json_integer_value(ver), RESULT_FORMAT_VERSION);
        goto fail;
    }
    if (part(r->root, "summary", 0, &r->summary, path, err, errlen) < 0 ||
        part(r->root, "workload", 0, &r->workload, path, err, errlen) < 0 ||
        part(r->root, "config", 0, &r->config, path, err, errlen) < 0 ||
        part(r->root, "timeline", 1, &r->timeline, path, err, errlen) < 0 ||
        part(r->root, "events", 1, &r->events, path, err, errlen) < 0)
        goto fail;
    json_t *label = json_object_get(r->root, "label");
    if (label && !json_is_string(label) && !json_is_null(label)) {
        snprintf(err, errlen, "%s: \"label\" is not a string", path);
        goto fail;
    }
    /* An unlabelled run is its own column: grouping all of them as repeats of ""
     * would average runs that may have nothing in common. */
    if (json_is_string(label) && *json_string_value(label))
        r->label = printable_dup(json_string_value(label), json_string_length(label));
    else
        r->label = label_from_path(path);
    r->path = xstrdup(path);
    return 0;
fail:
    json_decref(r->root);
    r->root = NULL;
    return -1;
}

void result_free(struct result *r)
{
    json_decref(r->root);
    free(r->path);
    free(r->label);
    memset(r, 0, sizeof *r);
}

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
