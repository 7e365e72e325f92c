/* workload: the workload objects of several result files compared key by key
 * (include/result/workload.h): each key named once, in the order it first appears,
 * against the first file that disagrees with the first file. */
#include "result/workload.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int result_workload_check(const struct result *v, size_t n, const char *const *skip, char *err, size_t errlen)
{
    char body[2048] = "";
    size_t pos = 0;
    if (n < 2)
        return 0;
    const json_t *first = v[0].workload;
    json_t *seen = json_object();
    for (size_t i = 0; i < n; i++) {
        const char *key;
        json_t *val;
        json_object_foreach(v[i].workload, key, val) {
            if (json_object_get(seen, key) || skipped(key, skip))
                continue;
            json_object_set_new(seen, key, json_true());
            const json_t *a = json_object_get(first, key);
            for (size_t j = 1; j < n; j++) {
                const json_t *b = json_object_get(v[j].workload, key);
                if ((a || b) && !json_equal(a, b)) {
                    bufcat(body, sizeof body, &pos, "%s%s (", pos ? "; " : "", key);
                    describe_value(body, sizeof body, &pos, a, v[0].path);
                    bufcat(body, sizeof body, &pos, ", ");
                    describe_value(body, sizeof body, &pos, b, v[j].path);
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
