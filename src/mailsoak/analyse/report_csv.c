/* report_csv: the timeline of result files as CSV, one row per file per entry, one
 * column per value, per command's p50/p99 and per error and log class. Every string
 * from a result file goes through csv_puts; a value an entry lacks is an empty cell. */
#include "analyse/report_csv.h"

#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "analyse/timeline.h"
#include "lib/alloc.h"

static void csv_num(FILE *o, const struct result_value *v)
{
    fputc(',', o);
    if (v && v->has)
        fprintf(o, "%.10g", v->v);
}

/* One column per class; a class absent from an entry had no hits then (0, not unknown)
 * as long as the entry has the object at all. */
static void csv_classes(FILE *o, const struct result_classes *counts, const struct classes *cl)
{
    for (size_t k = 0; k < cl->n; k++) {
        size_t i = 0;
        while (i < counts->n && strcmp(counts->name[i].key, cl->v[k]))
            i++;
        fputc(',', o);
        if (i < counts->n)
            fprintf(o, "%.10g", counts->count[i].v);
        else if (counts->has)
            fputc('0', o);
    }
}

/* An entry's latency of command name, p99 or p50; NULL when it has none. */
static const struct result_value *entry_lat(const struct result_entry *e, const char *name, int p99)
{
    for (size_t k = 0; k < e->nlat; k++)
        if (!strcmp(e->lat[k].name, name))
            return p99 ? &e->lat[k].p99 : &e->lat[k].p50;
    return NULL;
}

int report_write_csv(FILE *o, const struct result_set *rs)
{
    struct classes lat = { 0 }, err = { 0 }, logs = { 0 };
    size_t *all = xcalloc(rs->n, sizeof *all);
    for (size_t i = 0; i < rs->n; i++)
        all[i] = i;
    collect_classes(&lat, rs, all, rs->n, CLASS_LATENCY);
    collect_classes(&err, rs, all, rs->n, CLASS_ERRORS);
    collect_classes(&logs, rs, all, rs->n, CLASS_LOG_HITS);
    fputs("file,label,run_id,t,phase", o);
    /* the figures of result_ifig_names after "t", by their last name */
    for (unsigned k = RI_T + 1; k < RI_COUNT; k++) {
        const char *n = result_ifig_names[k];
        fprintf(o, ",%s", strchr(n, '/') ? strchr(n, '/') + 1 : n);
    }
    char name[300];
    for (size_t k = 0; k < lat.n; k++)
        for (int p = 0; p < 2; p++) {
            snprintf(name, sizeof name, "%s %s", lat.v[k], p ? "p99" : "p50");
            fputc(',', o);
            csv_puts(o, name);
        }
    for (size_t k = 0; k < err.n; k++) {
        snprintf(name, sizeof name, "error %s", err.v[k]);
        fputc(',', o);
        csv_puts(o, name);
    }
    for (size_t k = 0; k < logs.n; k++) {
        snprintf(name, sizeof name, "log %s", logs.v[k]);
        fputc(',', o);
        csv_puts(o, name);
    }
    fputc('\n', o);
    for (size_t i = 0; i < rs->n; i++) {
        const struct result *r = &rs->v[i];
        for (size_t j = 0; j < r->display.nentries; j++) {
            const struct result_entry *e = &r->display.entries[j];
            if (!e->object)
                continue;
            csv_puts(o, r->path);
            fputc(',', o);
            csv_puts(o, r->label);
            fputc(',', o);
            csv_puts(o, r->run_id);
            csv_num(o, &e->fig[RI_T]);
            fputc(',', o);
            csv_puts(o, e->phase);
            for (unsigned k = RI_T + 1; k < RI_COUNT; k++)
                csv_num(o, &e->fig[k]);
            for (size_t k = 0; k < lat.n; k++)
                for (int p = 0; p < 2; p++)
                    csv_num(o, entry_lat(e, lat.v[k], p));
            csv_classes(o, &e->errors, &err);
            csv_classes(o, &e->log_hits, &logs);
            fputc('\n', o);
        }
    }
    free(all);
    classes_free(&lat);
    classes_free(&err);
    classes_free(&logs);
    return ferror(o) ? -1 : 0;
}
