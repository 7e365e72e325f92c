/* run_json: a run's result (result/run_result.h) as the result file's JSON: the
 * envelope (format, version, ids, clocks, workload, fill, settings), the summary,
 * the server's side, the size ladder, the verdict, the timeline and the events.
 * A writer only: every number here was measured and judged elsewhere; what it
 * writes, result/result.c reads. */
#include "result/run_json.h"

#include <stdio.h>
#include <string.h>

#include "lib/version.h"
#include "result/latency.h"
#include "result/probe_output.h"
#include "result/result.h"
#include "result/verdict_output.h"
#include "settings/config.h"

/* A message's trail: the cause, the line that shows it, the queue it was last put in,
 * the lines (printable already) and how many were left out. */
static json_t *trail_json(const struct example_trail *tr)
{
    json_t *a = json_array();
    for (size_t i = 0; i < tr->n; i++)
        json_array_append_new(a, json_string(tr->lines[i]));
    return json_pack("{s:s, s:s?, s:s, s:s, s:I, s:I, s:o}", "cause", trail_cause_names[tr->cause],
                     "cause_line", tr->cause_line, "last_queue", tr->last_queue, "queue_left", tr->left, "lines",
                     (json_int_t)tr->nlines, "lines_left_out", (json_int_t)tr->skipped, "trail", a);
}

static json_t *examples_json(const struct run_result *r, int kind)
{
    json_t *a = json_array();
    for (unsigned i = 0; i < r->nexamples[kind]; i++) {
        const struct message_example *x = &r->examples[kind][i];
        char id[64], mid[80], acc[40], rd[40];
        msg_ids(r, x->seq, id, sizeof id, mid, sizeof mid);
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:I}", "id", id, "message_id", mid,
                              "queue_id", x->queue_id, "mailbox", x->mailbox,
                              "accepted", run_time(r, x->accepted_ms, acc, sizeof acc),
                              "accepted_s", x->accepted_ms / 1e3, "reads", (json_int_t)x->reads);
        if (x->compacted) {          /* its entry was compacted: what it held is gone */
            json_object_set_new(o, "accepted", json_string("not kept (compacted)"));
            json_object_set_new(o, "accepted_s", json_null());
            json_object_set_new(o, "compacted", json_true());
        }
        if (kind == EX_LOST) {
            json_object_set_new(o, "mailbox_read", json_string(run_time(r, x->read_ms, rd, sizeof rd)));
            json_object_set_new(o, "mailbox_read_s", json_real(x->read_ms / 1e3));
        }
        if (x->differs)
            json_object_set_new(o, "differs", json_string(x->differs));
        /* null: no log was read, so there is no trail to show */
        json_object_set_new(o, "server_evidence", x->has_trail ? trail_json(&x->trail) : json_null());
        json_array_append_new(a, o);
    }
    return a;
}

/* The size ladder: every rung, the largest that came back intact, the failures. */
static json_t *ladder_json(const struct ladder_result *lr)
{
    json_t *a = json_array(), *fails = json_array();
    for (unsigned i = 0; i < lr->n; i++) {
        const struct ladder_rung_result *x = &lr->v[i];
        uint64_t unanswered = x->tried > x->accepted + x->refused ? x->tried - x->accepted - x->refused : 0;
        json_array_append_new(a, json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s}",
                                           "size", (json_int_t)x->size, "tried", (json_int_t)x->tried,
                                           "refused", (json_int_t)x->refused, "unanswered", (json_int_t)unanswered,
                                           "accepted", (json_int_t)x->accepted, "delivered", (json_int_t)x->delivered,
                                           "lost", (json_int_t)x->lost, "corrupted", (json_int_t)x->corrupted,
                                           "duplicated", (json_int_t)x->duplicated, "pending", (json_int_t)x->pending,
                                           "reply", x->reply));
        if (x->lost + x->corrupted)
            json_array_append_new(fails, json_pack("{s:I, s:I, s:I}", "size", (json_int_t)x->size, "accepted",
                                                   (json_int_t)x->accepted, "not_intact",
                                                   (json_int_t)(x->lost + x->corrupted)));
    }
    return json_pack("{s:o, s:o, s:o, s:o}", "size_advertised",
                     lr->advertised ? json_integer((json_int_t)lr->advertised) : json_null(), "rungs", a,
                     "largest_intact", lr->largest >= 0 ? json_integer((json_int_t)lr->v[lr->largest].size) : json_null(),
                     "failures", fails);
}

