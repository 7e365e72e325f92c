/* timeline: names and times read from the timelines of result files, shared by the
 * report's charts (chart.c), its page (report.c) and its CSV (report_csv.c). */
#include "analyse/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

void run_name(char *buf, size_t n, const struct result_set *rs, size_t i)
{
    for (size_t g = 0; g < rs->ngroups; g++)
        for (size_t k = 0; k < rs->groups[g].n; k++)
            if (rs->groups[g].runs[k] == i) {
                if (rs->groups[g].n > 1)
                    snprintf(buf, n, "%s #%zu", rs->groups[g].label, k + 1);
                else
                    snprintf(buf, n, "%s", rs->groups[g].label);
                return;
            }
    snprintf(buf, n, "%s", rs->v[i].label);
}

int entry_t(const json_t *e, double *t)
{
    return json_path_number(e, "t", t);
}

size_t class_index(struct classes *c, const char *name, int add)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->v[i], name))
            return i;
    if (!add)
        return (size_t)-1;
    c->v = xrealloc(c->v, (c->n + 1) * sizeof *c->v);
    c->v[c->n] = xstrdup(name);
    return c->n++;
}

void classes_free(struct classes *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i]);
    free(c->v);
}

void collect_classes(struct classes *c, const struct result_set *rs, const size_t *runs, size_t n,
                     const char *path)
{
    for (size_t j = 0; j < n; j++) {
        size_t i;
        json_t *e;
        json_array_foreach(rs->v[runs[j]].timeline, i, e) {
            const char *k;
            json_t *v;
            json_object_foreach((json_t *)json_path_get(e, path), k, v)
                if ((json_is_number(v) && json_number_value(v) > 0) || (json_is_object(v) && !strchr(k, '/')))
                    class_index(c, k, 1);
        }
    }
}
