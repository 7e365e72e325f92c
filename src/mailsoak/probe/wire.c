/* wire: the /samples JSON of mailsoak probe, written and read (see wire.h). The
 * reader is the trust boundary: a probe is another machine, so numbers must be
 * numbers, lists are bounded, texts are cut and made printable (a log line, an
 * event, the host's name reach the result file and the terminal), and a response
 * that breaks a rule is refused whole rather than half added. */
#include "probe/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/printable.h"

enum {
    MAX_LINE = 1000,                 /* as logwatch keeps them */
    MAX_TEXT = 1200,                 /* an event's text, as probe_eventf makes it */
    MAX_NAME = 64,
};

/* ------------------------------------------------------------------------------ */
/* The probe's side */

/* JSON takes only UTF-8: a log line's control bytes and malformed sequences go as
 * printable() escapes them (\xNN), as they would to a terminal. */
static json_t *text(const char *s)
{
    char *buf = printable_dup(s, strlen(s));
    json_t *j = json_string(buf);
    free(buf);
    return j;
}

static json_t *io_json(const struct proc_io *io)
{
    return json_pack("[I, I, I, I, I, I, I, I]", (json_int_t)io->rchar, (json_int_t)io->wchar, (json_int_t)io->syscr,
                     (json_int_t)io->syscw, (json_int_t)io->read_bytes, (json_int_t)io->write_bytes,
                     (json_int_t)io->cancelled_write_bytes, (json_int_t)io->cpu_ms);
}

/* Each part as [mem, pss, procs, io]; the database's counters in struct probe_db's order. */
static json_t *parts_json(const struct probe_sample *x)
{
    json_t *a = json_array();
    for (int k = 0; k < PROBE_NPARTS; k++)
        json_array_append_new(a, json_pack("[I, I, I, o]", (json_int_t)x->part[k].mem, (json_int_t)x->part[k].pss,
                                           (json_int_t)x->part[k].procs, io_json(&x->part[k].io)));
    return a;
}

static json_t *db_json(const struct probe_db *d)
{
    return json_pack("[I, I, I, I, I, I, I]", (json_int_t)d->lock_waits, (json_int_t)d->waiting,
                     (json_int_t)d->deadlocks, (json_int_t)d->errors, (json_int_t)d->conns,
                     (json_int_t)d->conns_max, (json_int_t)d->unreadable);
}

struct enc {
    json_t *samples, *events;
    size_t ncls, bytes;
};

static int enc_sample(void *ud, uint64_t idx, const struct probe_sample *x, const uint64_t *hits,
                       const struct series_line *lines, size_t nlines)
{
    struct enc *e = ud;
    json_t *h = json_array(), *l = json_array();
    for (size_t k = 0; k < e->ncls; k++)
        json_array_append_new(h, json_integer((json_int_t)hits[k]));
    for (size_t j = 0; j < nlines; j++)
        json_array_append_new(l, json_pack("{s:I, s:I, s:o}", "t", (json_int_t)lines[j].t, "class",
                                           (json_int_t)lines[j].cls, "line",
                                           text(lines[j].line)));
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o}", "i",
                          (json_int_t)idx, "t", (json_int_t)x->t, "mem", (json_int_t)x->mem, "pss",
                          (json_int_t)x->pss, "spool", (json_int_t)x->spool, "store_messages",
                          (json_int_t)x->store_messages, "store_bytes", (json_int_t)x->store_bytes,
                          "log_lines", (json_int_t)x->log_lines, "crashes", (json_int_t)x->crashes,
                          "procs", (json_int_t)x->procs, "io", io_json(&x->io), "hits", h, "lines", l);
    json_object_set_new(o, "parts", parts_json(x));
    json_object_set_new(o, "db", db_json(&x->db));
    json_array_append_new(e->samples, o);
    /* A response stays a few MB however many lines a burst of log errors left: the
     * puller asks again for the rest. A line's byte may become five: printable()'s
     * \xNN, its backslash escaped again in JSON. */
    e->bytes += 400 + 20 * e->ncls;
    for (size_t j = 0; j < nlines; j++)
        e->bytes += 40 + 5 * strlen(lines[j].line);
    return e->bytes >= WIRE_MAX_BYTES;
}

static void enc_event(void *ud, uint64_t idx, const struct probe_event *ev)
{
    struct enc *e = ud;
    json_array_append_new(e->events, json_pack("{s:I, s:I, s:s, s:o}", "i", (json_int_t)idx, "t", (json_int_t)ev->t,
                                               "kind", ev->kind, "text", text(ev->text)));
}