static json_t *config_json(const struct config *cfg)
{
    json_t *root = json_object();
    for (const struct opt *o = config_opts; o->key; o++) {
        json_t *sec = json_object_get(root, o->section);
        if (!sec) {
            sec = json_object();
            json_object_set_new(root, o->section, sec);
        }
        if (o->type == OPT_LIST) {
            const struct strlist *l = (const struct strlist *)((const char *)cfg + o->off);
            json_t *a = json_array();
            for (size_t i = 0; i < l->n; i++)
                json_array_append_new(a, json_string(l->v[i]));
            json_object_set_new(sec, o->key, a);
        } else {
            char buf[512];
            json_object_set_new(sec, o->key, json_string(opts_format(o, cfg, buf, sizeof buf)));
        }
    }
    return root;
}

static const char *cfgval(const struct config *cfg, const char *section, const char *key, char *buf, size_t n)
{
    for (const struct opt *o = config_opts; o->key; o++)
        if (!strcmp(o->section, section) && !strcmp(o->key, key))
            return opts_format(o, cfg, buf, n);
    return "";
}

/* The keys that make two runs comparable; `mailsoak compare` refuses to mix them. */
static json_t *workload_json(const struct run_result *r)
{
    const struct config *cfg = r->cfg;
    char a[64], b[64], c[64], d[64], e[64], f[64];
    return json_pack("{s:I, s:I, s:s, s:s, s:s, s:f, s:I, s:I, s:s, s:I, s:s, s:s}",
                     "senders", (json_int_t)cfg->senders, "readers", (json_int_t)cfg->readers,
                     "msgs_per_conn", cfgval(cfg, "smtp", "msgs_per_conn", a, sizeof a),
                     "size", cfgval(cfg, "smtp", "size", b, sizeof b),
                     "size_dist", cfgval(cfg, "smtp", "size_dist", e, sizeof e), "rate", cfg->rate,
                     "max_per_session", (json_int_t)cfg->max_per_session,
                     "users", (json_int_t)r->users_total,
                     "duration", cfgval(cfg, "run", "duration", c, sizeof c),
                     "messages", (json_int_t)cfg->messages,
                     "pipelining", cfgval(cfg, "smtp", "pipelining", d, sizeof d),
                     "fill", cfgval(cfg, "fill", "messages", f, sizeof f));
}

/* Open-loop arrivals (smtp.rate): how many were due in the send phase, how many
 * the tester held back and why (never_started: due more than late_after before
 * the end, and not started); null without a rate. */
static json_t *arrivals_json(const struct run_result *r)
{
    const struct config *cfg = r->cfg;
    char a[32];
    if (!(cfg->rate > 0))
        return json_null();
    return json_pack("{s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:b}", "process",
                     cfgval(cfg, "smtp", "arrivals", a, sizeof a), "rate", cfg->rate, "due",
                     (json_int_t)(r->c.arrivals + r->arrivals_owed), "started", (json_int_t)r->c.arrivals,
                     "late_busy", (json_int_t)r->c.late_busy, "late_engine", (json_int_t)r->c.late_engine,
                     "never_started", (json_int_t)r->arrivals_held, "tester_limited", r->verdict.tester_limited);
}

/* The file's envelope: format, version, ids, clocks, the histogram's key, the
 * workload, the fill and the settings. */
