/* serve: what `mailsoak probe` does (see serve.h; cmd/cmd_probe.c reads its settings).
 * The collector samples on its thread and keeps probe.keep of samples;
 * libmicrohttpd's thread answers requests from what the series holds, so a slow or
 * hostile client never delays a sample. Signals are waited for with sigwait() in
 * the main thread: no handler, no flag. */
#include "probe/serve.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/httpd.h"
#include "lib/prom.h"
#include "probe/collector.h"
#include "probe/wire.h"
#include "settings/config.h"

enum {
    FRESH_MIN_AGE_MS = 10,           /* a sample this young is fresh enough for any puller */
    FRESH_TIMEOUT_MS = 5000,         /* a store walk can take a while; a puller waits no longer */
};

/* What the HTTP handler serves from: the collector, and the probe's id and host. */
struct serving {
    struct collector *col;
    char id[33], host[64];
};

static int copy_last(void *ud, uint64_t idx, const struct probe_sample *x, const uint64_t *hits,
                     const struct series_line *lines, size_t nlines)
{
    *(struct probe_sample *)ud = *x;
    return 0;
}

char *probe_metrics_text(struct series *s, const char *host, const char *probe, uint64_t now_ns, size_t *len)
{
    struct probe_has has = series_has(s);
    struct probe_sample x = { 0 };
    uint64_t next, nev;
    series_next(s, &next, &nev);
    if (next)
        series_each(s, next - 1, 1, copy_last, &x);
    struct prom p = { 0 };
    prom_family(&p, "mailsoak_server_info", "gauge", "the host a mailsoak probe measures (always 1)");
    prom_u64(&p, "mailsoak_server_info", 1, "host", host, "probe", probe, NULL);
    prom_family(&p, "mailsoak_server_samples_total", "counter", "samples taken");
    prom_u64(&p, "mailsoak_server_samples_total", next, NULL);
    prom_family(&p, "mailsoak_server_sample_age_seconds", "gauge", "how old the last sample is");
    prom_double(&p, "mailsoak_server_sample_age_seconds", next && now_ns > x.t ? (double)(now_ns - x.t) / 1e9 : 0, NULL);
    if (has.procs) {
        static const struct { const char *name, *type, *help; } f[] = {
            { "mailsoak_server_memory_rss_bytes", "gauge", "resident memory summed over the server's processes (shared pages once per process)" },
            { "mailsoak_server_memory_pss_bytes", "gauge", "proportional set size summed over the server's processes" },
            { "mailsoak_server_processes", "gauge", "processes in the server's process set" },
            { "mailsoak_server_read_calls_total", "counter", "read calls of the server's processes (syscr), since the probe started" },
            { "mailsoak_server_write_calls_total", "counter", "write calls (syscw), since the probe started" },
            { "mailsoak_server_read_bytes_total", "counter", "bytes read by those calls (rchar): files, sockets, pipes" },
            { "mailsoak_server_written_bytes_total", "counter", "bytes written by those calls (wchar)" },
            { "mailsoak_server_disk_read_bytes_total", "counter", "bytes read from the storage layer (read_bytes)" },
            { "mailsoak_server_disk_write_bytes_total", "counter", "bytes written to the storage layer (write_bytes)" },
            { "mailsoak_server_disk_cancelled_write_bytes_total", "counter", "of those, cancelled before they reached it (cancelled_write_bytes)" },
            { "mailsoak_server_crashes_total", "counter", "masters that died or came back under a new pid, since the probe started" },
        };
        const uint64_t v[] = { x.mem, x.pss, x.procs, x.io.syscr, x.io.syscw, x.io.rchar, x.io.wchar,
                               x.io.read_bytes, x.io.write_bytes, x.io.cancelled_write_bytes, x.crashes };
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
            prom_family(&p, f[i].name, f[i].type, f[i].help);
            prom_u64(&p, f[i].name, v[i], NULL);
        }
        prom_family(&p, "mailsoak_server_cpu_seconds_total", "counter",
                    "CPU time of the server's processes and the children they reaped, since the probe started");
        prom_double(&p, "mailsoak_server_cpu_seconds_total", (double)x.io.cpu_ms / 1000, NULL);
        /* The same by part: which of MTA, POP3 server and database spends it. */
        static const struct { const char *name, *type, *help; } pf[] = {
            { "mailsoak_server_part_cpu_seconds_total", "counter", "CPU time by part of the server (mta, pop3, db, other)" },
            { "mailsoak_server_part_memory_rss_bytes", "gauge", "resident memory by part" },
            { "mailsoak_server_part_processes", "gauge", "processes by part" },
            { "mailsoak_server_part_read_bytes_total", "counter", "bytes read by part (rchar)" },
            { "mailsoak_server_part_written_bytes_total", "counter", "bytes written by part (wchar)" },
        };
        for (size_t i = 0; i < sizeof pf / sizeof pf[0]; i++) {
            prom_family(&p, pf[i].name, pf[i].type, pf[i].help);
            for (int k = 0; k < PROBE_NPARTS; k++) {
                const struct probe_use *u = &x.part[k];
                if (i == 0)
                    prom_double(&p, pf[i].name, (double)u->io.cpu_ms / 1000, "part", probe_part_names[k], NULL);
                else
                    prom_u64(&p, pf[i].name, i == 1 ? u->mem : i == 2 ? u->procs : i == 3 ? u->io.rchar : u->io.wchar,
                             "part", probe_part_names[k], NULL);
            }
        }
    }
    if (has.db) {
        /* The database's own counters (probe/db.h): totals since the database started. */
        static const struct { const char *counter, *name, *type, *help; } df[] = {
            { "lock_waits", "mailsoak_server_db_lock_waits_total", "counter", "lock waits the database counted (or, SQLite, its lock failures logged)" },
            { "waiting", "mailsoak_server_db_lock_waiting", "gauge", "sessions waiting for a lock now" },
            { "deadlocks", "mailsoak_server_db_deadlocks_total", "counter", "deadlocks the database detected" },
            { "errors", "mailsoak_server_db_errors_total", "counter", "rolled-back transactions (or, SQLite, its errors logged)" },
            { "conns", "mailsoak_server_db_connections", "gauge", "client connections now, the probe's own not counted" },
            { "conns_max", "mailsoak_server_db_connections_max", "gauge", "the connections the database allows its clients" },
        };
        const uint64_t dv[] = { x.db.lock_waits, x.db.waiting, x.db.deadlocks, x.db.errors, x.db.conns, x.db.conns_max };
        const char *kind = probe_db_kind_name(has.db);
        for (size_t i = 0; i < sizeof dv / sizeof dv[0]; i++) {
            if (!probe_db_measures(has.db, df[i].counter))
                continue;
            prom_family(&p, df[i].name, df[i].type, df[i].help);
            prom_u64(&p, df[i].name, dv[i], "kind", kind, NULL);
        }
        prom_family(&p, "mailsoak_server_db_unreadable_total", "counter", "readings of the database that failed");
        prom_u64(&p, "mailsoak_server_db_unreadable_total", x.db.unreadable, "kind", kind, NULL);
    }
    if (has.spool) {
        prom_family(&p, "mailsoak_server_spool_messages", "gauge", "files in the server's queue directories");
        prom_u64(&p, "mailsoak_server_spool_messages", x.spool, NULL);
    }
    if (has.store) {
        prom_family(&p, "mailsoak_server_store_messages", "gauge", "messages in the mail store");
        prom_u64(&p, "mailsoak_server_store_messages", x.store_messages, NULL);
        prom_family(&p, "mailsoak_server_store_bytes", "gauge", "bytes of the messages in the mail store");
        prom_u64(&p, "mailsoak_server_store_bytes", x.store_bytes, NULL);
    }
    if (has.logs) {
        prom_family(&p, "mailsoak_server_log_lines_total", "counter", "server log lines matching each class, since the probe started");
        for (size_t k = 0; k < series_nclasses(s); k++)
            prom_u64(&p, "mailsoak_server_log_lines_total", series_class_total(s, k), "class", series_class(s, k), NULL);
    }
    return prom_take(&p, len);
}

