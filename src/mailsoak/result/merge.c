/* merge: adds up the result files of the shards of one load into one result file.
 * Each shard owns its users outright (run.shard), so its ledger is complete for
 * them and the shards' outcomes add up exactly: counts, ledger outcomes and errors
 * by class are summed, latency histograms are added bucket by bucket and the
 * percentiles recomputed from the sum (never averaged), timelines are lined up on
 * the wall clock (start_unix_ms + t), and the server's rows are taken once per
 * server rather than once per shard. It reads JSON and writes JSON; it measures
 * nothing. Here: the checks, the summary, the server's rows and the result; the
 * timeline is merge_timeline.c's, adding values up merge_sum.c's, the command
 * cmd/cmd_merge.c's. */
#include "result/merge.h"

#include "result/merge_sum.h"
#include "result/merge_timeline.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "result/latency.h"
#include "result/workload.h"
#include "lib/alloc.h"
#include "lib/json.h"
#include "lib/units.h"

/* Workload keys that belong to one host and add up: two shards of 20 senders are a
 * load of 40. The others must agree. */
static const char *const additive_workload[] = { "senders", "readers", "rate", "messages", NULL };

/* Summary keys that are not counts: of several runs, the largest stands. */
static const char *const max_keys[] = { "sweep_passes", NULL };

/* Times in the summary, in s since the run's start ('*': every member). */
static const char *const summary_times[] = { "lost_examples/*/accepted_s", "lost_examples/*/mailbox_read_s",
                                             "duplicated_examples/*/accepted_s", "corrupted_examples/*/accepted_s",
                                             "late_examples/*/accepted_s", "log_classes/*/examples/*/t", NULL };

static int in_list(const char *key, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(key, *list))
            return 1;
    return 0;
}


/* The value of key when every file agrees on it, else null. */
static json_t *agreed(const struct merge *m, const char *key)
{
    json_t *a = json_object_get(m->in[0].r->root, key);
    for (size_t i = 1; i < m->n; i++)
        if (!a || !json_equal(a, json_object_get(m->in[i].r->root, key)))
            return json_null();
    return a ? json_deep_copy(a) : json_null();
}

/* ---- checks: what may be added up ---- */

static int shard_n(const json_t *root, uint64_t *n)
{
    const json_t *s = json_object_get(root, "shards");
    const json_t *jn = json_object_get(s, "n");
    *n = 1;                          /* a run without shards is the whole load */
    if (!s)
        return 0;
    if (!json_is_integer(jn) || json_integer_value(jn) < 1 || !json_is_array(json_object_get(s, "k")))
        return -1;
    *n = (uint64_t)json_integer_value(jn);
    return 0;
}

/* The parts each file holds, one file per part: the merged "shards" object, or NULL
 * with the reason in err. */
