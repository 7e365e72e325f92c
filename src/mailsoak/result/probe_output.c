/* probe_output: formats what the server side measured (probe/sample.h) for the
 * run's result: summary keys, the "server" part of each timeline entry, events,
 * log classes and the end-of-run table's rows. Writers only. */
#include "result/probe_output.h"

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

/* CPU time in seconds, to the millisecond. */
static json_t *cpu_json(int measured, uint64_t ms)
{
    return measured ? json_real((double)ms / 1000) : json_null();
}

/* A part's growth over the run (io is cumulative) and its peaks. */
static json_t *part_json(const struct probe_summary *s, int k)
{
    const struct proc_io *a = &s->first.part[k].io, *b = &s->last.part[k].io;
    return json_pack("{s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "procs_peak",
                     (json_int_t)s->part_procs_peak[k], "cpu", cpu_json(1, sub0(b->cpu_ms, a->cpu_ms)), "mem",
                     (json_int_t)s->part_mem_peak[k], "mem_pss", (json_int_t)s->part_pss_peak[k], "input",
                     (json_int_t)sub0(b->syscr, a->syscr), "output", (json_int_t)sub0(b->syscw, a->syscw), "ibytes",
                     (json_int_t)sub0(b->rchar, a->rchar), "obytes", (json_int_t)sub0(b->wchar, a->wchar),
                     "disk_write_bytes",
                     (json_int_t)sub0(sub0(b->write_bytes, a->write_bytes),
                                      sub0(b->cancelled_write_bytes, a->cancelled_write_bytes)));
}

/* Parts that had a process at some sample. */
static int part_seen(const struct probe_summary *s, int k)
{
    return s->has.procs && s->part_procs_peak[k] > 0;
}

