/* metrics: the run's live figures in the Prometheus format (see metrics.h). The
 * names follow Prometheus' conventions (counters end in _total, durations are
 * seconds); README lists them with the queries a dashboard needs. */
#include "run/metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/httpd.h"
#include "lib/prom.h"

/* Bucket bounds in seconds: commands take from 100 us (loopback) to a timeout
 * (30 s by default), deliveries seconds to minutes. */
static const double cmd_le[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60 };
static const double deliv_le[] = { 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800 };
#define NLE(a) (sizeof a / sizeof a[0])

void metrics_buckets(const struct hist *h, const double *le, size_t n, uint64_t *cum)
{
    uint64_t seen = 0;
    unsigned i = 0;
    for (size_t k = 0; k < n; k++) {
        double bound = le[k] * 1e9;
        for (; i < HIST_BUCKETS; i++) {
            uint64_t lo, hi;
            hist_bucket_range(i, &lo, &hi);
            if ((double)(lo + (hi - lo) / 2) > bound)
                break;
            seen += h->b[i];
        }
        cum[k] = seen;
    }
}

static void histogram(struct prom *p, const char *name, const char *key, const char *val, const struct hist *h,
                      const double *le, size_t n)
{
    uint64_t cum[NLE(cmd_le) > NLE(deliv_le) ? NLE(cmd_le) : NLE(deliv_le)];
    metrics_buckets(h, le, n, cum);
    prom_histogram(p, name, key, val, le, cum, n, (double)h->sum / 1e9, h->count);
}

char *metrics_text(const struct metrics_view *v, size_t *len)
{
    static const char *const phases[] = { "send", "drain", "sweep", "stop" };
    const struct counters *c = v->c;
    struct prom p = { 0 };
    prom_family(&p, "mailsoak_run_info", "gauge", "the run being measured (always 1)");
    prom_u64(&p, "mailsoak_run_info", 1, "run_id", v->run_id, "label", v->label, NULL);
    prom_family(&p, "mailsoak_run_phase", "gauge", "1 for the phase the run is in: send, drain, sweep, stop");
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++)
        prom_u64(&p, "mailsoak_run_phase", !strcmp(phases[i], v->phase), "phase", phases[i], NULL);
    prom_family(&p, "mailsoak_run_elapsed_seconds", "gauge", "time since the run started");
    prom_double(&p, "mailsoak_run_elapsed_seconds", v->elapsed_s, NULL);

    prom_family(&p, "mailsoak_sent_total", "counter", "deliveries the server accepted (one per recipient)");
    prom_u64(&p, "mailsoak_sent_total", c->sent, NULL);
    prom_family(&p, "mailsoak_read_total", "counter",
                "messages of this run retrieved and deleted (POP3's QUIT or IMAP's EXPUNGE acknowledged)");
    prom_u64(&p, "mailsoak_read_total", c->read, NULL);
    prom_family(&p, "mailsoak_rejected_total", "counter", "deliveries the server refused");
    prom_u64(&p, "mailsoak_rejected_total", c->rejected, NULL);
    prom_family(&p, "mailsoak_errors_total", "counter", "errors by class <proto>_<stage>_<kind>");
    for (unsigned i = 0; i < v->nerr; i++)
        prom_u64(&p, "mailsoak_errors_total", v->err[i].count, "class", v->err[i].name, NULL);
    prom_family(&p, "mailsoak_sessions_total", "counter", "sessions started, by protocol");
    prom_u64(&p, "mailsoak_sessions_total", c->smtp_sessions, "protocol", "smtp", NULL);
    /* the reader sessions, by the protocol they speak (readers.protocol) */
    prom_u64(&p, "mailsoak_sessions_total", c->pop3_sessions, "protocol", v->readers ? v->readers : "pop3", NULL);
    prom_family(&p, "mailsoak_connections_open", "gauge", "connections open to the servers");
    prom_u64(&p, "mailsoak_connections_open", c->conns_open, NULL);
    prom_family(&p, "mailsoak_tls_handshakes_total", "counter", "TLS handshakes completed (resumed ones too)");
    prom_u64(&p, "mailsoak_tls_handshakes_total", c->tls_handshakes, NULL);
    prom_family(&p, "mailsoak_foreign_messages_total", "counter", "mail without our headers met in the mailboxes");
    prom_u64(&p, "mailsoak_foreign_messages_total", c->foreign, NULL);

    const struct ledger_outcome *lo = v->lo;
    prom_family(&p, "mailsoak_ledger_messages", "gauge",
                "accepted messages by outcome so far; pending = not read yet, lost only after a sweep");
    const struct { const char *name; uint64_t n; } out[] = {
        { "delivered", lo->delivered }, { "duplicated", lo->duplicated }, { "corrupted", lo->corrupted },
        { "lost", lo->lost }, { "pending", lo->pending }, { "unconfirmed", lo->unconfirmed },
    };
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)
        prom_u64(&p, "mailsoak_ledger_messages", out[i].n, "outcome", out[i].name, NULL);
    prom_family(&p, "mailsoak_ledger_entries", "gauge",
                "the ledger's entries: held in full, or compacted to a count (every one delivered exactly once)");
    prom_u64(&p, "mailsoak_ledger_entries", v->ledger_held, "form", "held", NULL);
    prom_u64(&p, "mailsoak_ledger_entries", v->ledger_compacted, "form", "compacted", NULL);
    prom_family(&p, "mailsoak_unread_messages", "gauge", "accepted messages not read yet");
    prom_double(&p, "mailsoak_unread_messages", (double)v->unread, NULL);

    prom_family(&p, "mailsoak_command_duration_seconds", "histogram",
                "time from a command's write to its reply (smtp.message: from the message's start)");
    for (unsigned k = 0; k < LAT_COUNT; k++)
        if (k < LAT_DELIVERY && v->lat[k].count)   /* commands; the delivery's parts are not */
            histogram(&p, "mailsoak_command_duration_seconds", "command", lat_names[k], &v->lat[k], cmd_le, NLE(cmd_le));
    prom_family(&p, "mailsoak_delivery_duration_seconds", "histogram", "time from a message's acceptance to its retrieval");
    histogram(&p, "mailsoak_delivery_duration_seconds", NULL, NULL, &v->lat[LAT_DELIVERY], deliv_le, NLE(deliv_le));
    return prom_take(&p, len);
}

