/* result_read: a read result's figures (result/result.h) as the judgement reads
 * them (see include/run/result_read.h): its counts and outcomes, histograms, error
 * classes, send window, held-back arrivals and its own [gate] settings. */
#include "run/result_read.h"

#include <string.h>

#include "settings/config.h"

/* The send window from the timeline: the entries in which a shard sent (a merged
 * entry's phase is "send+drain" when the shards were in both), the queue's first and
 * last count within it. */
static void send_window(const struct result *res, const struct config *cfg, struct counters *c,
                        struct verdict_window *w)
{
    double iv_s = (double)cfg->interval / 1e9, warm_s = (double)cfg->ramp / 1e9 + iv_s;
    w->walk_s = (double)cfg->server.walk_interval / 1e9;
    w->queue_s = (double)cfg->server.queue_interval / 1e9;
    struct counters so_far = { 0 };
    for (size_t i = 0; i < res->nintervals; i++) {
        const struct result_interval *e = &res->intervals[i];
        c->smtp_sessions += e->c.smtp_sessions;
        c->pop3_sessions += e->c.pop3_sessions;
        if (!strstr(e->phase, "send"))
            continue;
        double t = e->t;
        so_far.sent += e->c.sent;
        so_far.pop3_sessions += e->c.pop3_sessions;
        so_far.left_behind += e->c.left_behind;
        so_far.empty_visits += e->c.empty_visits;
        so_far.full_visits += e->c.full_visits;
        so_far.idle_syncs += e->c.idle_syncs;
        if (e->has_unread) {
            struct verdict_sample ks = {
                .t = t, .unread = (double)e->unread, .sent = so_far.sent,
                .visits = so_far.pop3_sessions + so_far.idle_syncs, .left_behind = so_far.left_behind, .empty_visits = so_far.empty_visits,
                .full_visits = so_far.full_visits,
            };
            ks.has_spool = e->has_spool;
            ks.spool = ks.has_spool ? e->spool : 0;
            ks.has_store = e->has_store;
            ks.store = ks.has_store ? e->store_messages : 0;
            verdict_window_sample(w, &ks, warm_s, iv_s / 2);
        }
        w->seconds = t;
        w->accepted += e->c.sent;
        w->read += e->c.read;
        if (e->has_spool) {
            double spool = e->spool;
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

int result_read_judgement(const struct result *res, struct run_result *r, struct config *cfg,
                          struct judge_figures *f, char *err, size_t errlen)
{
    if (result_settings(res, cfg) < 0) {
        snprintf(err, errlen, "its [gate] settings are missing or unreadable (a file of an older mailsoak?)");
        return -1;
    }
    if (gates_from_config(cfg, &r->gates, err, errlen) < 0)
        return -1;
    r->c.sent = res->c.sent;
    r->c.read = res->c.read;
    r->c.errors = res->c.errors;
    r->lo.accepted = r->c.sent;
    r->lo.delivered = res->lo.delivered;
    r->lo.duplicated = res->lo.duplicated;
    r->lo.corrupted = res->lo.corrupted;
    r->lo.lost = res->lo.lost;
    r->lo.pending = res->lo.pending;
    memcpy(r->lo.pending_by, res->lo.pending_by, sizeof r->lo.pending_by);
    if (res->hist_err[0]) {
        snprintf(err, errlen, "%s", res->hist_err);
        return -1;
    }
    memcpy(r->lat, res->hist, sizeof r->lat);
    for (unsigned k = 0; k < res->nerr && r->nerr < ERR_CLASSES_MAX; k++)
        if (res->err[k].count > 0)
            r->err[r->nerr++] = res->err[k];
    send_window(res, cfg, &r->c, &r->window);
    *f = (struct judge_figures){
        .c = &r->c, .lo = &r->lo, .lat = r->lat, .err = r->err, .nerr = r->nerr,
        .settled = res->settled, .swept = res->settled >= 0,
        .interrupted = res->interrupted,
        .senders = res->senders, .readers = res->readers,
        .elapsed_s = res->elapsed_s, .send = r->window,
        .rate = res->rate,
        .sweep_timeout_s = (double)cfg->sweep_timeout / 1e9, .settle_s = (double)cfg->settle / 1e9,
        .held = res->late_busy + res->late_engine + res->never_started,
        .due = res->due, .growth_share = cfg->capacity.queue_growth,
    };
    return 0;
}
