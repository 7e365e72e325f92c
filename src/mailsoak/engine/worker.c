/* worker: one thread, one loop, its share of the sessions. It watches the run's
 * phase and the controller's snapshot requests between loop iterations; nothing
 * here takes a lock. */
#include "engine/worker.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/conn.h"
#include "lib/tls.h"

void count_conn_error(struct worker *w, const char *proto, const char *stage, const struct conn *c)
{
    static const char *const kind[] = {
        [CE_NONE] = "closed", [CE_EOF] = "closed", [CE_REFUSED] = "refused", [CE_RESET] = "reset",
        [CE_CONNECT_TIMEOUT] = "timeout", [CE_UNREACHABLE] = "unreachable", [CE_TLS] = "tls",
        [CE_IO] = "io", [CE_OVERLONG] = "protocol",
    };
    char name[ERR_NAME_LEN];
    /* A reset or an EOF proves the connection was made: if it comes before we saw
     * the connect complete, it belongs to the wait for the banner. */
    if (!strcmp(stage, "connect") && (c->err == CE_RESET || c->err == CE_EOF))
        stage = "banner";
    snprintf(name, sizeof name, "%s_%s_%s", proto, stage, kind[c->err]);
    stats_error(&w->st, name, c->errmsg[0] ? c->errmsg : NULL);
}

void count_unasked(struct worker *w, const char *proto, const char *stage, const struct conn *c)
{
    char name[ERR_NAME_LEN], ex[ERR_EXAMPLE_LEN];
    const char *p = conn_peek(c), *nl = memchr(p, '\n', conn_avail(c));
    size_t n = nl ? (size_t)(nl - p) : conn_avail(c);
    int k = snprintf(ex, sizeof ex, "sent unasked: ");
    if (n > sizeof ex - (size_t)k)
        n = sizeof ex - (size_t)k;
    memcpy(ex + k, p, n);
    snprintf(name, sizeof name, "%s_%s_protocol", proto, stage);
    stats_error_text(&w->st, name, ex, (size_t)k + n);
}

void pacer_init(struct pacer *p, double rate, uint64_t ramp_ns, uint64_t t0)
{
    p->rate = rate;
    p->ramp = (double)ramp_ns / 1e9;
    p->t0 = t0;
    p->n = 0;
}

uint64_t pacer_due(const struct pacer *p)
{
    double n = (double)p->n, t;
    if (p->ramp > 0 && n < p->rate * p->ramp / 2)
        t = sqrt(2 * p->ramp * n / p->rate);
    else
        t = p->ramp / 2 + n / p->rate;
    return p->t0 + (uint64_t)(t * 1e9);
}

uint64_t backoff_ms(unsigned fails, int refused)
{
    uint64_t cap = refused ? 10000 : 1000;
    uint64_t ms = fails ? 50ull << (fails < 8 ? fails : 8) : 0;
    return ms < cap ? ms : cap;
}

const struct target *next_bind(struct worker *w, const struct target *v, unsigned n)
{
    return n ? &v[w->rr_bind++ % n] : NULL;
}

int worker_init(struct worker *w, unsigned idx, struct run *run, unsigned nsmtp, unsigned npop3,
                unsigned smtp_base, unsigned pop3_base)
{
    memset(w, 0, sizeof *w);
    w->idx = idx;
    w->run = run;
    w->rr = idx;
    stats_init(&w->st, (unsigned)run->cfg->error_examples);
    w->loop = loop_new();
    if (!w->loop || msg_gen_init(&w->gen, run->pool, run->poolsize) < 0)
        return -1;
    const struct config *cfg = run->cfg;
    char err[300];
    if (cfg->smtp_tls != TLSM_NONE &&
        !(w->smtp_tls = tls_client_ctx(cfg->smtp_tls_ca, cfg->smtp_tls_verify, cfg->smtp_tls_resume, err, sizeof err)))
        return -1;
    if (cfg->pop3_tls != TLSM_NONE &&
        !(w->pop3_tls = tls_client_ctx(cfg->pop3_tls_ca, cfg->pop3_tls_verify, cfg->pop3_tls_resume, err, sizeof err)))
        return -1;
    w->nsmtp = nsmtp;
    w->npop3 = npop3;
    /* each worker paces its share; the shares add up to the configured rates */
    unsigned nw = run->nworkers ? run->nworkers : 1;
    pacer_init(&w->msg_pacer, run->cfg->rate / nw, run->cfg->ramp, run->t0);
    pacer_init(&w->conn_pacer, run->cfg->conn_rate / nw, run->cfg->ramp, run->t0);
    w->smtp = smtp_sessions_new(w, nsmtp, smtp_base);
    w->pop3 = pop3_sessions_new(w, npop3, pop3_base);
    return w->smtp && w->pop3 ? 0 : -1;
}

static void publish(struct worker *w)
{
    unsigned want = atomic_load_explicit(&w->snap_want, memory_order_acquire);
    if (want == atomic_load_explicit(&w->snap_done, memory_order_relaxed))
        return;
    w->st.c.conns_open = smtp_sessions_open(w) + pop3_sessions_open(w);
    stats_snapshot(&w->st, &w->snap);
    atomic_store_explicit(&w->snap_done, want, memory_order_release);
}

void *worker_main(void *arg)
{
    struct worker *w = arg;
    w->phase_seen = PH_SEND;
    atomic_store(&w->smtp_open, w->nsmtp);
    loop_update_now(w->loop);
    smtp_sessions_start(w);
    pop3_sessions_start(w);
    for (;;) {
        loop_run_once(w->loop, 50 * NS_PER_MS);
        int phase = atomic_load_explicit(&w->run->phase, memory_order_acquire);
        if (phase != w->phase_seen) {
            w->phase_seen = phase;
            smtp_sessions_phase(w, phase);
            pop3_sessions_phase(w, phase);
        }
        if (phase != PH_SEND)
            atomic_store_explicit(&w->smtp_open, smtp_sessions_open(w), memory_order_relaxed);
        publish(w);
        /* Stopping: sessions with an answer due finish first (each bounded by its
         * phase timeout). */
        if (phase == PH_STOP && !smtp_sessions_open(w) && !pop3_sessions_open(w))
            break;
    }
    /* A last snapshot may be requested after we stopped: the controller reads the
     * totals directly once joined. */
    return NULL;
}

void worker_free(struct worker *w)
{
    if (w->smtp)
        smtp_sessions_free(w);
    if (w->pop3)
        pop3_sessions_free(w);
    msg_gen_free(&w->gen);
    tls_ctx_free(w->smtp_tls);
    tls_ctx_free(w->pop3_tls);
    loop_free(w->loop);
}