static json_t *check_shards(struct merge *m, int force)
{
    uint64_t n0 = 0;
    json_t *owner = json_object(), *ks = json_array();
    int bad = 0;
    for (size_t i = 0; i < m->n && !bad; i++) {
        const struct result *r = m->in[i].r;
        uint64_t n;
        if (shard_n(r->root, &n) < 0) {
            snprintf(m->err, m->errlen, "%s: \"shards\" must be {\"n\": N, \"k\": [K, ...]}", r->path);
            bad = 1;
            break;
        }
        if (i == 0)
            n0 = n;
        else if (n != n0) {
            if (!force) {
                snprintf(m->err, m->errlen, "shards cut differently: %llu parts in %s, %llu in %s "
                         "(--force merges them anyway)", (unsigned long long)n0, m->in[0].r->path,
                         (unsigned long long)n, r->path);
                bad = 1;
                break;
            }
            merge_warn(m, "shards cut differently (%llu parts in %s, %llu in %s): merged anyway (--force)",
                 (unsigned long long)n0, m->in[0].r->path, (unsigned long long)n, r->path);
        }
        const json_t *k = json_object_get(json_object_get(r->root, "shards"), "k");
        json_t *whole = json_pack("[i]", 0);
        size_t j;
        json_t *kv;
        json_array_foreach(k ? k : whole, j, kv) {
            if (!json_is_integer(kv) || json_integer_value(kv) < 0 || (uint64_t)json_integer_value(kv) >= n) {
                snprintf(m->err, m->errlen, "%s: \"shards\": a part K must be 0 <= K < %llu", r->path,
                         (unsigned long long)n);
                bad = 1;
                break;
            }
            char key[32];
            snprintf(key, sizeof key, "%lld", (long long)json_integer_value(kv));
            const json_t *prev = json_object_get(owner, key);
            if (prev && !force) {
                snprintf(m->err, m->errlen, "shard %s/%llu is in both %s and %s: its users would count twice "
                         "(--force merges them anyway)", key, (unsigned long long)n, json_string_value(prev), r->path);
                bad = 1;
                break;
            }
            if (prev)
                merge_warn(m, "shard %s/%llu is in both %s and %s: merged anyway (--force), its users count twice",
                     key, (unsigned long long)n, json_string_value(prev), r->path);
            json_object_set_new(owner, key, json_string(r->path));
            json_array_append(ks, kv);
        }
        json_decref(whole);
    }
    json_t *out = NULL;
    if (!bad) {
        size_t missing = 0;
        char list[200] = "";
        for (uint64_t k = 0; k < n0 && missing < 1000000; k++) {
            char key[32];
            snprintf(key, sizeof key, "%llu", (unsigned long long)k);
            if (json_object_get(owner, key))
                continue;
            if (strlen(list) + strlen(key) + 8 < sizeof list)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", missing ? ", " : "", key);
            missing++;
        }
        if (missing)
            merge_warn(m, "%zu of %llu shards missing (%s%s): the merged result covers only part of the users",
                 missing, (unsigned long long)n0, list, missing > 20 ? ", ..." : "");
        out = json_pack("{s:I, s:O, s:b}", "n", (json_int_t)n0, "k", ks, "complete", !missing);
    }
    json_decref(owner);
    json_decref(ks);
    return out;
}

/* Start times and the interval: what lining the timelines up needs. */
static int check_clocks(struct merge *m)
{
    uint64_t iv0 = 0;
    for (size_t i = 0; i < m->n; i++) {
        const struct result *r = m->in[i].r;
        const json_t *s = json_object_get(r->root, "start_unix_ms");
        if (!json_is_integer(s) || json_integer_value(s) < 0 || json_integer_value(s) > (1LL << 53)) {
            snprintf(m->err, m->errlen, "%s: no \"start_unix_ms\" (a file of an older mailsoak?): "
                                        "its timeline cannot be lined up with the others", r->path);
            return -1;
        }
        long long ms = (long long)json_integer_value(s);
        if (i == 0 || ms < m->start_ms)
            m->start_ms = ms;
        const char *ivs = json_string_value(json_path_get(r->config, "run/interval"));
        const char *why;
        uint64_t iv;
        if (!ivs || parse_duration_ns(ivs, &iv, &why) < 0 || iv == 0) {
            snprintf(m->err, m->errlen, "%s: config.run.interval missing or not a duration", r->path);
            return -1;
        }
        if (i && iv != iv0)
            merge_warn(m, "%s: interval %s differs from the first file's: the timeline uses the longest", r->path, ivs);
        if (iv > iv0)
            iv0 = iv;
    }
    m->iv = (double)iv0 / 1e9;
    for (size_t i = 0; i < m->n; i++)
        m->in[i].off =
            (double)(json_integer_value(json_object_get(m->in[i].r->root, "start_unix_ms")) - m->start_ms) / 1e3;
    return 0;
}

/* Adds off to the numbers at path ('*' stands for every member of an array or
 * object) below o. */