static void envelope_json(json_t *root, const struct run_result *r)
{
    json_object_set_new(root, "format", json_string(RESULT_FORMAT));
    json_object_set_new(root, "format_version", json_integer(RESULT_FORMAT_VERSION));
    json_object_set_new(root, "version", json_string(mailsoak_version));
    json_object_set_new(root, "label", json_string(run_label(r->cfg)));
    json_object_set_new(root, "run_id", json_string(r->run_id));
    json_object_set_new(root, "seed", json_integer((json_int_t)r->seed));
    json_object_set_new(root, "start_time", json_string(r->start_time));
    /* the timeline's t counts from here: merge lines shards up on this wall clock */
    json_object_set_new(root, "start_unix_ms", json_integer((json_int_t)r->start_unix_ms));
    json_object_set_new(root, "host", json_string(r->host));
    json_object_set_new(root, "shards", json_pack("{s:I, s:[I]}", "n", (json_int_t)r->cfg->shard.n,
                                                  "k", (json_int_t)r->cfg->shard.k));
    /* what the "buckets" of every latency's "hist" mean, so a file explains itself */
    json_object_set_new(root, "histogram",
                        json_pack("{s:s, s:i, s:s}", "unit", "ns", "sub_bits", HIST_SUB_BITS, "buckets",
                                  "runs 'INDEX:COUNT,COUNT,...' of consecutive buckets; index i < 128 holds the "
                                  "value i; above, e = (i - 128) / 64 + 7, m = (i - 128) % 64 + 64, bucket i holds "
                                  "m << (e - 6) .. ((m + 1) << (e - 6)) - 1; a percentile is the midpoint of its "
                                  "bucket, within min and max"));
    json_object_set_new(root, "duration_s", json_real(r->duration_s));
    json_object_set_new(root, "elapsed_s", json_real(r->elapsed_s));
    json_object_set_new(root, "interrupted", json_boolean(r->interrupted));
    json_object_set_new(root, "workload", workload_json(r));
    if (r->fill.on)
        json_object_set_new(root, "fill", fill_json(&r->fill));
    json_object_set_new(root, "config", config_json(r->cfg));

}

/* The summary's counts and the ledger's outcomes, with their examples. */
static void summary_outcomes(json_t *s, const struct run_result *r)
{
    const struct ledger_outcome *lo = &r->lo;
    json_object_set_new(s, "sent", json_integer((json_int_t)r->c.sent));
    json_object_set_new(s, "read", json_integer((json_int_t)r->c.read));
    json_object_set_new(s, "errors", json_integer((json_int_t)r->c.errors));
    json_object_set_new(s, "rejected", json_integer((json_int_t)r->c.rejected));
    json_object_set_new(s, "rate_in", json_real(r->duration_s > 0 ? (double)r->c.sent / r->duration_s : 0));
    json_object_set_new(s, "rate_out", json_real(r->elapsed_s > 0 ? (double)r->c.read / r->elapsed_s : 0));
    json_t *ebc = json_object(), *exs = json_object();
    for (unsigned i = 0; i < r->nerr; i++) {
        json_object_set_new(ebc, r->err[i].name, json_integer((json_int_t)r->err[i].count));
        json_t *a = json_array();
        for (unsigned k = 0; k < r->ex[i].n; k++)
            json_array_append_new(a, json_string(r->ex[i].text[k]));
        json_object_set_new(exs, r->err[i].name, a);
    }
    json_object_set_new(s, "errors_by_class", ebc);
    json_t *cex = json_array();
    for (unsigned k = 0; k < r->corrupt.n; k++)
        json_array_append_new(cex, json_string(r->corrupt.text[k]));
    json_object_set_new(s, "corruption_examples", cex);
    json_object_set_new(s, "error_examples", exs);
    json_object_set_new(s, "delivered", json_integer((json_int_t)lo->delivered));
    json_object_set_new(s, "lost", json_integer((json_int_t)lo->lost));
    json_object_set_new(s, "duplicated", json_integer((json_int_t)lo->duplicated));
    json_object_set_new(s, "corrupted", json_integer((json_int_t)lo->corrupted));
    json_object_set_new(s, "pending", json_integer((json_int_t)lo->pending));
    for (unsigned k = 0; k < PR_COUNT; k++) {
        char key[32];
        snprintf(key, sizeof key, "pending_%s", pending_reason_names[k]);
        json_object_set_new(s, key, json_integer((json_int_t)lo->pending_by[k]));
    }
    for (int k = 0; k < EX_KINDS; k++) {
        char key[32];
        snprintf(key, sizeof key, "%s_examples", example_kind_names[k]);
        json_object_set_new(s, key, examples_json(r, k));
    }
    /* null: no sweep was needed (or asked for) */
    json_object_set_new(s, "settled", r->swept ? json_boolean(r->settled) : json_null());
    json_object_set_new(s, "sweep_passes", json_integer((json_int_t)r->sweep_passes));
    json_object_set_new(s, "unattributed", json_integer((json_int_t)r->c.corrupt_unattributed));
    json_object_set_new(s, "empty_body_as_line", json_integer((json_int_t)r->c.empty_body_as_line));
    json_object_set_new(s, "unconfirmed", json_integer((json_int_t)lo->unconfirmed));
    json_object_set_new(s, "late", json_integer((json_int_t)lo->late));
    json_object_set_new(s, "foreign", json_integer((json_int_t)r->c.foreign));
    json_object_set_new(s, "stale", json_integer((json_int_t)r->c.stale));
    json_object_set_new(s, "peeked", json_integer((json_int_t)r->c.peeked));
    /* the ledger's compaction: entries dropped (each delivered exactly once), and
     * of those, the ones found again and revived (a copy read after it settled) */
    json_object_set_new(s, "ledger_compacted", json_integer((json_int_t)r->ledger_compacted));
    json_object_set_new(s, "ledger_revived", json_integer((json_int_t)r->ledger_revived));
}