static json_t *db_json(const struct probe_summary *s)
{
    int kind = s->has.db;
    if (!kind)
        return json_null();
    const struct probe_db *a = &s->first.db, *b = &s->last.db;
#define M(name, v) json_object_set_new(o, #name, num_or_null(probe_db_measures(kind, #name), v))
    json_t *o = json_pack("{s:s}", "kind", probe_db_kind_name(kind));
    M(lock_waits, sub0(b->lock_waits, a->lock_waits));
    M(deadlocks, sub0(b->deadlocks, a->deadlocks));
    M(errors, sub0(b->errors, a->errors));
#undef M
    int c = probe_db_measures(kind, "conns");
    json_object_set_new(o, "waiting_peak", num_or_null(probe_db_measures(kind, "waiting"), s->db_waiting_peak));
    json_object_set_new(o, "conns_peak", num_or_null(c, s->db_conns_peak));
    json_object_set_new(o, "conns_final", num_or_null(c, b->conns));
    json_object_set_new(o, "conns_max", num_or_null(c, b->conns_max));
    json_object_set_new(o, "unreadable", json_integer((json_int_t)sub0(b->unreadable, a->unreadable)));
    return o;
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
    json_object_set_new(summary, "cpu", cpu_json(p, sub0(last->io.cpu_ms, first->io.cpu_ms)));
    json_t *parts = json_object();
    for (int k = 0; k < PROBE_NPARTS; k++)
        if (part_seen(s, k))
            json_object_set_new(parts, probe_part_names[k], part_json(s, k));
    json_object_set_new(summary, "parts", p ? parts : (json_decref(parts), json_null()));
    json_object_set_new(summary, "db", db_json(s));
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
    json_object_set_new(o, "cpu", cpu_json(p, sub0(sb->io.cpu_ms, sa->io.cpu_ms)));
    if (iv->has.db) {
        json_t *d = json_object();
        int kind = iv->has.db;
        json_object_set_new(d, "lock_waits", num_or_null(probe_db_measures(kind, "lock_waits"),
                                                         sub0(sb->db.lock_waits, sa->db.lock_waits)));
        json_object_set_new(d, "waiting", num_or_null(probe_db_measures(kind, "waiting"), sb->db.waiting));
        json_object_set_new(d, "conns", num_or_null(probe_db_measures(kind, "conns"), sb->db.conns));
        json_object_set_new(o, "db", d);
    }
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

/* The table's rows past the classic ones: the server's CPU, each part's share when
 * there are several parts, the database's counters. */
enum { ROW_CLASSIC = 7, ROW_PART_FIELDS = 4, ROW_PARTS = PROBE_NPARTS * ROW_PART_FIELDS, ROW_DB = 4 };
static const char *const part_fields[ROW_PART_FIELDS] = { "cpu", "mem", "ibytes", "obytes" };
static const char *const db_rows[ROW_DB] = { "lock_waits", "deadlocks", "errors", "conns" };

static void fmt_cpu(char *buf, size_t n, uint64_t ms)
{
    fmt_duration(buf, n, ms * 1000000ull);
}

/* Memory as the server's own footprint: the peak PSS (pages shared between its
 * processes counted once, in shares), the peak RSS beside it (a sum over processes
 * that counts each shared page once per process: several times the real use). RSS
 * alone when no PSS walk was made. */
static void fmt_mem(char *buf, size_t n, uint64_t pss, uint64_t rss)
{
    char a[32], b[32];
    fmt_bytes(b, sizeof b, (double)rss);
    if (!pss) {
        snprintf(buf, n, "%s RSS", b);
        return;
    }
    fmt_bytes(a, sizeof a, (double)pss);
    snprintf(buf, n, "%s (RSS %s)", a, b);
}

static int parts_seen(const struct probe_summary *s)
{
    int n = 0;
    for (int k = 0; k < PROBE_NPARTS; k++)
        n += part_seen(s, k);
    return n;
}

int probe_table_row(const struct probe_summary *s, int i, char *name, size_t nlen, char *value, size_t vlen)
{
    static const char *const rows[ROW_CLASSIC] = { "spool", "mem", "input", "output", "ibytes", "obytes", "log hits" };
    if (!s->has.active || i < 0 || i >= ROW_CLASSIC + 1 + ROW_PARTS + ROW_DB)
        return 0;
    const struct probe_sample *first = &s->first, *last = &s->last;
    if (i == ROW_CLASSIC) {
        snprintf(name, nlen, "cpu");
        if (s->has.procs)
            fmt_cpu(value, vlen, sub0(last->io.cpu_ms, first->io.cpu_ms));
        else
            snprintf(value, vlen, "-");
        return 1;
    }
    if (i > ROW_CLASSIC && i <= ROW_CLASSIC + ROW_PARTS) {
        int k = (i - ROW_CLASSIC - 1) / ROW_PART_FIELDS, f = (i - ROW_CLASSIC - 1) % ROW_PART_FIELDS;
        if (parts_seen(s) < 2 || !part_seen(s, k))
            return -1;
        const struct proc_io *a = &first->part[k].io, *b = &last->part[k].io;
        snprintf(name, nlen, "%s %s", probe_part_names[k], part_fields[f]);
        switch (f) {
        case 0: fmt_cpu(value, vlen, sub0(b->cpu_ms, a->cpu_ms)); break;
        case 1: fmt_mem(value, vlen, s->part_pss_peak[k], s->part_mem_peak[k]); break;
        case 2: fmt_bytes(value, vlen, (double)sub0(b->rchar, a->rchar)); break;
        default: fmt_bytes(value, vlen, (double)sub0(b->wchar, a->wchar)); break;
        }
        return 1;
    }
    if (i > ROW_CLASSIC + ROW_PARTS) {
        int d = i - ROW_CLASSIC - ROW_PARTS - 1;
        if (!s->has.db)
            return -1;
        const struct probe_db *a = &first->db, *b = &last->db;
        snprintf(name, nlen, "db %s", d == 0 ? "waits" : db_rows[d]);
        if (!probe_db_measures(s->has.db, db_rows[d]))
            snprintf(value, vlen, "-");
        else if (d == 0)
            fmt_count(value, vlen, (double)sub0(b->lock_waits, a->lock_waits));
        else if (d == 1)
            fmt_count(value, vlen, (double)sub0(b->deadlocks, a->deadlocks));
        else if (d == 2)
            fmt_count(value, vlen, (double)sub0(b->errors, a->errors));
        else    /* the peak in use, of the limit */
            snprintf(value, vlen, "%llu/%llu", (unsigned long long)s->db_conns_peak,
                     (unsigned long long)b->conns_max);
        return 1;
    }
    snprintf(name, nlen, "%s", rows[i]);
    int measured = i == 0 ? s->has.spool : i == 6 ? s->has.logs : s->has.procs;
    if (!measured) {
        snprintf(value, vlen, "-");
        return 1;
    }
    switch (i) {
    case 0: snprintf(value, vlen, "%llu", (unsigned long long)last->spool); break;
    case 1: fmt_mem(value, vlen, s->pss_peak, s->mem_peak); break;
    case 2: snprintf(value, vlen, "%llu", (unsigned long long)(last->io.syscr - first->io.syscr)); break;
    case 3: snprintf(value, vlen, "%llu", (unsigned long long)(last->io.syscw - first->io.syscw)); break;
    case 4: fmt_bytes(value, vlen, (double)(last->io.rchar - first->io.rchar)); break;
    case 5: fmt_bytes(value, vlen, (double)(last->io.wchar - first->io.wchar)); break;
    default: snprintf(value, vlen, "%llu", (unsigned long long)s->log_hits); break;
    }
    return 1;
}
