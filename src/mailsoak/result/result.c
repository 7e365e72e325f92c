/* result: the one reader of the result file (include/result/result.h): its
 * envelope and version checked, then every figure read through one table of
 * {path, field, type}, so each key is named once; the families of keys (latencies
 * by command, errors by class, pending by reason) by their own lists. */
#include "result/result.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/json.h"
#include "lib/printable.h"
#include "settings/config.h"
#include "result/latency.h"

#define RF(path, member, type, req) { path, offsetof(struct result, member), type, req, RESULT_NO_HAS }
#define RH(path, member, type, has) { path, offsetof(struct result, member), type, 0, offsetof(struct result, has) }
static const struct result_field result_fields[] = {
    RF("version", version, RT_STR, 0),
    RF("run_id", run_id, RT_STR, 0),
    RF("start_time", start_time, RT_STR, 0),
    RF("seed", seed, RT_COUNT, 0),
    RF("duration_s", duration_s, RT_NUM, 0),
    RF("elapsed_s", elapsed_s, RT_NUM, 1),
    RF("interrupted", interrupted, RT_BOOL, 1),
    RF("workload/senders", senders, RT_COUNT, 1),
    RF("workload/readers", readers, RT_COUNT, 1),
    RF("workload/messages", messages, RT_COUNT, 0),
    RF("workload/rate", rate, RT_NUM, 0),
    RF("summary/sent", c.sent, RT_COUNT, 1),
    RF("summary/read", c.read, RT_COUNT, 1),
    RF("summary/errors", c.errors, RT_COUNT, 1),
    RF("summary/rejected", c.rejected, RT_COUNT, 0),
    RF("summary/foreign", c.foreign, RT_COUNT, 0),
    RF("summary/stale", c.stale, RT_COUNT, 0),
    RF("summary/peeked", c.peeked, RT_COUNT, 0),
    RF("summary/unattributed", c.corrupt_unattributed, RT_COUNT, 0),
    RF("summary/empty_body_as_line", c.empty_body_as_line, RT_COUNT, 0),
    RF("summary/tls_handshakes", c.tls_handshakes, RT_COUNT, 0),
    RF("summary/tls_resumed", c.tls_resumed, RT_COUNT, 0),
    RF("summary/deferrals", c.deferrals, RT_COUNT, 0),
    RF("summary/bounced", c.bounced, RT_COUNT, 0),
    RF("summary/push_busy", c.push_busy, RT_COUNT, 0),
    RF("summary/push_missed", c.push_missed, RT_COUNT, 0),
    RF("summary/imap_commands", c.imap_commands, RT_COUNT, 0),
    RF("summary/imap_round_trips", c.imap_rounds, RT_COUNT, 0),
    RF("summary/delivered", lo.delivered, RT_COUNT, 1),
    RF("summary/duplicated", lo.duplicated, RT_COUNT, 1),
    RF("summary/corrupted", lo.corrupted, RT_COUNT, 1),
    RF("summary/lost", lo.lost, RT_COUNT, 1),
    RF("summary/pending", lo.pending, RT_COUNT, 1),
    RF("summary/late", lo.late, RT_COUNT, 0),
    RF("summary/unconfirmed", lo.unconfirmed, RT_COUNT, 0),
    RF("summary/deferred_attempts", lo.deferred, RT_COUNT, 0),
    RF("summary/retried", lo.retried, RT_COUNT, 0),
    RF("summary/retried_tries", lo.retried_tries, RT_COUNT, 0),
    RF("summary/settled", settled, RT_TRI, 0),
    RF("summary/sweep_passes", sweep_passes, RT_COUNT, 0),
    RF("summary/arrivals/due", due, RT_COUNT, 0),
    RF("summary/arrivals/started", started, RT_COUNT, 0),
    RF("summary/arrivals/late_busy", late_busy, RT_COUNT, 0),
    RF("summary/arrivals/late_engine", late_engine, RT_COUNT, 0),
    RF("summary/arrivals/never_started", never_started, RT_COUNT, 0),
    { NULL, 0, RT_COUNT, 0, RESULT_NO_HAS },
};

const struct result_field *result_field_table(void)
{
    return result_fields;
}