/* A query argument of digits only, as a number; absent is fine, anything else not. */
static int arg_u64(const struct httpd_request *req, const char *name, int *has, uint64_t *out)
{
    const char *v = httpd_arg(req, name);
    *has = v != NULL;
    if (!v)
        return 0;
    if (!*v || strlen(v) > 19 || strspn(v, "0123456789") != strlen(v))
        return -1;
    *out = strtoull(v, NULL, 10);
    return 0;
}

static void reply_text(struct httpd_response *out, int status, const char *text)
{
    out->status = status;
    out->body = xstrdup(text);
    out->len = strlen(text);
}

static void serve(void *ud, const char *path, const struct httpd_request *req, struct httpd_response *out)
{
    struct serving *pr = ud;
    struct series *s = collector_series(pr->col);
    if (!strcmp(path, "/metrics")) {
        out->body = probe_metrics_text(s, pr->host, pr->id, mono_ns(), &out->len);
        out->type = PROM_TYPE;
    } else if (!strcmp(path, "/samples")) {
        struct wire_query q = { 0 };
        int fresh = 0;
        uint64_t f = 0;
        if (arg_u64(req, "since", &q.has_since, &q.since) < 0 || arg_u64(req, "events", &q.has_events, &q.events) < 0 ||
            arg_u64(req, "fresh", &fresh, &f) < 0) {
            reply_text(out, 400, "since, events and fresh take a number\n");
            return;
        }
        /* A puller's baseline and last sample must be taken now, not up to an
         * interval ago, or its window would miss the server's work at its edges. */
        if (fresh && f && collector_sample_fresh(pr->col, FRESH_MIN_AGE_MS * 1000000ull, FRESH_TIMEOUT_MS * 1000000ull) < 0) {
            reply_text(out, 503, "no fresh sample: the sampler is stuck or stopped\n");
            return;
        }
        json_t *j = wire_encode(s, pr->id, pr->host, mono_ns(), &q);
        out->body = json_dumps(j, JSON_COMPACT);
        out->len = out->body ? strlen(out->body) : 0;
        out->type = "application/json";
        json_decref(j);
    } else if (!strcmp(path, "/time")) {
        /* For a puller's clock estimate: as little work as possible between the
         * request and the reading. */
        char b[96];
        size_t n = wire_time_encode(b, sizeof b, mono_ns());
        out->body = xstrndup(b, n);
        out->len = n;
        out->type = "application/json";
    } else if (!strcmp(path, "/")) {
        reply_text(out, 200, "mailsoak probe: /metrics (Prometheus), /samples (mailsoak run, server.probe)\n");
    } else {
        reply_text(out, 404, "not found: /metrics or /samples\n");
    }
}