/* What some runs add: IMAP's readers and push, the mail clients' polls (at the
 * root), smtp.retry, TLS, the arrivals and the latencies. */
static void summary_extras(json_t *root, json_t *s, const struct run_result *r)
{
    const struct ledger_outcome *lo = &r->lo;
    if (r->cfg->reader_protocol == READERS_IMAP) {
        /* the idle model: the messages whose push the latencies leave out (busy:
         * the client's delay) or that no EXISTS announced; summed by merge */
        json_object_set_new(s, "push_busy", json_integer((json_int_t)r->c.push_busy));
        json_object_set_new(s, "push_missed", json_integer((json_int_t)r->c.push_missed));
        /* the readers' commands and the round trips they took (imap.pipelining) */
        json_object_set_new(s, "imap_commands", json_integer((json_int_t)r->c.imap_commands));
        json_object_set_new(s, "imap_round_trips", json_integer((json_int_t)r->c.imap_rounds));
        json_object_set_new(root, "imap", json_pack("{s:s, s:I, s:I, s:I, s:I}", "models", r->cfg->imap_models,
                                                    "idle_users", (json_int_t)r->imap_users[IMAP_IDLE],
                                                    "poll_users", (json_int_t)r->imap_users[IMAP_POLL],
                                                    "webmail_users", (json_int_t)r->imap_users[IMAP_WEBMAIL],
                                                    "drain_users", (json_int_t)r->imap_users[IMAP_DRAIN]));
    }
    struct poll_view pv;
    if (poll_view(r, &pv))
        json_object_set_new(root, "poll", json_pack("{s:I, s:f, s:f, s:I, s:f, s:I, s:I, s:b, s:b, s:I}", "users",
                                                    (json_int_t)pv.users, "interval_s", pv.interval_s,
                                                    "target_login_rate", pv.target, "logins", (json_int_t)r->c.poll_logins,
                                                    "login_rate", pv.achieved, "polls", (json_int_t)r->c.polls,
                                                    "late", (json_int_t)r->c.polls_late, "tester_limited",
                                                    pv.tester_limited, "leave", r->cfg->pop3_leave,
                                                    "keep_polls", (json_int_t)r->cfg->keep_polls));
    if (r->cfg->smtp_retry) {
        /* recipients deferred and sent again; of the messages delivered, those after
         * more than one try and their tries; refused with a 5xx; given up */
        json_object_set_new(s, "deferrals", json_integer((json_int_t)r->c.deferrals));
        json_object_set_new(s, "deferred_attempts", json_integer((json_int_t)lo->deferred));
        json_object_set_new(s, "retried", json_integer((json_int_t)lo->retried));
        json_object_set_new(s, "retried_tries", json_integer((json_int_t)lo->retried_tries));
        json_object_set_new(s, "bounced", json_integer((json_int_t)r->c.bounced));
        json_object_set_new(s, "retry_expired", json_integer((json_int_t)r->c.retry_expired));
        json_object_set_new(s, "retry_dropped", json_integer((json_int_t)r->c.retry_dropped));
        json_object_set_new(s, "retry_left", json_integer((json_int_t)r->retry_left));
    }
    json_object_set_new(s, "tls_handshakes", json_integer((json_int_t)r->c.tls_handshakes));
    json_object_set_new(s, "tls_resumed", json_integer((json_int_t)r->c.tls_resumed));
    json_object_set_new(s, "arrivals", arrivals_json(r));
    json_t *lat = json_object();
    for (unsigned k = 0; k < LAT_COUNT; k++)
        if (r->lat[k].count)
            json_object_set_new(lat, lat_names[k], latency_json(&r->lat[k]));
    json_object_set_new(s, "latency", lat);
}

