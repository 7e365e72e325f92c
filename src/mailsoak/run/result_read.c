/* result_read: a result file's figures read back as the judgement reads them (see
 * include/run/result_read.h): its counts and outcomes, histograms, error classes,
 * send window, held-back arrivals and its own [gate] settings. */
#include "run/result_read.h"

#include <stdlib.h>
#include <string.h>

#include "analyse/latency.h"
#include "analyse/results.h"
#include "lib/alloc.h"
#include "lib/printable.h"
#include "settings/config.h"

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

/* The file's [gate] settings, and the sweep's (for the remedy), as --set words: the
 * effective settings the run wrote, read back as it read them. */
static int settings_of(const json_t *config, struct config *cfg)
{
    /* the sweep's (the remedy), and what "kept up" reads: its samples' warm-up and gap, its bound */
    static const char *const other_keys[][2] = { { "run", "sweep_timeout" }, { "run", "settle" }, { "run", "interval" },
                                                 { "smtp", "ramp" }, { "capacity", "queue_growth" }, { "server", "walk_interval" }, { NULL, NULL } };
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
    if (rc == 0)
        rc = config_from_args(cfg, (int)w.n, w.v) == 0 ? 0 : -1;
    for (i = 0; i < w.n; i++)
        free(w.v[i]);
    free(w.v);
    return rc;
}

/* The send window from the timeline: the entries in which a shard sent (a merged
 * entry's phase is "send+drain" when the shards were in both), the queue's first and
 * last count within it. */
static void send_window(const json_t *timeline, const struct config *cfg, struct counters *c, struct verdict_window *w)
{
    double iv_s = (double)cfg->interval / 1e9, warm_s = (double)cfg->ramp / 1e9 + iv_s;
    w->walk_s = (double)cfg->server.walk_interval / 1e9;
    struct counters so_far = { 0 };
    size_t i;
    const json_t *e;
    json_array_foreach(timeline, i, e) {
        c->smtp_sessions += json_path_count(e, "smtp_sessions");
        c->pop3_sessions += json_path_count(e, "pop3_sessions");
        const char *phase = json_string_value(json_object_get(e, "phase"));
        if (!phase || !strstr(phase, "send"))
            continue;
        double t = json_path_number_or(e, "t", 0), spool, store;
        so_far.sent += json_path_count(e, "sent");
        so_far.pop3_sessions += json_path_count(e, "pop3_sessions");
        so_far.left_behind += json_path_count(e, "left_behind");
        so_far.empty_visits += json_path_count(e, "empty_visits");
        so_far.full_visits += json_path_count(e, "full_visits");
        so_far.idle_syncs += json_path_count(e, "idle_syncs");
        const json_t *un = json_object_get(e, "unread");
        if (json_is_integer(un)) {
            struct verdict_sample ks = {
                .t = t, .unread = (double)json_integer_value(un), .sent = so_far.sent,
                .visits = so_far.pop3_sessions + so_far.idle_syncs, .left_behind = so_far.left_behind, .empty_visits = so_far.empty_visits,
                .full_visits = so_far.full_visits,
            };
            ks.has_spool = json_path_number(e, "server/spool", &spool) == 0;
            ks.spool = ks.has_spool ? spool : 0;
            ks.has_store = json_path_number(e, "server/store_messages", &store) == 0;
            ks.store = ks.has_store ? store : 0;
            verdict_window_sample(w, &ks, warm_s, iv_s / 2);
        }
        w->seconds = t;
        w->accepted += json_path_count(e, "sent");
        w->read += json_path_count(e, "read");
        if (json_path_number(e, "server/spool", &spool) == 0) {
            if (!w->has_spool) {
                w->has_spool = 1;
                w->spool_t0 = t;
                w->spool_first = spool > 0 ? (uint64_t)spool : 0;
            }
            w->spool_t1 = t;
            w->spool_last = spool > 0 ? (uint64_t)spool : 0;
        }
    }
}

int result_read_judgement(const json_t *root, struct run_result *r, struct config *cfg, struct judge_figures *f,
                          char *err, size_t errlen)
{
    const json_t *s = json_object_get(root, "summary"), *wl = json_object_get(root, "workload");
    if (settings_of(json_object_get(root, "config"), cfg) < 0) {
        snprintf(err, errlen, "its [gate] settings are missing or unreadable (a file of an older mailsoak?)");
        return -1;
    }
    if (gates_from_config(cfg, &r->gates, err, errlen) < 0)
        return -1;
    r->c.sent = json_path_count(s, "sent");
    r->c.read = json_path_count(s, "read");
    r->c.errors = json_path_count(s, "errors");
    r->lo.accepted = r->c.sent;
    r->lo.delivered = json_path_count(s, "delivered");
    r->lo.duplicated = json_path_count(s, "duplicated");
    r->lo.corrupted = json_path_count(s, "corrupted");
    r->lo.lost = json_path_count(s, "lost");
    r->lo.pending = json_path_count(s, "pending");
    for (unsigned k = 0; k < PR_COUNT; k++) {
        char key[64];
        snprintf(key, sizeof key, "pending_%s", pending_reason_names[k]);
        r->lo.pending_by[k] = json_path_count(s, key);
    }
    const json_t *lat = json_object_get(s, "latency");
    for (unsigned k = 0; k < LAT_COUNT; k++) {
        const json_t *one = json_object_get(lat, lat_names[k]);
        char why[200];
        if (one && latency_add(&r->lat[k], one, why, sizeof why) < 0) {
            snprintf(err, errlen, "latency \"%s\": %s", lat_names[k], why);
            return -1;
        }
    }
    const char *cls;
    const json_t *n;
    json_object_foreach((json_t *)json_object_get(s, "errors_by_class"), cls, n) {
        if (r->nerr < ERR_CLASSES_MAX && json_is_integer(n) && json_integer_value(n) > 0) {
            snprintf(r->err[r->nerr].name, sizeof r->err[r->nerr].name, "%s", cls);
            r->err[r->nerr++].count = (uint64_t)json_integer_value(n);
        }
    }
    send_window(json_object_get(root, "timeline"), cfg, &r->c, &r->window);
    const json_t *settled = json_object_get(s, "settled");
    int swept = json_is_boolean(settled);
    *f = (struct judge_figures){
        .c = &r->c, .lo = &r->lo, .lat = r->lat, .err = r->err, .nerr = r->nerr,
        .settled = swept ? json_is_true(settled) : -1, .swept = swept,
        .interrupted = json_is_true(json_object_get(root, "interrupted")),
        .senders = json_path_count(wl, "senders"), .readers = json_path_count(wl, "readers"),
        .elapsed_s = json_path_number_or(root, "elapsed_s", 0), .send = r->window,
        .rate = json_path_number_or(wl, "rate", 0),
        .sweep_timeout_s = (double)cfg->sweep_timeout / 1e9, .settle_s = (double)cfg->settle / 1e9,
        .held = json_path_count(s, "arrivals/late_busy") + json_path_count(s, "arrivals/late_engine") +
                json_path_count(s, "arrivals/never_started"),
        .due = json_path_count(s, "arrivals/due"), .growth_share = cfg->capacity.queue_growth,
    };
    return 0;
}
