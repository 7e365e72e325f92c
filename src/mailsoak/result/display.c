/* display: reads the parts of a result file that compare and report show
 * (include/result/display.h): the figures by one table of paths, so each key is
 * named once; the verdict, the examples, the events, the settings and the
 * timeline's entries by their shapes. A part of the wrong type reads as absent. */
#include "result/display.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/json.h"

static const char *const fig_paths[RF_COUNT] = {
    [RF_SENT] = "summary/sent",
    [RF_READ] = "summary/read",
    [RF_ERRORS] = "summary/errors",
    [RF_DELIVERED] = "summary/delivered",
    [RF_LOST] = "summary/lost",
    [RF_PENDING] = "summary/pending",
    [RF_PENDING_QUEUED] = "summary/pending_queued",
    [RF_PENDING_PEEKED] = "summary/pending_peeked",
    [RF_PENDING_UNSWEPT] = "summary/pending_unswept",
    [RF_PENDING_UNSETTLED] = "summary/pending_unsettled",
    [RF_DUPLICATED] = "summary/duplicated",
    [RF_CORRUPTED] = "summary/corrupted",
    [RF_FOREIGN] = "summary/foreign",
    [RF_SPOOL] = "summary/spool",
    [RF_MEM] = "summary/mem",
    [RF_INPUT] = "summary/input",
    [RF_OUTPUT] = "summary/output",
    [RF_IBYTES] = "summary/ibytes",
    [RF_OBYTES] = "summary/obytes",
    [RF_LOG_HITS] = "summary/log_hits",
    [RF_SERVER_CRASHES] = "summary/server_crashes",
    [RF_CPU] = "summary/cpu",
    [RF_MTA_CPU] = "summary/parts/mta/cpu",
    [RF_POP3_CPU] = "summary/parts/pop3/cpu",
    [RF_DB_CPU] = "summary/parts/db/cpu",
    [RF_DB_MEM] = "summary/parts/db/mem_pss",
    [RF_DB_OBYTES] = "summary/parts/db/obytes",
    [RF_DB_DISK_WRITE] = "summary/parts/db/disk_write_bytes",
    [RF_DB_WAITS] = "summary/db/lock_waits",
    [RF_DB_DEADLOCKS] = "summary/db/deadlocks",
    [RF_DB_ERRORS] = "summary/db/errors",
    [RF_DB_CONNS] = "summary/db/conns_peak",
    [RF_DELIVERY_P50] = "summary/latency/delivery/p50",
    [RF_DELIVERY_P99] = "summary/latency/delivery/p99",
    [RF_RATE_IN] = "summary/rate_in",
    [RF_RATE_OUT] = "summary/rate_out",
    [RF_PROVEN_SHARE] = "verdict/proven_share",
    [RF_GATES_FAILED] = "verdict/gates/failed",
};

const char *const result_env_names[RE_COUNT] = {
    "run_id", "seed", "start_time", "duration_s", "elapsed_s", "interrupted", "version",
};

/* A timeline entry's figures, from the entry. */
const char *const result_ifig_names[RI_COUNT] = {
    "t", "sent", "read", "errors", "rate_in", "rate_out", "conns", "server/mem", "server/spool",
    "server/store_messages", "server/store_bytes", "server/procs", "server/input", "server/output",
    "server/ibytes", "server/obytes",
};

static struct result_value value_of(const json_t *v)
{
    struct result_value r = { 0 };
    if (json_is_number(v)) {
        r.has = 1;
        r.integer = json_is_integer(v);
        r.v = json_number_value(v);
    }
    return r;
}

/* A value as text (display.h's rule); NULL for NULL. */
static char *text_of(const json_t *v)
{
    char buf[64];
    if (!v)
        return NULL;
    if (json_is_string(v))
        return xstrdup(json_string_value(v));
    if (json_is_integer(v)) {
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        return xstrdup(buf);
    }
    if (json_is_real(v)) {
        double x = json_real_value(v);
        snprintf(buf, sizeof buf, fabs(x) >= 100 ? "%.1f" : "%.4g", x);
        return xstrdup(buf);
    }
    if (json_is_array(v)) {
        size_t i, len = 0;
        const json_t *x;
        char *out = xstrdup("");
        json_array_foreach(v, i, x) {
            char *s = text_of(x);
            size_t n = strlen(s);
            out = xrealloc(out, len + n + 3);
            if (i) {
                memcpy(out + len, ", ", 2);
                len += 2;
            }
            memcpy(out + len, s, n + 1);
            len += n;
            free(s);
        }
        return out;
    }
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    char *out = xstrdup(s ? s : "");
    free(s);
    return out;
}

