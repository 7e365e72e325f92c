/* output: the run's result as a table (the classic backend comparison's shape, one
 * row per metric) and as JSON. Writers only: every number here was measured
 * elsewhere. */
#include "run/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/escape.h"
#include "result/latency.h"
#include "lib/alloc.h"
#include "lib/atomicfile.h"
#include "lib/version.h"
#include "settings/config.h"
#include "result/probe_output.h"
#include "run/examples.h"
#include "result/verdict_output.h"
#include "run/sources.h"
#include "run/run.h"
#include "verdict/trail.h"
#include "verdict/judge.h"

static double ms(uint64_t ns) { return (double)ns / 1e6; }

const char *run_time(const struct run_result *r, uint32_t at_ms, char *buf, size_t n)
{
    uint64_t t = r->run->t0_unix_ms + at_ms;
    time_t sec = (time_t)(t / 1000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + k, n - k, ".%03uZ", (unsigned)(t % 1000));
    return buf;
}

void msg_ids(const struct run_result *r, uint64_t seq, char *id, size_t idn, char *mid, size_t midn)
{
    snprintf(id, idn, "%s-%llx", r->run->run_id, (unsigned long long)seq);
    snprintf(mid, midn, "<%s.%llx@mailsoak.invalid>", r->run->run_id, (unsigned long long)seq);
}

/* A message's trail: the cause, the line that shows it, the queue it was last put in,
 * the lines (printable already) and how many were left out. */
static json_t *trail_json(const struct trail *tr)
{
    const char *lines[TRAIL_HEAD + TRAIL_TAIL];
    uint64_t skipped;
    size_t n = trail_lines(tr, lines, TRAIL_HEAD + TRAIL_TAIL, &skipped);
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(lines[i]));
    return json_pack("{s:s, s:s?, s:s, s:s, s:I, s:I, s:o}", "cause", trail_cause_names[tr->cause],
                     "cause_line", tr->cause_line, "last_queue", tr->last_queue, "queue_left", tr->left, "lines",
                     (json_int_t)tr->nlines, "lines_left_out", (json_int_t)skipped, "trail", a);
}

static json_t *examples_json(const struct run_result *r, int kind)
{
    json_t *a = json_array();
    for (unsigned i = 0; i < r->nexamples[kind]; i++) {
        const struct message_example *x = &r->examples[kind][i];
        char id[64], mid[80], acc[40], rd[40];
        msg_ids(r, x->seq, id, sizeof id, mid, sizeof mid);
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:I}", "id", id, "message_id", mid,
                              "queue_id", x->queue_id, "mailbox", r->run->users.v[x->user].addr,
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
        json_object_set_new(o, "server_evidence", x->trail ? trail_json(x->trail) : json_null());
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
                     "users", (json_int_t)r->run->users_total,
                     "duration", cfgval(cfg, "run", "duration", c, sizeof c),
                     "messages", (json_int_t)cfg->messages,
                     "pipelining", cfgval(cfg, "smtp", "pipelining", d, sizeof d),
                     "fill", cfgval(cfg, "fill", "messages", f, sizeof f));
}