json_t *wire_encode(struct series *s, const char *probe_id, const char *host, uint64_t now_ns,
                    const struct wire_query *q)
{
    struct probe_has has = series_has(s);
    size_t ncls = series_nclasses(s);
    json_t *classes = json_array();
    for (size_t k = 0; k < ncls; k++)
        json_array_append_new(classes, text(series_class(s, k)));
    struct enc e = { json_array(), json_array(), ncls, 0 };
    uint64_t next, events_next, all, all_events;
    series_next(s, &all, &all_events);
    uint64_t from = q->has_since ? q->since : all ? all - 1 : 0;
    next = series_each(s, from, WIRE_MAX_SAMPLES, enc_sample, &e);
    events_next = q->has_events ? series_each_event(s, q->events, WIRE_MAX_EVENTS, enc_event, &e) : all_events;
    /* more: what was asked for did not all fit (samples added meanwhile count too) */
    int more = next < all || events_next < all_events;
    return json_pack("{s:s, s:i, s:s, s:o, s:I, s:{s:b, s:b, s:b, s:b, s:s}, s:o, s:I, s:I, s:I, s:b, s:o, s:o}",
                     "format", "mailsoak-probe", "version", 1, "probe", probe_id, "host", text(host),
                     "now", (json_int_t)now_ns, "has", "procs", has.procs, "spool", has.spool, "store", has.store,
                     "logs", has.logs, "db", probe_db_kind_name(has.db), "classes", classes, "examples", (json_int_t)series_examples(s), "next",
                     (json_int_t)next, "events_next", (json_int_t)events_next, "more", more, "samples", e.samples,
                     "events", e.events);
}

/* ------------------------------------------------------------------------------ */
/* The puller's side */

/* A non-negative integer member, or -1. */
static int get_u64(json_t *o, const char *key, uint64_t *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static int get_io(json_t *a, struct proc_io *io)
{
    uint64_t *f[] = { &io->rchar, &io->wchar, &io->syscr, &io->syscw, &io->read_bytes, &io->write_bytes,
                      &io->cancelled_write_bytes, &io->cpu_ms };
    size_t n = json_array_size(a);
    /* A probe older than the CPU figure sends 7. */
    memset(io, 0, sizeof *io);
    if (!json_is_array(a) || (n != sizeof f / sizeof f[0] && n != sizeof f / sizeof f[0] - 1))
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return -1;
        *f[i] = (uint64_t)json_integer_value(v);
    }
    return 0;
}

/* A decoded sample, before it is added. */
struct dsample {
    uint64_t idx;
    struct probe_sample x;
    uint64_t hits[WIRE_MAX_CLASSES];
    struct series_line *lines;
    size_t nlines;
};

static void dsamples_free(struct dsample *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < v[i].nlines; j++)
            free(v[i].lines[j].line);
        free(v[i].lines);
    }
    free(v);
}

static int bad(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "malformed response: %s", what);
    return -1;
}

static int decode_sample(json_t *o, size_t ncls, uint64_t examples, struct dsample *d, char *err, size_t errlen)
{
    uint64_t procs;
    if (!json_is_object(o) || get_u64(o, "i", &d->idx) || get_u64(o, "t", &d->x.t) || get_u64(o, "mem", &d->x.mem) ||
        get_u64(o, "pss", &d->x.pss) || get_u64(o, "spool", &d->x.spool) ||
        get_u64(o, "store_messages", &d->x.store_messages) || get_u64(o, "store_bytes", &d->x.store_bytes) ||
        get_u64(o, "log_lines", &d->x.log_lines) || get_u64(o, "crashes", &d->x.crashes) ||
        get_u64(o, "procs", &procs) || procs > 10000000 || get_io(json_object_get(o, "io"), &d->x.io))
        return bad(err, errlen, "a sample's numbers");
    d->x.procs = (unsigned)procs;
    /* parts and db: absent from an older probe's samples (nothing measured). */
    json_t *parts = json_object_get(o, "parts"), *db = json_object_get(o, "db");
    if (parts) {
        if (!json_is_array(parts) || json_array_size(parts) != PROBE_NPARTS)
            return bad(err, errlen, "a sample's parts");
        for (size_t k = 0; k < PROBE_NPARTS; k++) {
            json_t *p = json_array_get(parts, k);
            struct probe_use *u = &d->x.part[k];
            json_int_t mem, pss, n;
            json_t *io;
            if (json_unpack(p, "[I, I, I, o!]", &mem, &pss, &n, &io) || mem < 0 || pss < 0 || n < 0 ||
                n > 10000000 || get_io(io, &u->io))
                return bad(err, errlen, "a sample's parts");
            u->mem = (uint64_t)mem;
            u->pss = (uint64_t)pss;
            u->procs = (unsigned)n;
        }
    }
    if (db) {
        uint64_t *f[] = { &d->x.db.lock_waits, &d->x.db.waiting, &d->x.db.deadlocks, &d->x.db.errors,
                          &d->x.db.conns, &d->x.db.conns_max, &d->x.db.unreadable };
        if (!json_is_array(db) || json_array_size(db) != sizeof f / sizeof f[0])
            return bad(err, errlen, "a sample's db");
        for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
            json_t *v = json_array_get(db, k);
            if (!json_is_integer(v) || json_integer_value(v) < 0)
                return bad(err, errlen, "a sample's db");
            *f[k] = (uint64_t)json_integer_value(v);
        }
    }
    json_t *h = json_object_get(o, "hits"), *l = json_object_get(o, "lines");
    if (!json_is_array(h) || json_array_size(h) != ncls)
        return bad(err, errlen, "a sample's hits");
    for (size_t k = 0; k < ncls; k++) {
        json_t *v = json_array_get(h, k);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return bad(err, errlen, "a sample's hits");
        d->hits[k] = (uint64_t)json_integer_value(v);
    }
    if (!json_is_array(l) || json_array_size(l) > ncls * examples)
        return bad(err, errlen, "a sample's lines");
    size_t i;
    json_t *v;
    json_array_foreach(l, i, v) {
        uint64_t t, cls;
        const char *line = json_string_value(json_object_get(v, "line"));
        if (get_u64(v, "t", &t) || get_u64(v, "class", &cls) || cls >= ncls || !line)
            return bad(err, errlen, "a log line");
        char safe[MAX_LINE + 1];
        printable(safe, sizeof safe, line, strlen(line));
        d->lines = xrealloc(d->lines, (d->nlines + 1) * sizeof *d->lines);
        d->lines[d->nlines++] = (struct series_line){ t, (size_t)cls, xstrdup(safe) };
    }
    return 0;
}