int probe_serve(const struct config *cfg)
{
    struct serving pr = { 0 };
    unsigned char rnd[16];
    if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
        memset(rnd, (int)getpid(), sizeof rnd);
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(pr.id + 2 * i, 3, "%02x", rnd[i]);
    if (gethostname(pr.host, sizeof pr.host) < 0)
        snprintf(pr.host, sizeof pr.host, "unknown");
    pr.host[sizeof pr.host - 1] = 0;

    /* Every thread started from here on inherits the blocked signals; this one takes
     * them with sigwait(). */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);

    char err[600];
    struct collector_opts co = { .keep_ns = cfg->probe_keep };
    pr.col = collector_start_opts(&cfg->server, mono_ns(), &co, err, sizeof err);
    if (!pr.col) {
        fprintf(stderr, "mailsoak probe: %s\n", err);
        return 2;
    }
    const char *why = !collector_series(pr.col)
                          ? "nothing to measure: set server.pid, pidfile, process, spool_dir, store_dir or log"
                      : series_nclasses(collector_series(pr.col)) > WIRE_MAX_CLASSES
                          ? "server.log_class: more classes than a run takes from a probe (64)"
                      : cfg->server.log_examples > WIRE_MAX_EXAMPLES
                          ? "server.log_examples: more than a run takes from a probe (100)"
                          : NULL;
    if (why) {
        fprintf(stderr, "mailsoak probe: %s\n", why);
        collector_free(pr.col);
        return 2;
    }
    struct httpd *h = httpd_start(cfg->probe_listen, cfg->probe_token, serve, &pr, err, sizeof err);
    if (!h) {
        fprintf(stderr, "mailsoak probe: probe.listen: %s\n", err);
        collector_free(pr.col);
        return 2;
    }
    fprintf(stderr, "mailsoak probe: serving http://%s/metrics and /samples%s (pid %d)\n", httpd_address(h),
            cfg->probe_token[0] ? " with a token" : "", (int)getpid());
    int sig = 0;
    while (sigwait(&stop, &sig) != 0)
        ;
    fprintf(stderr, "mailsoak probe: %s: stopping\n", strsignal(sig));
    httpd_stop(h);
    collector_free(pr.col);
    return 0;
}
