/* json: paths into a parsed JSON document and writing one atomically
 * (include/lib/json.h). */
#include "lib/json.h"

#include <stdio.h>
#include <string.h>

#include "lib/atomicfile.h"

const json_t *json_path_get(const json_t *obj, const char *path)
{
    char part_[256];
    const json_t *cur = obj;
    while (cur && *path) {
        size_t n = strcspn(path, "/");
        if (n >= sizeof part_ || !json_is_object(cur))
            return NULL;
        memcpy(part_, path, n);
        part_[n] = 0;
        cur = json_object_get(cur, part_);
        path += n + (path[n] == '/');
    }
    return cur;
}

int json_path_number(const json_t *obj, const char *path, double *out)
{
    const json_t *v = json_path_get(obj, path);
    if (!json_is_number(v))
        return -1;
    *out = json_number_value(v);
    return 0;
}

double json_path_number_or(const json_t *obj, const char *path, double dflt)
{
    double v;
    return json_path_number(obj, path, &v) == 0 ? v : dflt;
}

uint64_t json_path_count(const json_t *obj, const char *path)
{
    const json_t *v = json_path_get(obj, path);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

int write_json_atomic(const char *path, json_t *root, char *err, size_t errlen)
{
    struct atomic_file a;
    if (atomic_open(&a, path, err, errlen) < 0)
        return -1;
    int ok = json_dumpf(root, a.f, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) == 0 && fputc('\n', a.f) != EOF;
    return atomic_commit(&a, path, ok, err, errlen);
}
