/* worker: one thread, one loop, its share of the sessions. It watches the run's
 * phase and the controller's snapshot requests between loop iterations and walks
 * the protocols' session tables; nothing here takes a lock, and nothing here knows
 * SMTP from POP3. */
#include "engine/worker.h"

#include <string.h>

#include "engine/imap.h"
#include "engine/pop3.h"
#include "engine/smtp.h"
#include "lib/tls.h"

static unsigned open_total(const struct worker *w)
{
    unsigned n = 0;
    for (int k = 0; k < SESSION_KINDS; k++)
        n += session_set_open(&w->sessions[k]);
    return n;
}

int worker_init(struct worker *w, unsigned idx, struct run *run, unsigned nsmtp, unsigned npop3,
                unsigned smtp_base, unsigned pop3_base)
{
    memset(w, 0, sizeof *w);
    w->idx = idx;
    w->run = run;
    stats_init(&w->st, (unsigned)run->cfg->error_examples);
    w->loop = loop_new();
    if (!w->loop || msg_gen_init(&w->gen, run->pool, run->poolsize) < 0)
        return -1;
    msg_gen_content(&w->gen, (enum msg_content)run->cfg->content, &run->corpus);
    const struct config *cfg = run->cfg;
    struct session_env *env = &w->env;
    *env = (struct session_env){
        .loop = w->loop, .run = run, .st = &w->st, .gen = &w->gen, .shard = idx,
        .rr = idx, .dial = session_dial,
    };
    char err[300];
    if (cfg->smtp_tls != TLSM_NONE &&
        !(env->smtp_tls = tls_client_ctx(cfg->smtp_tls_ca, cfg->smtp_tls_verify, cfg->smtp_tls_resume, err, sizeof err)))
        return -1;
    if (cfg->pop3_tls != TLSM_NONE &&
        !(env->pop3_tls = tls_client_ctx(cfg->pop3_tls_ca, cfg->pop3_tls_verify, cfg->pop3_tls_resume, err, sizeof err)))
        return -1;
    /* each worker paces its share; the shares add up to the configured rates (and
     * independent Poisson processes add up to one of the summed rate) */
    unsigned nw = run->nworkers ? run->nworkers : 1;
    pacer_init(&env->msg_pacer, cfg->rate / nw, cfg->ramp, run->t0, cfg->arrivals, run->seed ^ (0xa77e000000000000ull + idx));
    if (cfg->profile.n)
        pacer_stages(&env->msg_pacer, &run->stages, 1.0 / nw);
    pacer_init(&env->conn_pacer, cfg->conn_rate / nw, cfg->ramp, run->t0, ARRIVALS_CONSTANT, 0);
    if (cfg->reader_protocol == READERS_IMAP && cfg->imap_tls != TLSM_NONE &&
        !(env->imap_tls = tls_client_ctx(cfg->imap_tls_ca, cfg->imap_tls_verify, 0, err, sizeof err)))
        return -1;
    if (cfg->poll_interval) {
        /* this worker's share of the mail clients, each first due at a random point
         * of its first interval, so the checks come evenly from the start */
        dueheap_init(&env->polls, sizeof(struct poll_item));
        rng_seed(&env->poll_rng, run->seed ^ (0x706f6c6c00000000ull + idx));
        size_t pop = cfg->poll_users && cfg->poll_users < run->users.n ? (size_t)cfg->poll_users : run->users.n;
        for (size_t u = idx; u < pop; u += nw) {
            struct poll_item it = { run->t0 + (uint64_t)(rng_unit(&env->poll_rng) * (double)cfg->poll_interval),
                                    (uint32_t)u };
            dueheap_push(&env->polls, &it);
        }
    }
    const unsigned n[SESSION_KINDS] = { nsmtp, npop3 }, base[SESSION_KINDS] = { smtp_base, pop3_base };
    /* the readers speak POP3 or IMAP (readers.protocol) */
    const struct session_ops *ops[SESSION_KINDS] = { &smtp_ops,
                                                     cfg->reader_protocol == READERS_IMAP ? &imap_ops : &pop3_ops };
    for (int k = 0; k < SESSION_KINDS; k++)
        session_set_init(&w->sessions[k], ops[k], env, n[k], base[k]);
    return 0;
}

static void publish(struct worker *w)
{
    unsigned want = atomic_load_explicit(&w->snap_want, memory_order_acquire);
    if (want == atomic_load_explicit(&w->snap_done, memory_order_relaxed))
        return;
    w->st.c.conns_open = open_total(w);
    stats_snapshot(&w->st, &w->snap);
    atomic_store_explicit(&w->snap_done, want, memory_order_release);
}

void *worker_main(void *arg)
{
    struct worker *w = arg;
    w->phase_seen = PH_SEND;
    atomic_store(&w->smtp_open, w->sessions[SESSIONS_SMTP].n);
    loop_update_now(w->loop);
    for (int k = 0; k < SESSION_KINDS; k++)
        session_set_start(&w->sessions[k]);
    for (;;) {
        loop_run_once(w->loop, 50 * NS_PER_MS);
        int phase = atomic_load_explicit(&w->run->phase, memory_order_acquire);
        if (phase != w->phase_seen) {
            w->phase_seen = phase;
            for (int k = 0; k < SESSION_KINDS; k++)
                session_set_phase(&w->sessions[k], phase);
        }
        if (phase != PH_SEND)
            atomic_store_explicit(&w->smtp_open, session_set_open(&w->sessions[SESSIONS_SMTP]), memory_order_relaxed);
        publish(w);
        /* between two turns: no session code runs, no entry pointer is held */
        ledger_quiescent(&w->run->ledger, w->env.shard);
        /* Stopping: sessions with an answer due finish first (each bounded by its
         * phase timeout). */
        if (phase == PH_STOP && !open_total(w))
            break;
    }
    ledger_offline(&w->run->ledger, w->env.shard);
    /* A last snapshot may be requested after we stopped: the controller reads the
     * totals directly once joined. */
    return NULL;
}

void worker_free(struct worker *w)
{
    for (int k = 0; k < SESSION_KINDS; k++)
        session_set_free(&w->sessions[k]);
    msg_gen_free(&w->gen);
    retryq_free(&w->env.retry);
    dueheap_free(&w->env.polls);
    tls_ctx_free(w->env.smtp_tls);
    tls_ctx_free(w->env.pop3_tls);
    tls_ctx_free(w->env.imap_tls);
    loop_free(w->loop);
}