struct run_metrics {
    struct httpd *http;
    pthread_mutex_t lock;            /* between the controller and the HTTP thread only */
    char *text;
    size_t len;
};

static void serve(void *ud, const char *path, const struct httpd_request *req, struct httpd_response *out)
{
    struct run_metrics *m = ud;
    if (strcmp(path, "/metrics")) {
        out->status = 404;
        out->body = xstrdup("mailsoak run: see /metrics\n");
        out->len = strlen(out->body);
        return;
    }
    pthread_mutex_lock(&m->lock);
    out->body = xmalloc(m->len + 1);
    memcpy(out->body, m->text ? m->text : "", m->len + 1);
    out->len = m->len;
    pthread_mutex_unlock(&m->lock);
    out->type = PROM_TYPE;
}

struct run_metrics *metrics_start(const char *listen, const char *token, char *err, size_t errlen)
{
    struct run_metrics *m = xcalloc(1, sizeof *m);
    pthread_mutex_init(&m->lock, NULL);
    if (!(m->http = httpd_start(listen, token, serve, m, err, errlen))) {
        metrics_stop(m);
        return NULL;
    }
    return m;
}

const char *metrics_address(const struct run_metrics *m)
{
    return httpd_address(m->http);
}

void metrics_publish(struct run_metrics *m, const struct metrics_view *v)
{
    size_t len;
    char *text = metrics_text(v, &len);
    pthread_mutex_lock(&m->lock);
    char *old = m->text;
    m->text = text;
    m->len = len;
    pthread_mutex_unlock(&m->lock);
    free(old);
}

void metrics_stop(struct run_metrics *m)
{
    if (!m)
        return;
    httpd_stop(m->http);             /* first: no request may read the text after this */
    pthread_mutex_destroy(&m->lock);
    free(m->text);
    free(m);
}