#define IF(path, member, type) { path, offsetof(struct result_interval, member), type, 0, RESULT_NO_HAS }
#define IH(path, member, type, has) { path, offsetof(struct result_interval, member), type, 0, \
                                      offsetof(struct result_interval, has) }
static const struct result_field interval_fields[] = {
    IH("t", t, RT_NUM, has_t),
    IF("phase", phase, RT_PHASE),
    IF("sent", c.sent, RT_COUNT),
    IF("read", c.read, RT_COUNT),
    IF("errors", c.errors, RT_COUNT),
    IF("smtp_sessions", c.smtp_sessions, RT_COUNT),
    IF("pop3_sessions", c.pop3_sessions, RT_COUNT),
    IH("arrivals", c.arrivals, RT_COUNT, has_arrivals),
    IF("late_busy", c.late_busy, RT_COUNT),
    IF("late_engine", c.late_engine, RT_COUNT),
    IF("left_behind", c.left_behind, RT_COUNT),
    IF("empty_visits", c.empty_visits, RT_COUNT),
    IF("full_visits", c.full_visits, RT_COUNT),
    IF("idle_syncs", c.idle_syncs, RT_COUNT),
    IH("unread", unread, RT_I64, has_unread),
    IH("server/spool", spool, RT_NUM, has_spool),
    IH("server/store_messages", store_messages, RT_NUM, has_store),
    { NULL, 0, RT_COUNT, 0, RESULT_NO_HAS },
};

#define SF(path, member, type) { path, offsetof(struct result_stage, member), type, 0, RESULT_NO_HAS }
static const struct result_field stage_fields[] = {
    { "accepted", offsetof(struct result_stage, accepted), RT_COUNT, 0, offsetof(struct result_stage, has_accepted) },
    SF("t0", t0, RT_NUM),
    SF("t1", t1, RT_NUM),
    SF("rate", rate, RT_NUM),
    SF("delivered", delivered, RT_COUNT),
    SF("lost", lost, RT_COUNT),
    SF("duplicated", duplicated, RT_COUNT),
    SF("corrupted", corrupted, RT_COUNT),
    SF("pending", pending, RT_COUNT),
    { NULL, 0, RT_COUNT, 0, RESULT_NO_HAS },
};

/* Whether v is of the field's type (what its has flag says). */
static int typed(const json_t *v, enum result_field_type t)
{
    switch (t) {
    case RT_COUNT:
    case RT_I64:
        return json_is_integer(v);
    case RT_NUM:
        return json_is_number(v);
    case RT_BOOL:
    case RT_TRI:
        return json_is_boolean(v);
    default:
        return json_is_string(v);
    }
}

/* Fills base's fields from obj by the table; the first required key absent goes
 * into missing (when not NULL and still empty). */
static void read_fields(const struct result_field *t, const json_t *obj, void *base, char *missing, size_t mlen)
{
    char *b = base;
    for (; t->path; t++) {
        const json_t *v = json_path_get(obj, t->path);
        void *p = b + t->off;
        if (!v && t->required && missing && !missing[0])
            snprintf(missing, mlen, "%s", t->path);
        if (t->has != RESULT_NO_HAS)
            *(int *)(void *)(b + t->has) = typed(v, t->type);
        switch (t->type) {
        case RT_COUNT:
            *(uint64_t *)p = json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
            break;
        case RT_NUM:
            *(double *)p = json_is_number(v) ? json_number_value(v) : 0;
            break;
        case RT_BOOL:
            *(int *)p = json_is_true(v);
            break;
        case RT_TRI:
            *(int *)p = json_is_boolean(v) ? json_is_true(v) : -1;
            break;
        case RT_I64:
            *(int64_t *)p = json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
            break;
        case RT_STR:
            *(char **)p = json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
            break;
        case RT_PHASE:
            snprintf(p, sizeof ((struct result_interval *)0)->phase, "%s",
                     json_is_string(v) ? json_string_value(v) : "");
            break;
        }
    }
}

