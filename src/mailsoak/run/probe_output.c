/* probe_output: formats what the server side measured (probe/sample.h) for the
 * run's result: summary keys, the "server" part of each timeline entry, events,
 * log classes and the end-of-run table's rows. Writers only. */
#include "run/probe_output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/units.h"

/* Seconds since the run's start, to the millisecond. */
static double run_seconds(uint64_t t, uint64_t t0)
{
    double s = t > t0 ? (double)(t - t0) / 1e9 : 0;
    return (double)(int64_t)(s * 1000) / 1000;
}

static json_t *num_or_null(int measured, uint64_t v)
{
    return measured ? json_integer((json_int_t)v) : json_null();
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

json_t *utf8_json_string(const char *s, size_t n)
{
    /* jansson takes only UTF-8: invalid bytes become '?'. */
    char *out = xcalloc(1, n + 1);
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        int ok = len > 0 && i + len <= n && !(len == 2 && c < 0xc2);
        for (size_t k = 1; ok && k < len; k++)
            ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;
        if (ok && c == 0)
            ok = 0;
        if (ok) {
            memcpy(out + o, s + i, len);
            o += len;
            i += len;
        } else {
            out[o++] = '?';
            i++;
        }
    }
    json_t *j = json_stringn(out, o);
    free(out);
    return j ? j : json_string("?");
}

json_t *probe_json_classes(const struct probe_class *v, size_t n, uint64_t t0)
{
    json_t *obj = json_object();
    for (size_t i = 0; i < n; i++) {
        json_t *ex = json_array();
        for (size_t j = 0; j < v[i].nex; j++)
            json_array_append_new(ex, json_pack("{s:f, s:o}", "t", run_seconds(v[i].ex[j].t, t0), "line",
                                                utf8_json_string(v[i].ex[j].line, strlen(v[i].ex[j].line))));
        json_object_set_new(obj, v[i].name, json_pack("{s:I, s:o}", "count", (json_int_t)v[i].count,
                                                      "examples", ex));
    }
    return obj;
}

void probe_json_summary(const struct probe_summary *s, json_t *summary)
{
    int p = s->has.procs, sp = s->has.spool, st = s->has.store, lg = s->has.logs;
    const struct probe_sample *first = &s->first, *last = &s->last;
    json_object_set_new(summary, "spool", num_or_null(sp, last->spool));
    json_object_set_new(summary, "spool_peak", num_or_null(sp, s->spool_peak));
    json_object_set_new(summary, "mem", num_or_null(p, s->mem_peak));
    json_object_set_new(summary, "mem_final", num_or_null(p, last->mem));
    json_object_set_new(summary, "mem_pss", num_or_null(p, s->pss_peak));
    /* Operations are syscr/syscw. Bytes are rchar/wchar, the bytes that went through
     * those same calls (files, sockets, pipes), so that ibytes/input is a size per
     * call; read_bytes hardly moves when files are served from the page cache, so the
     * storage-layer counts are given apart, writes net of cancelled ones (queue files
     * deleted before they reached the disk). */
    json_object_set_new(summary, "input", num_or_null(p, last->io.syscr - first->io.syscr));
    json_object_set_new(summary, "output", num_or_null(p, last->io.syscw - first->io.syscw));
    json_object_set_new(summary, "ibytes", num_or_null(p, last->io.rchar - first->io.rchar));
    json_object_set_new(summary, "obytes", num_or_null(p, last->io.wchar - first->io.wchar));
    json_object_set_new(summary, "disk_read_bytes", num_or_null(p, last->io.read_bytes - first->io.read_bytes));
    json_object_set_new(summary, "disk_write_bytes",
                        num_or_null(p, sub0(last->io.write_bytes - first->io.write_bytes,
                                            last->io.cancelled_write_bytes - first->io.cancelled_write_bytes)));
    json_object_set_new(summary, "store_messages", num_or_null(st, last->store_messages));
    json_object_set_new(summary, "store_bytes", num_or_null(st, last->store_bytes));
    json_object_set_new(summary, "log_hits", num_or_null(lg, s->log_hits));
    json_object_set_new(summary, "log_classes", lg ? probe_json_classes(s->classes, s->ncls, s->t0) : json_null());
    json_object_set_new(summary, "server_crashes", num_or_null(p, last->crashes));
    json_object_set_new(summary, "server_procs_peak", num_or_null(p, s->procs_peak));
    json_object_set_new(summary, "server_samples", json_integer((json_int_t)s->samples));
}