static void shift_times(json_t *o, const char *path, double off)
{
    const char *slash = strchr(path, '/');
    char head[64];
    snprintf(head, sizeof head, "%.*s", slash ? (int)(slash - path) : (int)strlen(path), path);
    if (!slash && !strcmp(head, "*") && json_is_array(o)) {
        size_t i;
        json_t *v;
        json_array_foreach(o, i, v)
            if (json_is_number(v))
                json_array_set_new(o, i, json_real(round((json_number_value(v) + off) * 1000) / 1000));
        return;
    }
    if (!slash) {
        json_t *v = json_object_get(o, head);
        if (json_is_number(v))
            json_object_set_new(o, head, json_real(round((json_number_value(v) + off) * 1000) / 1000));
        return;
    }
    if (strcmp(head, "*")) {
        shift_times(json_object_get(o, head), slash + 1, off);
        return;
    }
    size_t i;
    const char *k;
    json_t *v;
    if (json_is_array(o))
        json_array_foreach(o, i, v)
            shift_times(v, slash + 1, off);
    else if (json_is_object(o))
        json_object_foreach(o, k, v)
            shift_times(v, slash + 1, off);
}

/* ---- the server's rows: once per server ---- */

/* [server] settings that name things on the host of the run itself (the others,
 * server.probe, name a probe by its URL, the same from every host). */
static const char *const local_server_keys[] = { "pid", "pidfile", "process", "spool_dir", "store_dir", "log", NULL };

/* Which server a file sampled: its [server] settings, and its host when they name
 * anything local. */
static json_t *server_identity(const struct result *r)
{
    const json_t *sc = json_object_get(r->config, "server");
    int local = 0;
    for (const char *const *k = local_server_keys; *k; k++) {
        const json_t *v = json_object_get(sc, *k);
        local |= json_is_array(v) ? json_array_size(v) > 0 : json_is_string(v) && *json_string_value(v);
    }
    return json_pack("{s:O?, s:O?}", "host", local ? json_object_get(r->root, "host") : NULL, "server", sc);
}

/* Every shard that sampled the server saw the same server: of the files that name
 * the same server (the same [server] settings on the same host, or the same
 * probes), the one with the most samples speaks for it; different servers add up. */
static size_t pick_servers(struct merge *m)
{
    json_t *best = json_object();    /* identity -> index of the input */
    for (size_t i = 0; i < m->n; i++) {
        const struct result *r = m->in[i].r;
        if (json_path_number_or(m->in[i].summary, "server_samples", 0) <= 0)
            continue;
        json_t *id = server_identity(r);
        char *key = json_dumps(id, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(id);
        const json_t *prev = json_object_get(best, key);
        if (!prev || json_path_number_or(m->in[i].summary, "server_samples", 0) >
                         json_path_number_or(m->in[json_integer_value(prev)].summary, "server_samples", 0))
            json_object_set_new(best, key, json_integer((json_int_t)i));
        free(key);
    }
    const char *key;
    json_t *val;
    json_object_foreach(best, key, val)
        m->in[json_integer_value(val)].server = 1;
    size_t n = json_object_size(best);
    json_decref(best);
    return n;
}

static int is_server_key(const struct result *r, const char *key)
{
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(r->root, "server_keys"), i, v)
        if (json_is_string(v) && !strcmp(json_string_value(v), key))
            return 1;
    return 0;
}

/* ---- summary ---- */