/* The series a first response describes. */
static int make_series(struct wire_state *w, json_t *root, char *err, size_t errlen)
{
    json_t *has = json_object_get(root, "has"), *cls = json_object_get(root, "classes");
    if (!json_is_object(has) || !json_is_array(cls) || json_array_size(cls) > WIRE_MAX_CLASSES)
        return bad(err, errlen, "has, classes");
    const char *names[WIRE_MAX_CLASSES];
    for (size_t k = 0; k < json_array_size(cls); k++) {
        names[k] = json_string_value(json_array_get(cls, k));
        if (!names[k] || !names[k][0] || strlen(names[k]) > MAX_NAME)
            return bad(err, errlen, "a class name");
    }
    const char *db = json_string_value(json_object_get(has, "db"));
    int kind = DBK_NONE;
    for (int k = DBK_SQLITE; db && k <= DBK_MYSQL; k++)
        if (!strcmp(db, probe_db_kind_name(k)))
            kind = k;
    struct series_opts so = {
        .has = { 1, json_is_true(json_object_get(has, "procs")), json_is_true(json_object_get(has, "spool")),
                 json_is_true(json_object_get(has, "store")), json_is_true(json_object_get(has, "logs")), kind },
        .classes = names, .ncls = json_array_size(cls), .examples = w->examples,
    };
    w->series = series_new(&so);
    return 0;
}

static void add_carry(struct wire_state *w, struct probe_sample *x)
{
    proc_io_add(&x->io, &w->carry);
    for (int k = 0; k < PROBE_NPARTS; k++)
        proc_io_add(&x->part[k].io, &w->carry_part[k]);
    x->crashes += w->carry_crashes;
}