const char *run_label(const struct config *cfg)
{
    if (cfg->label[0])
        return cfg->label;
    if (cfg->server.store_format && strcmp(cfg->server.store_format, "auto"))
        return cfg->server.store_format;
    return "run";
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

/* pop3.poll_interval: the mail clients' login rate, the profile's and the one
 * achieved in the window, and whether the readers kept up (judge_readers_late). */
struct poll_view {
    uint64_t users;
    double interval_s, target, achieved;
    int tester_limited;
};

static int poll_view(const struct run_result *r, struct poll_view *v)
{
    const struct config *cfg = r->cfg;
    if (!cfg->poll_interval)
        return 0;
    size_t n = r->run->users.n;
    v->users = cfg->poll_users && cfg->poll_users < n ? cfg->poll_users : n;
    v->interval_s = (double)cfg->poll_interval / 1e9;
    v->target = (double)v->users / v->interval_s;
    v->achieved = r->duration_s > 0 ? (double)r->c.poll_logins / r->duration_s : 0;
    v->tester_limited = judge_readers_late(r->c.polls_late, r->c.polls);
    return 1;
}

/* The file's envelope: format, version, ids, clocks, the histogram's key, the
 * workload, the fill and the settings. */
static void envelope_json(json_t *root, const struct run_result *r)
{
    json_object_set_new(root, "format", json_string(RESULT_FORMAT));
    json_object_set_new(root, "format_version", json_integer(RESULT_FORMAT_VERSION));
    json_object_set_new(root, "version", json_string(mailsoak_version));
    json_object_set_new(root, "label", json_string(run_label(r->cfg)));
    json_object_set_new(root, "run_id", json_string(r->run->run_id));
    json_object_set_new(root, "seed", json_integer((json_int_t)r->run->seed));
    json_object_set_new(root, "start_time", json_string(r->start_time));
    /* the timeline's t counts from here: merge lines shards up on this wall clock */
    json_object_set_new(root, "start_unix_ms", json_integer((json_int_t)r->run->t0_unix_ms));
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    json_object_set_new(root, "host", json_string(host));
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
    if (r->fill)
        json_object_set_new(root, "fill", fill_json(r->fill));
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
    json_object_set_new(s, "settled", r->run->ledger.swept ? json_boolean(r->settled) : json_null());
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
    json_object_set_new(s, "ledger_compacted", json_integer((json_int_t)r->run->ledger.settled));
    json_object_set_new(s, "ledger_revived", json_integer((json_int_t)r->run->ledger.nrevived));
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
                                                    "idle_users", (json_int_t)r->run->imap_users[IMAP_IDLE],
                                                    "poll_users", (json_int_t)r->run->imap_users[IMAP_POLL],
                                                    "webmail_users", (json_int_t)r->run->imap_users[IMAP_WEBMAIL],
                                                    "drain_users", (json_int_t)r->run->imap_users[IMAP_DRAIN]));
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
    struct probe_summary ps;
    sources_summary(r->sources, &ps);
    probe_json_summary(&ps, s);
    probe_summary_free(&ps);
    const char *key;
    json_t *val;
    json_object_foreach(s, key, val)
        if (!json_object_get(load_part, key))
            json_array_append_new(server_keys, json_string(key));
    json_decref(load_part);
    json_object_set_new(root, "server_keys", server_keys);
    json_t *servers = sources_json(r->sources);  /* per host, with probes or several sources */
    if (servers)
        json_object_set_new(root, "servers", servers);
    json_object_set_new(root, "summary", s);
    if (r->ladder.on)
        json_object_set_new(root, "ladder", ladder_json(&r->ladder));
    struct verdict_view vv = run_verdict_view(r);
    json_object_set_new(root, "verdict", verdict_json(&vv));
    json_object_set_new(root, "timeline", json_incref(r->timeline));
    struct probe_events pe;
    sources_events(r->sources, &pe);
    json_t *events = json_array();
    probe_json_events(&pe, events);
    probe_events_free(&pe);
    json_object_set_new(root, "events", events);
    return root;
}

static void row(FILE *f, const char *name, const char *value)
{
    fprintf(f, "%-12s %12s\n", name, value);
}

/* Counts exact, as the server's rows are: one style in the column (not 274K above
 * 54609). */
static void row_count(FILE *f, const char *name, double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.0f", v);
    row(f, name, b);
}

/* Whether delivery latency measured the readers rather than the server
 * (judge_readers_bound), from the last interval of the send phase. Sets the unread
 * count and the queue (-1: not measured). */