static json_t *merge_summary(struct merge *m, double duration_s, double elapsed_s, size_t nservers)
{
    json_t *out = json_object();
    json_t **v = xcalloc(m->n, sizeof *v);
    /* the load's keys, in the order they first appear */
    for (size_t i = 0; i < m->n; i++) {
        const char *key;
        json_t *val;
        json_object_foreach(m->in[i].summary, key, val) {
            if (json_object_get(out, key) || is_server_key(m->in[i].r, key) || !strcmp(key, "latency"))
                continue;
            int conflict = 0;
            size_t have = 0;
            for (size_t j = 0; j < m->n; j++)
                have += (v[j] = json_object_get(m->in[j].summary, key)) != NULL;
            if (have < m->n) {
                merge_warn(m, "summary.%s: in %zu of %zu files only: not measured in the merge", key, have, m->n);
                json_object_set_new(out, key, json_null());
                continue;
            }
            if (in_list(key, max_keys)) {
                json_t *big = NULL;
                for (size_t j = 0; j < m->n; j++)
                    if (json_is_number(v[j]) && (!big || json_number_value(v[j]) > json_number_value(big)))
                        big = v[j];
                json_object_set_new(out, key, big ? json_deep_copy(big) : json_null());
                continue;
            }
            json_object_set_new(out, key, merge_combine(v, m->n, &conflict));
            if (conflict)
                merge_warn(m, "summary.%s: the files disagree and it cannot be added up: left out", key);
        }
    }
    double sent = json_path_number_or(out, "sent", 0), read = json_path_number_or(out, "read", 0);
    json_object_set_new(out, "rate_in", json_real(duration_s > 0 ? sent / duration_s : 0));
    json_object_set_new(out, "rate_out", json_real(elapsed_s > 0 ? read / elapsed_s : 0));

    struct lat_sum ls = { .names = json_object() };
    for (size_t i = 0; i < m->n; i++) {
        const json_t *lat = json_object_get(m->in[i].summary, "latency");
        if (lat && lat_sum_add(&ls, lat, m->in[i].r->path, m->err, m->errlen) < 0) {
            lat_sum_free(&ls);
            json_decref(out);
            free(v);
            return NULL;
        }
    }
    json_object_set_new(out, "latency", lat_sum_json(&ls));
    lat_sum_free(&ls);

    /* the server's keys: from the files that speak for a server; when none does,
     * the first file's (its "not measured" nulls) */
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->in[i].server || (!nservers && i == 0))
            v[k++] = m->in[i].summary;
    for (size_t i = 0; i < m->n; i++) {
        size_t j;
        const json_t *kv;
        json_array_foreach(json_object_get(m->in[i].r->root, "server_keys"), j, kv) {
            const char *key = json_string_value(kv);
            if (!key || json_object_get(out, key))
                continue;
            json_t **sv = xcalloc(k, sizeof *sv);
            for (size_t x = 0; x < k; x++)
                sv[x] = json_object_get(v[x], key);
            int conflict = 0;
            json_object_set_new(out, key, merge_combine(sv, k, &conflict));
            free(sv);
        }
    }
    free(v);
    return out;
}

/* Each server's own rows ("servers": by the label of its source, when the runs had
 * probes or several sources), from the files that speak for a server, their times
 * on the merged clock; a label met twice gets its file's number. */
static json_t *merge_servers(const struct merge *m)
{
    json_t *out = json_object();
    for (size_t i = 0; i < m->n; i++) {
        const json_t *sv = json_object_get(m->in[i].r->root, "servers");
        if (!m->in[i].server || !json_is_object(sv))
            continue;
        const char *label;
        json_t *one;
        json_object_foreach((json_t *)sv, label, one) {
            json_t *c = json_deep_copy(one);
            shift_times(c, "window_s/*", m->in[i].off);
            char name[300];
            snprintf(name, sizeof name, "%s", label);
            if (json_object_get(out, name))
                snprintf(name, sizeof name, "%s#%zu", label, i + 1);
            json_object_set_new(out, name, c);
        }
    }
    if (!json_object_size(out)) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* ---- the rest of the file ---- */

static int cmp_event(const void *a, const void *b)
{
    double x = json_path_number_or(*(json_t *const *)a, "t", 0), y = json_path_number_or(*(json_t *const *)b, "t", 0);
    return x < y ? -1 : x > y;
}

/* The server's events (crashes, restarts) from the files that speak for a server. */
static json_t *merge_events(const struct merge *m)
{
    size_t total = 0;
    for (size_t i = 0; i < m->n; i++)
        total += m->in[i].server && m->in[i].r->events ? json_array_size(m->in[i].r->events) : 0;
    json_t **ev = xcalloc(total, sizeof *ev);
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (!m->in[i].server)
            continue;
        size_t j;
        const json_t *e;
        json_array_foreach(m->in[i].r->events, j, e) {
            json_t *c = json_deep_copy(e);
            double t;
            if (json_is_object(c) && json_path_number(c, "t", &t) == 0)
                json_object_set_new(c, "t", json_real(round((t + m->in[i].off) * 1000) / 1000));
            ev[n++] = c;
        }
    }
    qsort(ev, n, sizeof *ev, cmp_event);
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(out, ev[i]);
    free(ev);
    return out;
}