static char *str_of(const json_t *v)
{
    return json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
}

static int tri_of(const json_t *v)
{
    return json_is_boolean(v) ? json_is_true(v) : -1;
}

/* An object's numeric members, in its order. */
static void classes_of(struct result_classes *c, const json_t *o)
{
    const char *k;
    const json_t *v;
    memset(c, 0, sizeof *c);
    c->has = json_is_object(o);
    size_t size = json_object_size(o);
    c->name = xcalloc(size ? size : 1, sizeof *c->name);
    c->count = xcalloc(size ? size : 1, sizeof *c->count);
    json_object_foreach((json_t *)o, k, v)
        if (json_is_number(v)) {
            c->name[c->n].key = xstrdup(k);
            c->count[c->n++] = value_of(v);
        }
}

static void classes_free(struct result_classes *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->name[i].key);
    free(c->name);
    free(c->count);
}

/* An object's members as text, in its order. */
static struct result_kv *kv_of(const json_t *o, size_t *n)
{
    const char *k;
    const json_t *v;
    size_t size = json_object_size(o);
    struct result_kv *kv = xcalloc(size ? size : 1, sizeof *kv);
    *n = 0;
    json_object_foreach((json_t *)o, k, v) {
        kv[*n].key = xstrdup(k);
        kv[(*n)++].text = text_of(v);
    }
    return kv;
}

static void kv_free(struct result_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(kv[i].key);
        free(kv[i].text);
    }
    free(kv);
}

static void messages_of(struct result_messages *m, const json_t *a)
{
    size_t i;
    const json_t *e;
    m->n = 0;
    m->v = xcalloc(json_array_size(a) + 1, sizeof *m->v);
    json_array_foreach(a, i, e) {
        struct result_message *x = &m->v[m->n++];
        const json_t *ev = json_object_get(e, "server_evidence"), *t;
        x->id = text_of(json_object_get(e, "id"));
        x->message_id = text_of(json_object_get(e, "message_id"));
        x->queue_id = text_of(json_object_get(e, "queue_id"));
        x->mailbox = text_of(json_object_get(e, "mailbox"));
        x->accepted = text_of(json_object_get(e, "accepted"));
        x->mailbox_read = text_of(json_object_get(e, "mailbox_read"));
        x->ev.has = json_is_object(ev);
        x->ev.cause = text_of(json_object_get(ev, "cause"));
        x->ev.cause_line = str_of(json_object_get(ev, "cause_line"));
        x->ev.lines = text_of(json_object_get(ev, "lines"));
        const json_t *trail = json_object_get(ev, "trail");
        size_t j;
        x->ev.trail = xcalloc(json_array_size(trail) + 1, sizeof *x->ev.trail);
        json_array_foreach(trail, j, t)
            x->ev.trail[x->ev.ntrail++] = text_of(t);
    }
}

static void messages_free(struct result_messages *m)
{
    for (size_t i = 0; i < m->n; i++) {
        struct result_message *x = &m->v[i];
        free(x->id);
        free(x->message_id);
        free(x->queue_id);
        free(x->mailbox);
        free(x->accepted);
        free(x->mailbox_read);
        free(x->ev.cause);
        free(x->ev.cause_line);
        free(x->ev.lines);
        for (size_t j = 0; j < x->ev.ntrail; j++)
            free(x->ev.trail[j]);
        free(x->ev.trail);
    }
    free(m->v);
}

