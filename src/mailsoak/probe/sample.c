/* sample: frees for the plain data of probe/sample.h, the names of its parts and
 * database kinds, and the error helper the probe's parts share. */
#include "probe/sample.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const probe_part_names[PROBE_NPARTS] = { "mta", "pop3", "db", "other" };

const char *probe_db_kind_name(int kind)
{
    switch (kind) {
    case DBK_SQLITE: return "sqlite";
    case DBK_PGSQL: return "pgsql";
    case DBK_MYSQL: return "mysql";
    default: return "";
    }
}

int probe_db_measures(int kind, const char *counter)
{
    if (kind == DBK_PGSQL || kind == DBK_MYSQL)
        return 1;
    return kind == DBK_SQLITE && (!strcmp(counter, "lock_waits") || !strcmp(counter, "errors"));
}

void probe_classes_free(struct probe_class *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < v[i].nex; j++)
            free(v[i].ex[j].line);
        free(v[i].ex);
        free(v[i].name);
    }
    free(v);
}

void probe_summary_free(struct probe_summary *s)
{
    probe_classes_free(s->classes, s->ncls);
    s->classes = NULL;
    s->ncls = 0;
}

void probe_interval_free(struct probe_interval *iv)
{
    probe_classes_free(iv->classes, iv->ncls);
    iv->classes = NULL;
    iv->ncls = 0;
}

void probe_events_free(struct probe_events *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i].text);
    free(e->v);
    e->v = NULL;
    e->n = 0;
}

void probe_eventf(probe_event_fn fn, void *ctx, uint64_t t, const char *kind, const char *fmt, ...)
{
    if (!fn)
        return;
    char text[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fn(ctx, t, kind, text);
}

int probe_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}