/* An "errors_by_class" object: its counts (integers >= 0), at most ERR_CLASSES_MAX. */
static struct err_count *errors_of(const json_t *o, unsigned *n)
{
    const char *name;
    const json_t *v;
    size_t size = json_object_size(o);
    struct err_count *e = xcalloc(size ? size : 1, sizeof *e);
    *n = 0;
    json_object_foreach((json_t *)o, name, v) {
        if (*n >= ERR_CLASSES_MAX || !json_is_integer(v) || json_integer_value(v) < 0)
            continue;
        snprintf(e[*n].name, sizeof e[*n].name, "%s", name);
        e[(*n)++].count = (uint64_t)json_integer_value(v);
    }
    return e;
}

/* A "latency" object's figures, by command. */
static void latencies_of(const json_t *lat, struct result_latency *out)
{
    static const char *const keys[] = { "p50", "p90", "p95", "p99", "p999", "min", "max", "mean" };
    for (unsigned k = 0; k < LAT_COUNT; k++) {
        const json_t *one = json_object_get(lat, lat_names[k]), *n = json_object_get(one, "count");
        struct result_latency *l = &out[k];
        double *d[] = { &l->p50, &l->p90, &l->p95, &l->p99, &l->p999, &l->min, &l->max, &l->mean };
        memset(l, 0, sizeof *l);
        if (!json_is_object(one))
            continue;
        l->has = 1;
        l->count = json_is_integer(n) && json_integer_value(n) > 0 ? (uint64_t)json_integer_value(n) : 0;
        for (unsigned i = 0; i < sizeof keys / sizeof *keys; i++)
            *d[i] = json_number_value(json_object_get(one, keys[i]));
        /* a file of an older mailsoak has no p95: absent, never 0 ms */
        if (!json_is_number(json_object_get(one, "p95")))
            l->p95 = NAN;
    }
}

/* The summary's families: pending by reason, errors by class, latencies and their
 * histograms. */
static void summary_of(struct result *r, const json_t *s)
{
    for (unsigned k = 0; k < PR_COUNT; k++) {
        char key[64];
        snprintf(key, sizeof key, "pending_%s", pending_reason_names[k]);
        r->lo.pending_by[k] = json_path_count(s, key);
    }
    r->lo.accepted = r->c.sent;
    r->has_arrivals = json_is_object(json_object_get(s, "arrivals"));
    r->err = errors_of(json_object_get(s, "errors_by_class"), &r->nerr);
    const json_t *lat = json_object_get(s, "latency");
    latencies_of(lat, r->lat);
    r->hist = xcalloc(LAT_COUNT, sizeof *r->hist);
    for (unsigned k = 0; k < LAT_COUNT; k++) {
        const json_t *one = json_object_get(lat, lat_names[k]);
        char why[200];
        /* latency_add takes nothing of buckets it refuses */
        if (!one || latency_add(&r->hist[k], one, why, sizeof why) == 0)
            continue;
        if (!r->hist_err[0])
            snprintf(r->hist_err, sizeof r->hist_err, "latency \"%s\": %s", lat_names[k], why);
    }
}

static void timeline_of(struct result *r, const json_t *tl)
{
    r->has_timeline = json_is_array(tl);
    r->nintervals = json_array_size(tl);
    r->intervals = xcalloc(r->nintervals ? r->nintervals : 1, sizeof *r->intervals);
    for (size_t i = 0; i < r->nintervals; i++) {
        const json_t *e = json_array_get(tl, i);
        struct result_interval *iv = &r->intervals[i];
        read_fields(interval_fields, e, iv, NULL, 0);
        iv->err = errors_of(json_object_get(e, "errors_by_class"), &iv->nerr);
        latencies_of(json_object_get(e, "latency"), iv->lat);
    }
}

static void stages_of(struct result *r, const json_t *stages)
{
    r->nstages = json_array_size(stages);
    r->stages = xcalloc(r->nstages ? r->nstages : 1, sizeof *r->stages);
    for (size_t i = 0; i < r->nstages; i++)
        read_fields(stage_fields, json_array_get(stages, i), &r->stages[i], NULL, 0);
}