/* The shards' settings: a key on which they differ holds each value, in file order. */
static json_t *merge_config(const struct merge *m, const json_t *shards)
{
    json_t *out = json_deep_copy(m->in[0].r->config ? m->in[0].r->config : json_object());
    const char *sec;
    json_t *keys;
    json_object_foreach(out, sec, keys) {
        const char *key;
        json_t *val;
        json_object_foreach(keys, key, val) {
            json_t *all = json_array();
            for (size_t i = 0; i < m->n; i++) {
                const json_t *x = json_object_get(json_object_get(m->in[i].r->config, sec), key);
                size_t j;
                const json_t *y;
                int seen = 0;
                json_array_foreach(all, j, y)
                    seen |= json_equal(x ? x : json_null(), y);
                if (!seen)
                    json_array_append(all, x ? (json_t *)x : json_null());
            }
            if (json_array_size(all) > 1)
                json_object_set(keys, key, all);
            json_decref(all);
        }
    }
    /* "0,1/2": the parts this file holds */
    char buf[256] = "";
    size_t i;
    const json_t *k;
    json_array_foreach(json_object_get(shards, "k"), i, k)
        if (strlen(buf) < sizeof buf - 40)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%lld", i ? "," : "",
                     (long long)json_integer_value(k));
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "/%lld",
             (long long)json_integer_value(json_object_get(shards, "n")));
    if (json_is_object(json_object_get(out, "run")))
        json_object_set_new(json_object_get(out, "run"), "shard", json_string(buf));
    return out;
}

static json_t *merge_workload(const struct merge *m)
{
    json_t *out = json_deep_copy(m->in[0].r->workload ? m->in[0].r->workload : json_object());
    json_t **v = xcalloc(m->n, sizeof *v);
    for (const char *const *k = additive_workload; *k; k++) {
        if (!json_object_get(out, *k))
            continue;
        for (size_t i = 0; i < m->n; i++)
            v[i] = json_object_get(m->in[i].r->workload, *k);
        int conflict = 0;
        json_object_set_new(out, *k, merge_combine(v, m->n, &conflict));
    }
    free(v);
    return out;
}

static json_t *joined(const struct merge *m, const char *key, const char *sep)
{
    char buf[1024] = "";
    for (size_t i = 0; i < m->n; i++) {
        const char *s = json_string_value(json_object_get(m->in[i].r->root, key));
        if (s && strlen(buf) + strlen(s) + 2 < sizeof buf && !strstr(buf, s))
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? sep : "", s);
    }
    return json_string(buf);
}

