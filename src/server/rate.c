/* rate: [fault.rate], the reference server's known capacity. A token bucket of
 * `burst` messages refilled at `limit` a second decides when a message may reach
 * the store. Above the rate, over = 451 refuses the message at the end of data;
 * over = queue accepts it into a FIFO in memory (bounded by queue_max) that a timer
 * empties into the store at the rate, so the 250 comes at once and the queue grows
 * for as long as mail arrives faster than the limit: what a capacity search must
 * find (tests/integration/t_capacity.sh). With spool_dir the queue is on disk too,
 * a file per message named by its queue id, written before the 250 and removed once
 * delivered, so a collector counts and reads it as an MTA's (spool_format = files).
 * Loop thread only. */
#include "server/rate.h"
#include "server/server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/alloc.h"

#define RATE_INFLIGHT_MAX 64         /* deliveries handed to the store at once */

struct queued {
    struct queued *next;
    struct srv_rate *rate;
    struct srv_req req;
    size_t *rcpts, nrcpts;
    char *data;
    size_t len;
};

struct srv_rate {
    struct srv *srv;
    const struct srv_rate_faults *f;
    double tokens, burst;
    uint64_t last_ns;
    struct queued *head, **tail;
    uint64_t queued, inflight, refused, dropped, queue_max;
    int spool_fd;                    /* spool_dir, or -1 */
    int spool_failing;               /* the last write failed (logged once) */
    struct timer t;
    int stopping;
};

static void refill(struct srv_rate *r)
{
    uint64_t now = mono_ns();
    r->tokens += (double)(now - r->last_ns) / 1e9 * r->f->limit;
    if (r->tokens > r->burst)
        r->tokens = r->burst;
    r->last_ns = now;
}

static void pump(struct srv_rate *r);

static void spool_put(struct srv_rate *r, const struct queued *q)
{
    if (r->spool_fd < 0)
        return;
    int fd = openat(r->spool_fd, q->req.qid, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    size_t off = 0;
    while (fd >= 0 && off < q->len) {
        ssize_t n = write(fd, q->data + off, q->len - off);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    int ok = fd >= 0 && off == q->len;
    if (fd >= 0 && close(fd) < 0)
        ok = 0;
    if (!ok && !r->spool_failing)
        srv_log("rate: %s: writing to spool_dir %s failed: %s (queued in memory only until a write works)",
                q->req.qid, r->f->spool_dir, strerror(errno));
    r->spool_failing = !ok;
}

static void spool_drop(struct srv_rate *r, const struct queued *q)
{
    if (r->spool_fd >= 0)
        (void)unlinkat(r->spool_fd, q->req.qid, 0);
}

static void delivered(struct srv_req *req)
{
    struct queued *q = req->ud;
    struct srv_rate *r = q->rate;
    r->inflight--;
    if (!r->stopping && (req->status == SS_TEMP || req->status == SS_IN_USE)) {
        /* deferred, as an MTA defers: to the back of the queue, for another token */
        srv_log("%s: to=<%s>, status=deferred (%s)", req->qid, r->srv->users.v[q->rcpts[0]].addr, req->err);
        q->next = NULL;
        *r->tail = q;
        r->tail = &q->next;
        r->queued++;
    } else {
        if (req->status != SS_OK)
            srv_log("%s: to=<%s>, status=bounced (%s)", req->qid, r->srv->users.v[q->rcpts[0]].addr, req->err);
        spool_drop(r, q);
        free(q->rcpts);
        free(q->data);
        free(q);
    }
    if (!r->stopping)
        pump(r);
}

static void pump(struct srv_rate *r)
{
    refill(r);
    while (r->head && r->tokens >= 1 && r->inflight < RATE_INFLIGHT_MAX) {
        struct queued *q = r->head;
        if (!(r->head = q->next))
            r->tail = &r->head;
        r->queued--;
        r->tokens -= 1;
        r->inflight++;
        struct srv_req *req = &q->req;
        char qid[sizeof req->qid];
        memcpy(qid, req->qid, sizeof qid);
        memset(req, 0, sizeof *req);
        memcpy(req->qid, qid, sizeof qid);
        req->op = SOP_DELIVER;
        req->rcpts = q->rcpts;
        req->nrcpts = q->nrcpts;
        req->data = q->data;
        req->len = q->len;
        req->done = delivered;
        req->ud = q;
        srv_store_submit(r->srv->store, req);
    }
    if (r->head && r->tokens < 1 && !timer_armed(&r->t))
        timer_arm_in(r->srv->loop, &r->t, (uint64_t)((1 - r->tokens) / r->f->limit * 1e9) + 1);
}

static void on_timer(struct loop *l, struct timer *t)
{
    struct srv_rate *r = (struct srv_rate *)((char *)t - offsetof(struct srv_rate, t));
    (void)l;
    pump(r);
}

struct srv_rate *srv_rate_start(struct srv *srv, char *err, size_t errlen)
{
    const struct srv_rate_faults *f = &srv->cfg->faults.rate;
    if (!(f->limit > 0))
        return NULL;
    int spool_fd = -1;
    if (f->spool_dir && *f->spool_dir &&
        (spool_fd = open(f->spool_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        snprintf(err, errlen, "fault.rate.spool_dir: %s: %s", f->spool_dir, strerror(errno));
        return NULL;
    }
    struct srv_rate *r = xcalloc(1, sizeof *r);
    r->spool_fd = spool_fd;
    r->srv = srv;
    r->f = f;
    r->burst = f->burst > 0 ? f->burst : f->limit < 1 ? 1 : f->limit;
    r->tokens = r->burst;
    r->last_ns = mono_ns();
    r->tail = &r->head;
    r->t.fn = on_timer;
    if (!r->f->queue_max)
        r->queue_max = 100000;
    else
        r->queue_max = r->f->queue_max;
    return r;
}

int srv_rate_admit(struct srv_rate *r)
{
    refill(r);
    if (r->tokens < 1) {
        r->refused++;
        return 0;
    }
    r->tokens -= 1;
    return 1;
}

int srv_rate_enqueue(struct srv_rate *r, const size_t *rcpts, size_t nrcpts, const char *data, size_t len,
                     const char *qid)
{
    if (r->queued >= r->queue_max) {
        r->refused++;
        return -1;
    }
    struct queued *q = xcalloc(1, sizeof *q);
    q->rate = r;
    q->rcpts = xmalloc(nrcpts * sizeof *q->rcpts);
    memcpy(q->rcpts, rcpts, nrcpts * sizeof *q->rcpts);
    q->data = xmalloc(len + 1);
    memcpy(q->data, data, len);
    q->nrcpts = nrcpts;
    q->len = len;
    snprintf(q->req.qid, sizeof q->req.qid, "%s", qid);
    spool_put(r, q);
    *r->tail = q;
    r->tail = &q->next;
    r->queued++;
    pump(r);
    return 0;
}

void srv_rate_free(struct srv_rate *r)
{
    if (r && r->spool_fd >= 0)
        close(r->spool_fd);
    free(r);
}

void srv_rate_stop(struct srv_rate *r)
{
    if (!r)
        return;
    r->stopping = 1;
    timer_cancel(r->srv->loop, &r->t);
    for (struct queued *q = r->head, *next; q; q = next) {
        next = q->next;
        spool_drop(r, q);
        free(q->rcpts);
        free(q->data);
        free(q);
        r->dropped++;
    }
    r->head = NULL;
    r->tail = &r->head;
    srv_log("rate: %.0f msg/s limit: %llu refused above it, %llu still queued and dropped at the stop",
            r->f->limit, (unsigned long long)r->refused, (unsigned long long)r->dropped);
}
