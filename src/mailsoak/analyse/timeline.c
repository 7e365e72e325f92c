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

int entry_t(const struct result_entry *e, double *t)
{
    if (!e->fig[RI_T].has)
        return -1;
    *t = e->fig[RI_T].v;
    return 0;
}

const struct result_classes *entry_classes(const struct result_entry *e, enum class_of of)
{
    return of == CLASS_ERRORS ? &e->errors : &e->log_hits;
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
                     enum class_of of)
{
    for (size_t j = 0; j < n; j++) {
        const struct result_display *d = &rs->v[runs[j]].display;
        for (size_t i = 0; i < d->nentries; i++) {
            const struct result_entry *e = &d->entries[i];
            if (of == CLASS_LATENCY) {
                for (size_t k = 0; k < e->nlat; k++)
                    class_index(c, e->lat[k].name, 1);
                continue;
            }
            const struct result_classes *cl = entry_classes(e, of);
            for (size_t k = 0; k < cl->n; k++)
                if (cl->count[k].v > 0)
                    class_index(c, cl->name[k].key, 1);
        }
    }
}