json_t *merge_results(const struct result *rv, size_t nv, int force, const char *label, char *err, size_t errlen,
                      char *warnbuf, size_t warnlen)
{
    struct merge m = { .n = nv, .err = err, .errlen = errlen, .warn = warnbuf, .warnlen = warnlen };
    json_t *root = NULL, *shards = NULL;
    warnbuf[0] = 0;
    err[0] = 0;
    if (nv == 0) {
        snprintf(err, errlen, "no result files given");
        return NULL;
    }
    m.in = xcalloc(nv, sizeof *m.in);
    for (size_t i = 0; i < nv; i++)
        m.in[i].r = &rv[i];
    char msg[2600];
    if (result_workload_check(rv, nv, additive_workload, msg, sizeof msg) < 0) {
        if (!force) {
            snprintf(err, errlen, "%s (--force merges them anyway)", msg);
            goto out;
        }
        merge_warn(&m, "%s: merged anyway (--force)", msg);
    }
    if (!(shards = check_shards(&m, force)) || check_clocks(&m) < 0)
        goto out;
    for (size_t i = 0; i < m.n; i++) {
        m.in[i].summary = rv[i].summary ? json_deep_copy(rv[i].summary) : json_object();
        for (const char *const *p = summary_times; *p; p++)
            shift_times(m.in[i].summary, *p, m.in[i].off);
    }
    size_t nservers = pick_servers(&m);
    double duration = 0, elapsed = 0;
    int interrupted = 0;
    for (size_t i = 0; i < m.n; i++) {
        duration = fmax(duration, m.in[i].off + json_path_number_or(m.in[i].r->root, "duration_s", 0));
        elapsed = fmax(elapsed, m.in[i].off + json_path_number_or(m.in[i].r->root, "elapsed_s", 0));
        interrupted |= json_is_true(json_object_get(m.in[i].r->root, "interrupted"));
    }
    json_t *summary = merge_summary(&m, duration, elapsed, nservers);
    json_t *timeline = summary ? merge_timeline(&m) : NULL;
    if (!timeline) {
        json_decref(summary);
        goto out;
    }
    root = json_object();
    json_object_set_new(root, "format", json_string(RESULT_FORMAT));
    json_object_set_new(root, "format_version", json_integer(RESULT_FORMAT_VERSION));
    json_object_set_new(root, "version", joined(&m, "version", "+"));
    json_object_set_new(root, "label", label && *label ? json_string(label) : joined(&m, "label", "+"));
    json_object_set_new(root, "run_id", joined(&m, "run_id", "+"));
    json_object_set_new(root, "seed", agreed(&m, "seed"));
    for (size_t i = 0; i < m.n; i++)
        if (json_path_number_or(m.in[i].r->root, "start_unix_ms", 0) == (double)m.start_ms) {
            json_object_set(root, "start_time", json_object_get(m.in[i].r->root, "start_time"));
            break;
        }
    json_object_set_new(root, "start_unix_ms", json_integer((json_int_t)m.start_ms));
    json_object_set_new(root, "host", joined(&m, "host", "+"));
    json_object_set(root, "shards", shards);
    json_object_set(root, "histogram", json_object_get(m.in[0].r->root, "histogram"));
    json_object_set_new(root, "duration_s", json_real(duration));
    json_object_set_new(root, "elapsed_s", json_real(elapsed));
    json_object_set_new(root, "interrupted", json_boolean(interrupted));
    json_object_set_new(root, "workload", merge_workload(&m));
    json_object_set_new(root, "config", merge_config(&m, shards));
    json_t *from = json_array();
    for (size_t i = 0; i < m.n; i++) {
        const json_t *r = m.in[i].r->root;
        json_array_append_new(from, json_pack("{s:s, s:O?, s:O?, s:O?, s:O?, s:f, s:b}", "file", m.in[i].r->path,
                                              "run_id", json_object_get(r, "run_id"),
                                              "host", json_object_get(r, "host"), "shards", json_object_get(r, "shards"),
                                              "start_unix_ms", json_object_get(r, "start_unix_ms"),
                                              "offset_s", m.in[i].off, "server", m.in[i].server));
    }
    json_object_set_new(root, "merged_from", from);
    json_t *skeys = json_array();
    for (size_t i = 0; i < m.n; i++) {
        size_t j;
        json_t *k;
        json_array_foreach(json_object_get(m.in[i].r->root, "server_keys"), j, k) {
            size_t x;
            const json_t *y;
            int seen = 0;
            json_array_foreach(skeys, x, y)
                seen |= json_equal(k, y);
            if (!seen)
                json_array_append(skeys, k);
        }
    }
    json_object_set_new(root, "server_keys", skeys);
    json_t *servers = merge_servers(&m);
    if (servers)
        json_object_set_new(root, "servers", servers);
    json_object_set_new(root, "summary", summary);
    json_object_set_new(root, "timeline", timeline);
    json_object_set_new(root, "events", merge_events(&m));
out:
    json_decref(shards);
    for (size_t i = 0; i < m.n; i++)
        json_decref(m.in[i].summary);
    free(m.in);
    return root;
}