static void verdict_of(struct result_verdict *v, const json_t *o)
{
    const json_t *gates = json_object_get(o, "gates"), *g;
    v->has = json_is_object(o);
    v->state = str_of(json_object_get(o, "state"));
    v->headline = str_of(json_object_get(o, "headline"));
    v->session_errors = str_of(json_object_get(o, "session_errors"));
    v->remedy = str_of(json_object_get(o, "remedy"));
    v->kept_up = tri_of(json_object_get(o, "kept_up"));
    v->exit_status = value_of(json_object_get(gates, "exit_status"));
    const json_t *results = json_object_get(gates, "results");
    size_t i;
    v->gates = xcalloc(json_array_size(results) + 1, sizeof *v->gates);
    json_array_foreach(results, i, g) {
        v->gates[v->ngates].pass = tri_of(json_object_get(g, "pass"));
        v->gates[v->ngates++].text = str_of(json_object_get(g, "text"));
    }
}

/* The summary's examples: error replies by class, log classes, corruptions. */
static void examples_of(struct result_display *d, const json_t *s)
{
    const char *k;
    const json_t *v, *x;
    size_t i, total = 0;
    const json_t *ex = json_object_get(s, "error_examples");
    d->nerror_classes = json_object_size(ex);
    json_object_foreach((json_t *)ex, k, v)
        total += json_array_size(v);
    d->error_ex = xcalloc(total + 1, sizeof *d->error_ex);
    json_object_foreach((json_t *)ex, k, v)
        json_array_foreach(v, i, x) {
            d->error_ex[d->nerror_ex].key = xstrdup(k);
            d->error_ex[d->nerror_ex++].text = text_of(x);
        }
    const json_t *lc = json_object_get(s, "log_classes");
    d->log = xcalloc(json_object_size(lc) + 1, sizeof *d->log);
    json_object_foreach((json_t *)lc, k, v) {
        struct result_logclass *l = &d->log[d->nlog++];
        const json_t *exs = json_object_get(v, "examples");
        l->name = xstrdup(k);
        l->count = value_of(json_object_get(v, "count"));
        l->ex_t = xcalloc(json_array_size(exs) + 1, sizeof *l->ex_t);
        l->ex_line = xcalloc(json_array_size(exs) + 1, sizeof *l->ex_line);
        json_array_foreach(exs, i, x) {
            l->ex_t[l->nex] = value_of(json_object_get(x, "t"));
            l->ex_line[l->nex++] = text_of(json_object_get(x, "line"));
        }
    }
    const json_t *ce = json_object_get(s, "corruption_examples");
    d->corruption = xcalloc(json_array_size(ce) + 1, sizeof *d->corruption);
    json_array_foreach(ce, i, x)
        d->corruption[d->ncorruption++] = text_of(x);
}

static void entry_of(struct result_entry *e, const json_t *o)
{
    const char *k;
    const json_t *v;
    e->object = json_is_object(o);
    for (unsigned f = 0; f < RI_COUNT; f++)
        e->fig[f] = value_of(json_path_get(o, result_ifig_names[f]));
    e->phase = str_of(json_object_get(o, "phase"));
    const json_t *lat = json_object_get(o, "latency");
    e->lat = xcalloc(json_object_size(lat) + 1, sizeof *e->lat);
    json_object_foreach((json_t *)lat, k, v)
        if (json_is_object(v) && !strchr(k, '/')) {
            struct result_entry_lat *l = &e->lat[e->nlat++];
            l->name = xstrdup(k);
            l->p50 = value_of(json_object_get(v, "p50"));
            l->p99 = value_of(json_object_get(v, "p99"));
        }
    classes_of(&e->errors, json_object_get(o, "errors_by_class"));
    classes_of(&e->log_hits, json_path_get(o, "server/log_hits"));
}

