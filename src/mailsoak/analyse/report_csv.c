/* report_csv: the timeline of result files as CSV, one row per file per entry, one
 * column per value, per command's p50/p99 and per error and log class. Every string
 * from a result file goes through csv_puts; a value an entry lacks is an empty cell. */
#include "analyse/report_csv.h"

#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "analyse/timeline.h"
#include "lib/alloc.h"

static void csv_num(FILE *o, const json_t *e, const char *path)
{
    double v;
    fputc(',', o);
    if (json_path_number(e, path, &v) == 0)
        fprintf(o, "%.10g", v);
}

/* One column per class; a class absent from an entry had no hits then (0, not unknown)
 * as long as the entry has the object at all. */
static void csv_classes(FILE *o, const json_t *counts, const struct classes *cl)
{
    for (size_t k = 0; k < cl->n; k++) {
        const json_t *v = json_object_get(counts, cl->v[k]);
        fputc(',', o);
        if (json_is_number(v))
            fprintf(o, "%.10g", json_number_value(v));
        else if (json_is_object(counts))
            fputc('0', o);
    }
}

int report_write_csv(FILE *o, const struct result_set *rs)
{
    static const char *const base[] = {
        "sent", "read", "errors", "rate_in", "rate_out", "conns", "server/mem", "server/spool",
        "server/store_messages", "server/store_bytes", "server/procs", "server/input", "server/output",
        "server/ibytes", "server/obytes",
    };
    struct classes lat = { 0 }, err = { 0 }, logs = { 0 };
    size_t *all = xcalloc(rs->n, sizeof *all);
    for (size_t i = 0; i < rs->n; i++)
        all[i] = i;
    collect_classes(&lat, rs, all, rs->n, "latency");
    collect_classes(&err, rs, all, rs->n, "errors_by_class");
    collect_classes(&logs, rs, all, rs->n, "server/log_hits");
    fputs("file,label,run_id,t,phase", o);
    for (size_t k = 0; k < sizeof base / sizeof *base; k++)
        fprintf(o, ",%s", strchr(base[k], '/') ? strchr(base[k], '/') + 1 : base[k]);
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
        size_t j;
        json_t *e;
        json_array_foreach(r->timeline, j, e) {
            if (!json_is_object(e))
                continue;
            csv_puts(o, r->path);
            fputc(',', o);
            csv_puts(o, r->label);
            fputc(',', o);
            csv_puts(o, json_string_value(json_object_get(r->root, "run_id")));
            csv_num(o, e, "t");
            fputc(',', o);
            csv_puts(o, json_string_value(json_object_get(e, "phase")));
            for (size_t k = 0; k < sizeof base / sizeof *base; k++)
                csv_num(o, e, base[k]);
            for (size_t k = 0; k < lat.n; k++)
                for (int p = 0; p < 2; p++) {
                    snprintf(name, sizeof name, "latency/%s/%s", lat.v[k], p ? "p99" : "p50");
                    csv_num(o, e, name);
                }
            csv_classes(o, json_object_get(e, "errors_by_class"), &err);
            csv_classes(o, json_path_get(e, "server/log_hits"), &logs);
            fputc('\n', o);
        }
    }
    free(all);
    classes_free(&lat);
    classes_free(&err);
    classes_free(&logs);
    return ferror(o) ? -1 : 0;
}