void probe_json_interval(const struct probe_interval *iv, json_t *entry)
{
    if (!iv->has.active)
        return;
    json_t *o = json_object();
    const struct probe_sample *sa = &iv->from, *sb = &iv->to;
    int p = iv->has.procs;
    json_object_set_new(o, "mem", num_or_null(p, sb->mem));
    json_object_set_new(o, "spool", num_or_null(iv->has.spool, sb->spool));
    json_object_set_new(o, "store_messages", num_or_null(iv->has.store, sb->store_messages));
    json_object_set_new(o, "store_bytes", num_or_null(iv->has.store, sb->store_bytes));
    json_object_set_new(o, "procs", num_or_null(p, sb->procs));
    json_object_set_new(o, "input", num_or_null(p, sub0(sb->io.syscr, sa->io.syscr)));
    json_object_set_new(o, "output", num_or_null(p, sub0(sb->io.syscw, sa->io.syscw)));
    json_object_set_new(o, "ibytes", num_or_null(p, sub0(sb->io.rchar, sa->io.rchar)));
    json_object_set_new(o, "obytes", num_or_null(p, sub0(sb->io.wchar, sa->io.wchar)));
    if (iv->has.logs) {
        json_t *h = json_object();
        for (size_t k = 0; k < iv->ncls; k++)
            json_object_set_new(h, iv->classes[k].name, json_integer((json_int_t)iv->classes[k].count));
        json_object_set_new(o, "log_hits", h);
    } else {
        json_object_set_new(o, "log_hits", json_null());
    }
    json_object_set_new(entry, "server", o);
}

void probe_json_events(const struct probe_events *e, json_t *events)
{
    for (size_t i = 0; i < e->n; i++) {
        const struct probe_event *x = &e->v[i];
        json_array_append_new(events, json_pack("{s:f, s:s, s:o}", "t", run_seconds(x->t, e->t0), "kind", x->kind,
                                                "text", utf8_json_string(x->text, strlen(x->text))));
    }
}

int probe_table_row(const struct probe_summary *s, int i, char *name, size_t nlen, char *value, size_t vlen)
{
    static const char *const rows[] = { "spool", "mem", "input", "output", "ibytes", "obytes", "log hits" };
    if (!s->has.active || i < 0 || i >= (int)(sizeof rows / sizeof rows[0]))
        return 0;
    const struct probe_sample *first = &s->first, *last = &s->last;
    snprintf(name, nlen, "%s", rows[i]);
    int measured = i == 0 ? s->has.spool : i == 6 ? s->has.logs : s->has.procs;
    if (!measured) {
        snprintf(value, vlen, "-");
        return 1;
    }
    switch (i) {
    case 0: fmt_count(value, vlen, (double)last->spool); break;
    case 1: fmt_bytes(value, vlen, (double)s->mem_peak); break;
    case 2: fmt_count(value, vlen, (double)(last->io.syscr - first->io.syscr)); break;
    case 3: fmt_count(value, vlen, (double)(last->io.syscw - first->io.syscw)); break;
    case 4: fmt_bytes(value, vlen, (double)(last->io.rchar - first->io.rchar)); break;
    case 5: fmt_bytes(value, vlen, (double)(last->io.wchar - first->io.wchar)); break;
    default: fmt_count(value, vlen, (double)s->log_hits); break;
    }
    return 1;
}