void result_display_read(struct result_display *d, const json_t *doc)
{
    const json_t *s = json_object_get(doc, "summary"), *v;
    size_t i;
    memset(d, 0, sizeof *d);
    for (unsigned f = 0; f < RF_COUNT; f++) {
        v = json_path_get(doc, fig_paths[f]);
        d->fig[f] = value_of(v);
        /* the verdict's lists count their items */
        if (f >= RF_PROVEN_SHARE && json_is_array(v))
            d->fig[f] = (struct result_value){ 1, 1, (double)json_array_size(v) };
    }
    for (unsigned e = 0; e < RE_COUNT; e++)
        d->env[e] = text_of(json_object_get(doc, result_env_names[e]));
    d->duration = value_of(json_object_get(doc, "duration_s"));
    const json_t *cfg = json_object_get(doc, "config");
    d->server_kind = str_of(json_path_get(cfg, "run/server_kind"));
    verdict_of(&d->verdict, json_object_get(doc, "verdict"));
    d->gates_failed = json_array_size(json_path_get(doc, "verdict/gates/failed"));
    d->workload = kv_of(json_object_get(doc, "workload"), &d->nworkload);
    const char *k;
    d->config = xcalloc(json_object_size(cfg) + 1, sizeof *d->config);
    json_object_foreach((json_t *)cfg, k, v) {
        struct result_section *sec = &d->config[d->nconfig++];
        sec->name = xstrdup(k);
        sec->object = json_is_object(v);
        if (sec->object)
            sec->kv = kv_of(v, &sec->n);
        else
            sec->text = text_of(v);
    }
    classes_of(&d->errors, json_object_get(s, "errors_by_class"));
    examples_of(d, s);
    messages_of(&d->lost, json_object_get(s, "lost_examples"));
    messages_of(&d->duplicated, json_object_get(s, "duplicated_examples"));
    messages_of(&d->corrupted, json_object_get(s, "corrupted_examples"));
    messages_of(&d->late, json_object_get(s, "late_examples"));
    const json_t *events = json_object_get(doc, "events"), *e;
    d->events = xcalloc(json_array_size(events) + 1, sizeof *d->events);
    json_array_foreach(events, i, e) {
        struct result_event *x = &d->events[d->nevents++];
        x->t = value_of(json_object_get(e, "t"));
        x->t_text = text_of(json_object_get(e, "t"));
        x->kind = str_of(json_object_get(e, "kind"));
        x->text = str_of(json_object_get(e, "text"));
    }
    const json_t *tl = json_object_get(doc, "timeline");
    d->entries = xcalloc(json_array_size(tl) + 1, sizeof *d->entries);
    json_array_foreach(tl, i, e)
        entry_of(&d->entries[d->nentries++], e);
}

const char *result_setting(const struct result_display *d, const char *section, const char *key)
{
    for (size_t i = 0; i < d->nconfig; i++)
        if (d->config[i].object && !strcmp(d->config[i].name, section))
            for (size_t j = 0; j < d->config[i].n; j++)
                if (!strcmp(d->config[i].kv[j].key, key))
                    return d->config[i].kv[j].text;
    return NULL;
}

void result_display_free(struct result_display *d)
{
    for (unsigned e = 0; e < RE_COUNT; e++)
        free(d->env[e]);
    free(d->server_kind);
    free(d->verdict.state);
    free(d->verdict.headline);
    free(d->verdict.session_errors);
    free(d->verdict.remedy);
    for (size_t i = 0; i < d->verdict.ngates; i++)
        free(d->verdict.gates[i].text);
    free(d->verdict.gates);
    kv_free(d->workload, d->nworkload);
    for (size_t i = 0; i < d->nconfig; i++) {
        free(d->config[i].name);
        free(d->config[i].text);
        kv_free(d->config[i].kv, d->config[i].n);
    }
    free(d->config);
    classes_free(&d->errors);
    kv_free(d->error_ex, d->nerror_ex);
    for (size_t i = 0; i < d->nlog; i++) {
        free(d->log[i].name);
        free(d->log[i].ex_t);
        for (size_t j = 0; j < d->log[i].nex; j++)
            free(d->log[i].ex_line[j]);
        free(d->log[i].ex_line);
    }
    free(d->log);
    messages_free(&d->lost);
    messages_free(&d->duplicated);
    messages_free(&d->corrupted);
    messages_free(&d->late);
    for (size_t i = 0; i < d->ncorruption; i++)
        free(d->corruption[i]);
    free(d->corruption);
    for (size_t i = 0; i < d->nevents; i++) {
        free(d->events[i].t_text);
        free(d->events[i].kind);
        free(d->events[i].text);
    }
    free(d->events);
    for (size_t i = 0; i < d->nentries; i++) {
        struct result_entry *e = &d->entries[i];
        free(e->phase);
        for (size_t j = 0; j < e->nlat; j++)
            free(e->lat[j].name);
        free(e->lat);
        classes_free(&e->errors);
        classes_free(&e->log_hits);
    }
    free(d->entries);
    memset(d, 0, sizeof *d);
}