/* A part that must be an object/array when present; sets *out to NULL when absent. */
static int part(json_t *root, const char *key, int want_array, json_t **out, const char *name, char *err,
                size_t errlen)
{
    json_t *v = json_object_get(root, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (want_array ? !json_is_array(v) : !json_is_object(v)) {
        snprintf(err, errlen, "%s: \"%s\" is not an %s", name, key, want_array ? "array" : "object");
        return -1;
    }
    *out = v;
    return 0;
}

/* Labels reach terminals (compare's table) and files other programs read (CSV):
 * the file's bytes, or its name's, made printable once here. */
static char *label_from_path(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    if (n > 5 && !strcmp(b + n - 5, ".json"))
        n -= 5;
    return printable_dup(b, n);
}

int result_from_json(struct result *r, json_t *doc, const char *name, char *err, size_t errlen)
{
    const char *who = name ? name : "result";
    memset(r, 0, sizeof *r);
    r->root = json_incref(doc);
    if (!json_is_object(doc)) {
        snprintf(err, errlen, "%s: not a JSON object", who);
        goto fail;
    }
    if (part(doc, "summary", 0, &r->summary, who, err, errlen) < 0 ||
        part(doc, "workload", 0, &r->workload, who, err, errlen) < 0 ||
        part(doc, "config", 0, &r->config, who, err, errlen) < 0 ||
        part(doc, "timeline", 1, &r->timeline, who, err, errlen) < 0 ||
        part(doc, "events", 1, &r->events, who, err, errlen) < 0)
        goto fail;
    json_t *label = json_object_get(doc, "label");
    if (label && !json_is_string(label) && !json_is_null(label)) {
        snprintf(err, errlen, "%s: \"label\" is not a string", who);
        goto fail;
    }
    /* An unlabelled run is its own column: grouping all of them as repeats of ""
     * would average runs that may have nothing in common. */
    if (json_is_string(label) && *json_string_value(label))
        r->label = printable_dup(json_string_value(label), json_string_length(label));
    else
        r->label = label_from_path(who);
    r->path = name ? xstrdup(name) : NULL;
    const json_t *ver = json_object_get(doc, "format_version");
    r->format_version = json_is_integer(ver) ? (int64_t)json_integer_value(ver) : 0;
    read_fields(result_fields, doc, r, r->missing, sizeof r->missing);
    r->has_summary = r->summary != NULL;
    summary_of(r, r->summary);
    timeline_of(r, r->timeline);
    stages_of(r, json_path_get(doc, "verdict/stages"));
    result_display_read(&r->display, doc);
    return 0;
fail:
    result_free(r);
    return -1;
}

/* The envelope: the format's name, and a version this mailsoak reads. */
static int envelope(const json_t *root, const char *path, char *err, size_t errlen)
{
    const json_t *fmt = json_object_get(root, "format"), *ver = json_object_get(root, "format_version");
    if (!json_is_object(root) || !json_is_string(fmt) || strcmp(json_string_value(fmt), RESULT_FORMAT)) {
        snprintf(err, errlen, "%s: not a mailsoak result file (no \"format\": \"" RESULT_FORMAT "\")", path);
        return -1;
    }
    if (!json_is_integer(ver)) {
        snprintf(err, errlen, "%s: \"format_version\" is missing or not an integer", path);
        return -1;
    }
    long long v = (long long)json_integer_value(ver);
    if (v > RESULT_FORMAT_VERSION) {
        snprintf(err, errlen, "%s: format_version %lld is newer than this mailsoak reads (%d): read it with a "
                 "later mailsoak", path, v, RESULT_FORMAT_VERSION);
        return -1;
    }
    if (v != RESULT_FORMAT_VERSION) {
        snprintf(err, errlen, "%s: format_version %lld is not one this mailsoak reads (%d)", path, v,
                 RESULT_FORMAT_VERSION);
        return -1;
    }
    return 0;
}

int result_load(struct result *r, const char *path, char *err, size_t errlen)
{
    json_error_t je;
    memset(r, 0, sizeof *r);
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (je.line > 0)
            snprintf(err, errlen, "%s:%d: invalid JSON: %s", path, je.line, je.text);
        else
            snprintf(err, errlen, "%s: %s", path, je.text);
        return -1;
    }
    int rc = envelope(root, path, err, errlen) < 0 ? -1 : result_from_json(r, root, path, err, errlen);
    json_decref(root);
    return rc;
}