/* {label: {"url", "host", "clock_offset_ms", "clock_error_ms", "pulls",
 * "pull_errors", "last_error", "restarts", "gaps" (probes only), the summary keys
 * of that source alone, "window_s": [first, last]}}. */
static json_t *servers_json(const struct run_server *sv)
{
    json_t *o = json_object();
    for (size_t i = 0; i < sv->n; i++) {
        const struct run_source *x = &sv->v[i];
        json_t *j = json_object();
        if (x->remote) {
            json_object_set_new(j, "url", json_string(x->url));
            json_object_set_new(j, "host", json_string(x->host));
            json_object_set_new(j, "clock_offset_ms", json_real(x->clock_offset_ms));
            json_object_set_new(j, "clock_error_ms", json_real(x->clock_error_ms));
            json_object_set_new(j, "pulls", json_integer((json_int_t)x->pulls));
            json_object_set_new(j, "pull_errors", json_integer((json_int_t)x->pull_errors));
            json_object_set_new(j, "last_error", x->last_error ? json_string(x->last_error) : json_null());
            json_object_set_new(j, "restarts", json_integer((json_int_t)x->restarts));
            json_object_set_new(j, "gaps", json_integer((json_int_t)x->gaps));
        }
        probe_json_summary(&x->summary, j);
        json_object_set_new(j, "window_s", json_pack("[f, f]", x->window_s[0], x->window_s[1]));
        json_object_set_new(o, x->label, j);
    }
    return o;
}

json_t *run_result_json(const struct run_result *r)
{
    json_t *root = json_object();
    envelope_json(root, r);
    json_t *s = json_object();
    summary_outcomes(s, r);
    summary_extras(root, s, r);
    /* The keys the collector adds are the server's, not the load's: merge takes
     * them once per server instead of adding them up over the shards. */
    json_t *load_part = json_copy(s), *server_keys = json_array();
    probe_json_summary(&r->server.total, s);
    const char *key;
    json_t *val;
    json_object_foreach(s, key, val)
        if (!json_object_get(load_part, key))
            json_array_append_new(server_keys, json_string(key));
    json_decref(load_part);
    json_object_set_new(root, "server_keys", server_keys);
    if (r->server.by_source)         /* per host, with probes or several sources */
        json_object_set_new(root, "servers", servers_json(&r->server));
    json_object_set_new(root, "summary", s);
    if (r->ladder.on)
        json_object_set_new(root, "ladder", ladder_json(&r->ladder));
    struct verdict_view vv = run_verdict_view(r);
    json_object_set_new(root, "verdict", verdict_json(&vv));
    json_object_set_new(root, "timeline", json_incref(r->timeline));
    json_t *events = json_array();
    probe_json_events(&r->server.events, events);
    json_object_set_new(root, "events", events);
    return root;
}

json_t *fill_json(const struct fill_summary *fs)
{
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:b, s:o}", "run_id", fs->run_id,
                     "mailboxes", (json_int_t)fs->mailboxes, "planned", (json_int_t)fs->planned,
                     "accepted", (json_int_t)fs->accepted, "verified", (json_int_t)fs->verified,
                     "duplicated", (json_int_t)fs->duplicated, "missing", (json_int_t)fs->missing,
                     "unverified", (json_int_t)fs->unverified, "bytes", (json_int_t)fs->bytes,
                     "deferrals", (json_int_t)fs->deferrals, "errors", (json_int_t)fs->errors,
                     "foreign", (json_int_t)fs->foreign, "elapsed_s", fs->elapsed_s, "settled", fs->settled,
                     "from", fs->from ? json_string(fs->from) : json_null());
}