int wire_decode(struct wire_state *w, const char *body, size_t len, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(body, len, 0, &je);
    if (!root)
        return snprintf(err, errlen, "not JSON: %s", je.text), -1;
    int rc = -1;
    struct dsample *ds = NULL;
    size_t nds = 0;
    const char *fmt = json_string_value(json_object_get(root, "format"));
    const char *id = json_string_value(json_object_get(root, "probe"));
    const char *host = json_string_value(json_object_get(root, "host"));
    json_t *samples = json_object_get(root, "samples"), *events = json_object_get(root, "events");
    uint64_t now, next, events_next, version;
    if (!fmt || strcmp(fmt, "mailsoak-probe") || get_u64(root, "version", &version) || version != 1) {
        snprintf(err, errlen, "not a mailsoak probe's response (format, version)");
        goto out;
    }
    if (!id || strlen(id) >= sizeof w->probe || !host || get_u64(root, "now", &now) ||
        get_u64(root, "next", &next) || get_u64(root, "events_next", &events_next) || !json_is_array(samples) ||
        json_array_size(samples) > WIRE_MAX_SAMPLES || !json_is_array(events) ||
        json_array_size(events) > WIRE_MAX_EVENTS) {
        bad(err, errlen, "probe, host, now, next, samples or events");
        goto out;
    }
    if (!w->series && make_series(w, root, err, errlen) < 0)
        goto out;
    size_t ncls = series_nclasses(w->series);
    json_t *cls = json_object_get(root, "classes");
    if (!json_is_array(cls) || json_array_size(cls) != ncls) {
        snprintf(err, errlen, "the probe's log classes changed (restarted with another configuration?)");
        goto out;
    }
    if (w->probe[0] && strcmp(w->probe, id)) {
        /* Restarted: its counters begin again. Ask for its newest sample as a new
         * baseline; everything after the old one adds to what was counted. */
        w->carry = w->last.io;
        for (int k = 0; k < PROBE_NPARTS; k++)
            w->carry_part[k] = w->last.part[k].io;
        w->carry_crashes = w->last.crashes;
        w->restarts++;
        series_event(w->series, w->last.t, "probe_restart",
                     "the probe restarted: what the server did between its last sample before and its "
                     "first sample after the restart is not counted");
        snprintf(w->probe, sizeof w->probe, "%s", id);
        /* Its clock is the host's and goes on, unless the host rebooted: then time
         * starts again, and order is checked from its first sample on. */
        w->last.t = 0;
        w->next = (struct wire_query){ .has_events = 1, .events = events_next };
        w->probe_now = now;
        rc = 0;
        goto out;
    }
    /* The probe keeps its own log_examples lines per class and sample (the series
     * keeps ours of them); more than WIRE_MAX_EXAMPLES is no probe's doing. */
    uint64_t examples;
    if (get_u64(root, "examples", &examples) || examples > WIRE_MAX_EXAMPLES) {
        bad(err, errlen, "examples");
        goto out;
    }
    ds = xcalloc(json_array_size(samples), sizeof *ds);
    size_t i;
    json_t *v;
    json_array_foreach(samples, i, v) {
        if (decode_sample(v, ncls, examples, &ds[nds], err, errlen) < 0) {
            nds++;
            goto out;
        }
        nds++;
    }
    /* Checked whole before anything is added: time and index only go forward. */
    uint64_t last_t = w->last.t, last_i = 0;
    int have_last = w->probe[0] != 0;
    for (size_t k = 0; k < nds; k++) {
        if ((have_last || k) && (ds[k].x.t < last_t || (k && ds[k].idx <= last_i))) {
            snprintf(err, errlen, "samples out of order");
            goto out;
        }
        last_t = ds[k].x.t;
        last_i = ds[k].idx;
    }
    json_array_foreach(events, i, v) {
        uint64_t idx, t;
        const char *kind = json_string_value(json_object_get(v, "kind"));
        const char *text = json_string_value(json_object_get(v, "text"));
        if (get_u64(v, "i", &idx) || get_u64(v, "t", &t) || !kind || strlen(kind) >= sizeof ((struct probe_event *)0)->kind ||
            !text) {
            bad(err, errlen, "an event");
            goto out;
        }
    }
    for (size_t k = 0; k < nds; k++) {
        if (w->next.has_since && ds[k].idx > w->next.since && !k)
            w->gaps++;           /* the probe dropped samples we had not pulled */
        add_carry(w, &ds[k].x);
        series_add(w->series, &ds[k].x, ds[k].hits, ds[k].lines, ds[k].nlines);
        free(ds[k].lines);       /* the series owns the strings now, not the array */
        ds[k].lines = NULL;
        ds[k].nlines = 0;
        w->last = ds[k].x;
    }
    json_array_foreach(events, i, v) {
        const char *kind = json_string_value(json_object_get(v, "kind")),
                   *text = json_string_value(json_object_get(v, "text"));
        char safe_kind[sizeof ((struct probe_event *)0)->kind], safe_text[MAX_TEXT + 1];
        printable(safe_kind, sizeof safe_kind, kind, strlen(kind));
        printable(safe_text, sizeof safe_text, text, strlen(text));
        series_event(w->series, (uint64_t)json_integer_value(json_object_get(v, "t")), safe_kind, safe_text);
    }
    if (!w->probe[0])
        printable(w->host, sizeof w->host, host, strlen(host));
    snprintf(w->probe, sizeof w->probe, "%s", id);
    w->probe_now = now;
    w->next = (struct wire_query){ .has_since = 1, .since = next, .has_events = 1, .events = events_next };
    w->more = json_is_true(json_object_get(root, "more"));
    rc = 0;
out:
    dsamples_free(ds, nds);
    json_decref(root);
    return rc;
}

void wire_state_free(struct wire_state *w)
{
    series_free(w->series);
    w->series = NULL;
}

size_t wire_time_encode(char *b, size_t n, uint64_t now_ns)
{
    int k = snprintf(b, n, "{\"format\":\"mailsoak-probe\",\"now\":%llu}", (unsigned long long)now_ns);
    return k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
}

int wire_time_decode(const char *body, size_t len, uint64_t *now_ns)
{
    json_t *j = json_loadb(body ? body : "", len, 0, NULL);
    int rc = get_u64(j, "now", now_ns);
    json_decref(j);
    return rc;
}