void result_free(struct result *r)
{
    json_decref(r->root);
    free(r->path);
    free(r->label);
    free(r->version);
    free(r->run_id);
    free(r->start_time);
    free(r->err);
    free(r->hist);
    for (size_t i = 0; i < r->nintervals; i++)
        free(r->intervals[i].err);
    free(r->intervals);
    free(r->stages);
    result_display_free(&r->display);
    memset(r, 0, sizeof *r);
}

int result_complete(const struct result *r, char *err, size_t errlen)
{
    if (!r->missing[0])
        return 0;
    snprintf(err, errlen, "%s: no \"%s\" (a file of an older mailsoak, or not a run's)", r->path ? r->path : "result",
             r->missing);
    return -1;
}

struct words {
    char **v;
    size_t n, cap;
};

/* A value that printable() would change (control bytes, broken UTF-8) cannot be one
 * the run wrote, and config_from_args would print it raw in its complaint. */
static int is_printable(const char *s)
{
    char *p = printable_dup(s, strlen(s));
    int same = !strcmp(p, s);
    free(p);
    return same;
}

static int add_set(struct words *w, const char *sec, const char *key, const char *val)
{
    if (!is_printable(key) || !is_printable(val))
        return -1;
    if (w->n + 2 > w->cap)
        w->v = xrealloc(w->v, (w->cap = w->cap * 2 + 8) * sizeof *w->v);
    size_t len = strlen(sec) + strlen(key) + strlen(val) + 3;
    w->v[w->n++] = xstrdup("--set");
    w->v[w->n] = xmalloc(len);
    snprintf(w->v[w->n++], len, "%s.%s=%s", sec, key, val);
    return 0;
}

/* The settings as --set words: the effective settings the run wrote, read back as
 * it read them. */
int result_settings(const struct result *r, struct config *cfg)
{
    const json_t *config = r->config;
    /* the sweep's (the remedy), and what "kept up" reads: its samples' warm-up and gap, its bound */
    static const char *const other_keys[][2] = { { "run", "sweep_timeout" }, { "run", "settle" }, { "run", "interval" },
                                                 { "smtp", "ramp" }, { "capacity", "queue_growth" }, { "server", "walk_interval" },
                                                 { "server", "queue_interval" }, { NULL, NULL } };
    const json_t *gate = json_object_get(config, "gate"), *v, *item;
    const char *key;
    struct words w = { 0 };
    size_t i;
    int rc = 0;
    if (!json_is_object(gate))
        return -1;
    json_object_foreach((json_t *)gate, key, v) {
        if (json_is_string(v) && add_set(&w, "gate", key, json_string_value(v)) < 0)
            rc = -1;
        json_array_foreach(v, i, item)
            if (json_is_string(item) && add_set(&w, "gate", key, json_string_value(item)) < 0)
                rc = -1;
    }
    for (i = 0; other_keys[i][0]; i++)
        if (json_is_string(v = json_object_get(json_object_get(config, other_keys[i][0]), other_keys[i][1])) &&
            add_set(&w, other_keys[i][0], other_keys[i][1], json_string_value(v)) < 0)
            rc = -1;
    /* a result from before the queue had its own period counted it at the walks */
    const json_t *server = json_object_get(config, "server");
    if (!json_object_get(server, "queue_interval") && json_is_string(v = json_object_get(server, "walk_interval")) &&
        add_set(&w, "server", "queue_interval", json_string_value(v)) < 0)
        rc = -1;
    if (rc == 0)
        rc = config_from_args(cfg, (int)w.n, w.v) == 0 ? 0 : -1;
    for (i = 0; i < w.n; i++)
        free(w.v[i]);
    free(w.v);
    return rc;
}

int result_interval_hists(const struct result *r, size_t i, struct hist *lat, char *err, size_t errlen)
{
    const json_t *e = json_array_get(r->timeline, i), *v;
    const char *name;
    json_object_foreach((json_t *)json_object_get(e, "latency"), name, v)
        for (unsigned k = 0; k < LAT_COUNT; k++)
            if (!strcmp(name, lat_names[k]) && latency_add(&lat[k], v, err, errlen) < 0)
                return -1;
    return 0;
}