static int readers_bound(const struct run_result *r, uint64_t *unread, long long *queued)
{
    const struct config *cfg = r->cfg;
    if (!r->send_end.has || !cfg->readers)
        return 0;
    *unread = r->send_end.unread;
    *queued = r->send_end.queued;
    return judge_readers_bound(*unread, *queued, cfg->readers, cfg->max_per_session);
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

void fill_table(FILE *f, const struct fill_summary *fs)
{
    char a[16], b[16], c[16];
    if (fs->from)                    /* an earlier run's, left where it is */
        fprintf(f, "fill (of run %s, from %s): ", fs->run_id, fs->from);
    fprintf(f, "fill: %s messages in %s mailboxes (%s) in %.1f s, %.0f/s: accepted %llu, verified %llu",
            fmt_count(a, sizeof a, (double)fs->planned), fmt_count(b, sizeof b, (double)fs->mailboxes),
            fmt_bytes(c, sizeof c, (double)fs->bytes), fs->elapsed_s,
            fs->elapsed_s > 0 ? (double)fs->accepted / fs->elapsed_s : 0, (unsigned long long)fs->accepted,
            (unsigned long long)fs->verified);
    if (fs->duplicated || fs->missing || fs->unverified)
        fprintf(f, ", duplicated %llu, missing %llu, unverified %llu", (unsigned long long)fs->duplicated,
                (unsigned long long)fs->missing, (unsigned long long)fs->unverified);
    if (fs->deferrals)
        fprintf(f, " (%llu deferrals retried)", (unsigned long long)fs->deferrals);
    fprintf(f, "%s\n", fs->verified == fs->planned && fs->accepted == fs->planned
                           ? ": the store holds them exactly"
                           : fs->settled ? "" : " (the server did not settle: what is not verified is unproven)");
}

/* At most this many of a trail's lines in the table (the JSON has them all). */
#define TABLE_TRAIL_LINES 8

static void table_examples(FILE *f, const struct run_result *r, int kind)
{
    if (kind == EX_LATE)
        fprintf(f, "\nlate messages (first %u): delivered intact, first read by the sweep; their trails are in the "
                   "JSON\n", r->nexamples[kind]);
    else
        fprintf(f, "\n%s messages (first %u)\n", example_kind_names[kind], r->nexamples[kind]);
    for (unsigned i = 0; i < r->nexamples[kind]; i++) {
        const struct message_example *x = &r->examples[kind][i];
        char id[64], mid[80];
        msg_ids(r, x->seq, id, sizeof id, mid, sizeof mid);
        fprintf(f, "  %s %s%s%s for %s: ", id, mid, x->queue_id[0] ? " queued as " : "", x->queue_id,
                r->run->users.v[x->user].addr);
        if (x->compacted)
            fprintf(f, "delivered once, its entry compacted, then found again");
        else
            fprintf(f, "accepted at %.1f s", x->accepted_ms / 1e3);
        if (kind == EX_LOST)
            fprintf(f, ", not in its mailbox read in full at %.1f s\n", x->read_ms / 1e3);
        else
            fprintf(f, ", read %u time%s\n", x->reads, x->reads == 1 ? "" : "s");
        if (x->differs)
            fprintf(f, "    differs: %s\n", x->differs);
        const struct trail *tr = x->trail;
        if (!tr || kind == EX_LATE)
            continue;
        if (tr->cause)
            fprintf(f, "    cause: %s%s%s\n", trail_cause_names[tr->cause], tr->cause_line ? ": " : "",
                    tr->cause_line ? tr->cause_line : "");
        if (tr->last_queue[0])
            fprintf(f, "    last seen in the %s queue%s\n", tr->last_queue,
                    !strcmp(tr->left, "deleted") ? ", then deleted from it"
                    : !strcmp(tr->left, "left") ? ", which it then left" : "");
        const char *lines[TRAIL_HEAD + TRAIL_TAIL];
        uint64_t skipped;
        size_t n = trail_lines(tr, lines, TABLE_TRAIL_LINES, &skipped);
        for (size_t j = 0; j < n; j++)
            fprintf(f, "    | %s\n", lines[j]);
        if (tr->nlines > n)
            fprintf(f, "    | ... %llu more line%s in the JSON's trail\n", (unsigned long long)(tr->nlines - n),
                    tr->nlines - n == 1 ? "" : "s");
    }
}

static void table_ladder(FILE *f, const struct ladder_result *lr)
{
    if (lr->advertised)
        fprintf(f, "\nsize ladder: the server advertised SIZE %llu\n", (unsigned long long)lr->advertised);
    else
        fprintf(f, "\nsize ladder: the server advertised no SIZE limit\n");
    fprintf(f, "  %10s %6s %8s %9s %10s %5s %8s %8s  %s\n", "size", "tried", "refused", "accepted", "delivered",
            "lost", "corrupt", "pending", "reply to the refused");
    for (unsigned i = 0; i < lr->n; i++) {
        const struct ladder_rung_result *x = &lr->v[i];
        fprintf(f, "  %10llu %6llu %8llu %9llu %10llu %5llu %8llu %8llu  %s\n", (unsigned long long)x->size,
                (unsigned long long)x->tried, (unsigned long long)x->refused, (unsigned long long)x->accepted,
                (unsigned long long)x->delivered, (unsigned long long)x->lost, (unsigned long long)x->corrupted,
                (unsigned long long)x->pending, x->reply);
    }
    if (lr->largest >= 0)
        fprintf(f, "largest size delivered intact: %llu bytes\n", (unsigned long long)lr->v[lr->largest].size);
    else
        fprintf(f, "no size was delivered intact\n");
    for (unsigned i = 0; i < lr->n; i++) {
        const struct ladder_rung_result *x = &lr->v[i];
        if (x->lost + x->corrupted)
            fprintf(f, "FAILURE: the server accepted %llu message%s of %llu bytes and did not deliver %llu of them "
                       "intact (%llu lost, %llu corrupted)\n",
                    (unsigned long long)x->accepted, x->accepted == 1 ? "" : "s", (unsigned long long)x->size,
                    (unsigned long long)(x->lost + x->corrupted), (unsigned long long)x->lost,
                    (unsigned long long)x->corrupted);
    }
}

/* The table's rows: the counts, the server's rows, the outcomes and why mail is
 * pending, the clients' logins, smtp.retry's, the rates and the delivery's p50/p99. */
static void table_rows(FILE *f, const struct run_result *r)
{
    const struct ledger_outcome *lo = &r->lo;
    char b[64];
    fprintf(f, "%-12s %12s\n", "", run_label(r->cfg));
    row_count(f, "sent", (double)r->c.sent);
    row_count(f, "read", (double)r->c.read);
    /* the server's rows, in the classic comparison's order */
    char name[32], value[32];
    struct probe_summary ps;
    sources_summary(r->sources, &ps);
    for (int i = 0, rc; (rc = probe_table_row(&ps, i, name, sizeof name, value, sizeof value)); i++)
        if (rc > 0)
            row(f, name, value);
    probe_summary_free(&ps);
    row_count(f, "errors", (double)r->c.errors);
    row_count(f, "delivered", (double)lo->delivered);
    row_count(f, "lost", (double)lo->lost);
    row_count(f, "duplicated", (double)lo->duplicated);
    row_count(f, "corrupted", (double)lo->corrupted);
    row_count(f, "pending", (double)lo->pending);
    for (unsigned k = 0; k < PR_COUNT; k++)    /* why they are not lost */
        if (lo->pending_by[k]) {
            char why[24];
            snprintf(why, sizeof why, "  %s", pending_reason_names[k]);
            row_count(f, why, (double)lo->pending_by[k]);
        }
    if (r->c.corrupt_unattributed)   /* retrievals that match no message of this mailbox */
        row_count(f, "unattributed", (double)r->c.corrupt_unattributed);
    if (lo->unconfirmed)
        row_count(f, "unconfirmed", (double)lo->unconfirmed);
    if (lo->late)                    /* of delivered: read only by the sweep */
        row_count(f, "late", (double)lo->late);
    if (r->c.foreign)
        row_count(f, "foreign", (double)r->c.foreign);
    struct poll_view pv;
    if (poll_view(r, &pv)) {         /* the clients' logins against the profile's rate */
        snprintf(b, sizeof b, "%.2f", pv.achieved);
        row(f, "logins/s", b);
        snprintf(b, sizeof b, "%.2f", pv.target);
        row(f, "  profile", b);
        if (r->c.polls_late)
            row_count(f, "  late polls", (double)r->c.polls_late);
    }
    if (r->c.fill_unlisted)          /* filled, met by the readers, left */
        row_count(f, "fill unlisted", (double)r->c.fill_unlisted);
    if (r->cfg->smtp_retry) {        /* as an MTA's queue: deferred, sent again, delivered or given up */
        row_count(f, "deferrals", (double)r->c.deferrals);
        row_count(f, "retried", (double)lo->retried);
        if (lo->retried) {
            char d[24];
            snprintf(b, sizeof b, "%u, %s", lo->retried_max_tries,
                     fmt_duration(d, sizeof d, (uint64_t)lo->retried_max_ms * 1000000));
            row(f, "  most tries", b);
        }
        row_count(f, "bounced", (double)r->c.bounced);
        if (r->c.retry_expired + r->c.retry_dropped)
            row_count(f, "given up", (double)(r->c.retry_expired + r->c.retry_dropped));
        if (r->retry_left)
            row_count(f, "still deferred", (double)r->retry_left);
    }
    snprintf(b, sizeof b, "%.1f", r->duration_s > 0 ? (double)r->c.sent / r->duration_s : 0);
    row(f, "msg/s in", b);
    snprintf(b, sizeof b, "%.1f", r->elapsed_s > 0 ? (double)r->c.read / r->elapsed_s : 0);
    row(f, "msg/s out", b);
    if (r->lat[LAT_DELIVERY].count) {
        row(f, "deliv p50", fmt_duration(b, sizeof b, hist_percentile(&r->lat[LAT_DELIVERY], 50)));
        row(f, "deliv p99", fmt_duration(b, sizeof b, hist_percentile(&r->lat[LAT_DELIVERY], 99)));
    }
}

/* Errors by class, and IMAP's push latency. */
static void table_errors_push(FILE *f, const struct run_result *r)
{
    char b[64];
    if (r->nerr) {
        fprintf(f, "\nerrors by class\n");
        for (unsigned i = 0; i < r->nerr; i++)
            fprintf(f, "  %-28s %8llu  %s\n", r->err[i].name, (unsigned long long)r->err[i].count,
                    r->ex[i].n ? r->ex[i].text[0] : "");
    }
    if (r->run->imap_users[IMAP_IDLE]) {
        /* push latency, split: the server's (to the EXISTS) and what a user sees */
        fprintf(f, "\npush to %zu idle IMAP clients    count      p50      p95      p99    p99.9\n",
                r->run->imap_users[IMAP_IDLE]);
        static const enum lat push[] = { LAT_PUSH_EXISTS, LAT_PUSH_FETCHED };
        static const char *const what[] = { "accepted to EXISTS", "accepted to fetched" };
        for (int k = 0; k < 2; k++) {
            const struct hist *h = &r->lat[push[k]];
            fprintf(f, "  %-28s %8llu", what[k], (unsigned long long)h->count);
            for (int q = 0; q < 4; q++) {
                static const double pct[] = { 50, 95, 99, 99.9 };
                fprintf(f, " %8s", h->count ? fmt_duration(b, sizeof b, hist_percentile(h, pct[q])) : "-");
            }
            fputc('\n', f);
        }
        fprintf(f, "  %llu fetched by a client busy when its EXISTS came, or before its sender saw the acceptance "
                   "(the tester's delay, not timed as a push); "
                   "%llu that no EXISTS announced (found when IDLE was renewed)\n",
                (unsigned long long)r->c.push_busy, (unsigned long long)r->c.push_missed);
    }
}

/* Several server hosts: each one's rows, side by side. */
static void table_by_source(FILE *f, const struct run_result *r)
{
    char name[32], value[32];
    size_t nsrc = sources_count(r->sources);
    if (nsrc > 1) {                  /* several server hosts: each one's rows, side by side */
        fprintf(f, "\nserver side by source\n%-12s", "");
        for (size_t k = 0; k < nsrc; k++)
            fprintf(f, " %12.12s", sources_label(r->sources, k));
        fputc('\n', f);
        struct probe_summary *each = xcalloc(nsrc, sizeof *each);
        for (size_t k = 0; k < nsrc; k++)
            sources_summary_one(r->sources, k, &each[k]);
        /* A row shows when some source has it (a part, a database). */
        for (int i = 0, more = 1; more; i++) {
            int shown = 0;
            more = 0;
            for (size_t k = 0; k < nsrc; k++) {
                int rc = probe_table_row(&each[k], i, name, sizeof name, value, sizeof value);
                more |= rc != 0;
                shown |= rc > 0;
            }
            if (!shown)
                continue;
            char label[32] = "";
            for (size_t k = 0; k < nsrc && !*label; k++)
                if (probe_table_row(&each[k], i, label, sizeof label, value, sizeof value) <= 0)
                    *label = 0;
            fprintf(f, "%-12s", label);
            for (size_t k = 0; k < nsrc; k++)
                fprintf(f, " %12s", probe_table_row(&each[k], i, name, sizeof name, value, sizeof value) > 0 ? value : "-");
            fputc('\n', f);
        }
        for (size_t k = 0; k < nsrc; k++)
            probe_summary_free(&each[k]);
        free(each);
    }
}

static void table_latency(FILE *f, const struct run_result *r)
{
    fprintf(f, "\nlatency (ms)        count      p50      p90      p99    p99.9      max\n");
    for (unsigned k = 0; k < LAT_COUNT; k++) {
        const struct hist *h = &r->lat[k];
        if (!h->count)
            continue;
        /* a pipelined MAIL, RCPT and DATA are written at once and timed as one group */
        int group = r->c.smtp_pipelined && (k == LAT_SMTP_MAIL || k == LAT_SMTP_RCPT || k == LAT_SMTP_DATA);
        char lname[32];
        snprintf(lname, sizeof lname, "%s%s", lat_names[k], group ? "*" : "");
        fprintf(f, "  %-14s %9llu %8.2f %8.2f %8.2f %8.2f %8.2f\n", lname, (unsigned long long)h->count,
                ms(hist_percentile(h, 50)), ms(hist_percentile(h, 90)), ms(hist_percentile(h, 99)),
                ms(hist_percentile(h, 99.9)), ms(h->max));
    }
    if (r->c.smtp_pipelined)
        fprintf(f, "  * one pipelined group (MAIL, RCPT and DATA in one write): timed together, from that write\n");
    if (r->c.imap_rounds < r->c.imap_commands)
        fprintf(f, "  IMAP: %llu commands in %llu round trips (imap.pipelining; a pipelined command is timed from the "
                   "answer before it)\n", (unsigned long long)r->c.imap_commands, (unsigned long long)r->c.imap_rounds);
}

/* What the figures measured besides the server: the readers, the tester. */
static void table_notes(FILE *f, const struct run_result *r)
{
    char b[64];
    struct poll_view pv;
    uint64_t unread;
    long long queued;
    if (r->lat[LAT_DELIVERY].count && readers_bound(r, &unread, &queued))
        fprintf(f, "\n(deliv p50 and p99 %s the readers rather than the server: when the senders stopped, %llu "
                   "messages waited unread, more than the %llu readers take in a round of %llu each, %s; add "
                   "pop3.readers to measure the server's delivery)\n",
                queued < 0 ? "may measure" : "measure", (unsigned long long)unread,
                (unsigned long long)r->cfg->readers, (unsigned long long)r->cfg->max_per_session,
                queued < 0 ? "and the server's queue was not measured ([server] spool_dir), so where they waited "
                             "is not known"
                           : "while the server's queue held under a tenth of them");
    if (r->verdict.tester_limited) {
        const struct config *cfg = r->cfg;
        uint64_t due = r->c.arrivals + r->arrivals_owed;
        fprintf(f, "\ntester-limited: of %llu arrivals due at %.1f msg/s, the tester held back %llu: ",
                (unsigned long long)due, cfg->rate,
                (unsigned long long)(r->c.late_busy + r->c.late_engine + r->arrivals_held));
        fprintf(f, "%llu started over %s late with all %llu senders busy (raise smtp.senders), "
                   "%llu late on a late engine (more run.workers, or a quieter machine), %llu never started.\n"
                   "These figures understate what the server was offered; they are not the server's.\n",
                (unsigned long long)r->c.late_busy, fmt_duration(b, sizeof b, cfg->late_after),
                (unsigned long long)cfg->senders, (unsigned long long)r->c.late_engine,
                (unsigned long long)r->arrivals_held);
    }
    if (poll_view(r, &pv) && pv.tester_limited)
        fprintf(f, "\n(readers limited: %llu of %llu checks began over a second late, every reader busy; "
                   "the login rate is the tester's, not the profile's: add readers)\n",
                (unsigned long long)r->c.polls_late, (unsigned long long)r->c.polls);
}

void run_result_table(FILE *f, const struct run_result *r)
{
    if (r->fill)
        fill_table(f, r->fill);
    table_rows(f, r);
    table_errors_push(f, r);
    if (r->c.empty_body_as_line)
        fprintf(f, "\nserver property: an empty body is served as one empty line (an mbox store keeps it so): "
                   "%llu message%s, %s\n", (unsigned long long)r->c.empty_body_as_line,
                r->c.empty_body_as_line == 1 ? "" : "s",
                r->cfg->strict_bodies ? "counted corrupted (run.strict_bodies = yes)"
                                      : "delivered intact (run.strict_bodies = yes counts them corrupted)");
    table_by_source(f, r);
    table_latency(f, r);
    table_notes(f, r);
    if (r->ladder.on)
        table_ladder(f, &r->ladder);
    if (r->interrupted)
        fprintf(f, "\n(interrupted: the run ended early on a signal; unread mail is pending)\n");
    struct verdict_view vv = run_verdict_view(r);
    verdict_table(f, &vv);
    /* after the answer, the messages behind it: the failures with their trails,
     * then the late ones (delivered; a line each) */
    for (int k = 0; k < EX_KINDS; k++)
        if (r->nexamples[k])
            table_examples(f, r, k);
}
