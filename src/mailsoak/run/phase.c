/* phase: the run window's phases (include/run/phase.h): send for the duration (or
 * N messages), drain until the mailboxes owe nothing and the server's queue is
 * empty, sweep until the server settled (verdict/sweep.c's rule, the queue read
 * against the ledger by verdict/reconcile.c), stop. */
#include "run/phase.h"

#include <stdio.h>

#include "run/sources.h"
#include "verdict/reconcile.h"

static unsigned senders_open(const struct controller *ct)
{
    unsigned n = 0;
    for (unsigned i = 0; i < ct->nw; i++)
        n += atomic_load_explicit(&ct->w[i].smtp_open, memory_order_relaxed);
    return n;
}

void run_set_phase(struct run *r, struct controller *ct, int phase)
{
    atomic_store_explicit(&r->phase, phase, memory_order_release);
    for (unsigned i = 0; i < ct->nw; i++)
        loop_wake(ct->w[i].loop);
}

/* The server's queue as the sweep sees it (a sweep_seen callback): whether what it
 * holds can no longer change a verdict. Read per message, it always can: the entries
 * it holds are pending_queued (verdict/reconcile.c), and one it did not hold when the
 * pass began cannot reach a mailbox later (an MTA removes a queue file only after
 * the delivery), so even while other mail stays queued a message in neither the
 * queue nor its mailbox is lost. A queued message this scan could not read may be
 * ours: never settled while the queue holds one (the scan itself saw it; the
 * collector's count, made every queue_interval, could be a zero from before it was
 * queued). A probe's spool, counted only, must be empty in a walk made now, not in
 * the last one of its queue_interval: a zero counted before a message was queued would
 * let the sweep prove lost what the queue still holds (t_queue_unreadable.sh). With
 * no spool known, only the mailboxes can tell (1). */
static int queue_settled(void *arg, int fresh)
{
    struct controller *ct = arg;
    int owed = reconcile_queue(ct->queue, ct->run, fresh);
    if (owed >= 0)
        return 1;
    if (owed == RECONCILE_UNREADABLE)
        return 0;
    struct series_now cn;
    sources_now(ct->sources, &cn);
    if (!cn.has.spool)
        return 1;
    if (sources_refresh(ct->sources, ct->run->cfg->server.sample_interval) < 0)
        return 0;
    sources_now(ct->sources, &cn);
    return cn.spool == 0;
}

/* What the sweep sees now: the readers' atomics and the queue. */
struct sweep_seen run_sweep_seen(struct controller *ct, uint64_t now)
{
    struct run *r = ct->run;
    return (struct sweep_seen){
        .now = now,
        .gains = atomic_load(&r->sweep_gains),
        .pass_done = atomic_load_explicit(&r->sweep_cursor, memory_order_acquire) >= r->users.n &&
                     atomic_load_explicit(&r->sweep_active, memory_order_acquire) <= 0,
        .owed = atomic_load(&r->ledger.owed_total),
        .queue_settled = queue_settled,
        .arg = ct,
    };
}

/* A new sweep pass for the readers: whether it is full, its number, then the
 * cursor back to 0. */
static void publish_pass(struct controller *ct)
{
    atomic_store_explicit(&ct->run->sweep_full, ct->sw.full, memory_order_relaxed);
    atomic_store_explicit(&ct->run->sweep_pass, ct->sw.pass, memory_order_release);
    atomic_store_explicit(&ct->run->sweep_cursor, 0, memory_order_release);
}

uint64_t run_send_ns(const struct run *r)
{
    return r->cfg->profile.n ? stage_clock_total(&r->stages) : r->cfg->duration;
}

void run_stage_interval(struct controller *ct, uint64_t ns, const struct interval_view *v,
                        const struct verdict_sample *ks)
{
    const struct config *cfg = ct->cfg;
    const struct rate_stages *pr = &cfg->profile;
    struct run *r = ct->run;
    if (!pr->n || cfg->profile_end != PROFILE_END_DECIDED)
        return;
    double t0[RATE_STAGES_MAX], t1[RATE_STAGES_MAX], planned[RATE_STAGES_MAX];
    for (unsigned i = 0; i < pr->n; i++) {
        t0[i] = (double)stage_clock_start(&r->stages, i) / 1e9;
        t1[i] = t0[i] + (double)stage_clock_dur(&r->stages, i) / 1e9;
        planned[i] = (double)pr->dur_ns[i] / 1e9;
    }
    /* the rules capacity's staircase judges its levels by (cmd/cmd_capacity.c) */
    double iv_s = (double)cfg->interval / 1e9;
    struct stage_end_rules rules = { .v = DRIFT_VAR_BATCH, .tol_s = iv_s / 2, .first = pr->n > 1 };
    drift_rules_level(&rules.dr, cfg->capacity.queue_growth, (double)cfg->capacity.level / 1e9, iv_s);
    rules.dr.arrivals_cv2 = cfg->arrivals == ARRIVALS_EXPONENTIAL ? 1 : 0;
    /* the series the level is judged on after the run, as the timeline writes it */
    struct drift_point pt = { .t = v->t, .accepted = (double)v->dsent, .read = (double)v->dread,
                              .unread = stage_end_backlog(&ct->stage_end, ks->has_spool, ks->spool, (double)v->unread) };
    unsigned k = 0;
    struct drift_result d;
    enum stage_end_act act = stage_end_step(&ct->stage_end, &rules, t0, t1, planned, pr->n, &pt, &k, &d);
    if (act == STAGE_GO_ON) {
        /* A stage that runs out its time undecided, its backlog grown because our
         * readers fell behind (verdict/keptup.h, by its slope as a capacity level
         * is judged after the run): the stages after it would start with the mail
         * they left, and say nothing of the server, so the send window ends with it.
         * Not where the stages weigh the server's queue, which the mail our readers
         * leave in the mailboxes does not enter (capacity/level.c asks whose growth
         * it is of such a level only where a gate failed). */
        k = ct->stage_end.cur;
        if (ct->stage_end.series == LEVEL_QUEUE || k < rules.first || k >= pr->n || v->t + rules.tol_s < t1[k] ||
            ct->stage_asked > k)
            return;
        ct->stage_asked = k + 1;
        struct verdict_window w = ct->res->window;
        w.from_s = t0[k];
        struct keptup_result kept;
        verdict_keptup_slope(&w, cfg->capacity.queue_growth, &kept);
        if (kept.outcome != KEPTUP_TESTER)
            return;
        stage_clock_end(&r->stages, k, ns, 1);
        fprintf(stderr, "[%6.0fs] stage %u of %u (%.6g msg/s) ran out undecided, our readers behind (%s): the send "
                "window ends\n", v->t, k + 1, pr->n, pr->rate[k], kept.why);
        return;
    }
    stage_clock_end(&r->stages, k, ns, act == STAGE_STOP);
    fprintf(stderr, "[%6.0fs] stage %u of %u (%.6g msg/s) decided in %.0f s: %s\n", v->t, k + 1, pr->n, pr->rate[k],
            d.at_s, act == STAGE_STOP ? "behind, the send window ends" : "kept up, the next stage begins");
}

/* The run window: send for the duration (or N messages), drain until the
 * mailboxes owe nothing and the server's queue is empty (within the drain time),
 * sweep until the server settled (within the sweep time), stop. */
int run_next_phase(struct controller *ct, int phase, uint64_t now, uint64_t phase_start)
{
    struct run *r = ct->run;
    const struct config *cfg = r->cfg;
    if (phase == PH_SEND && r->fill_mode)   /* the fill sends its plan, then waits */
        return atomic_load(&r->fill_next) >= r->fill_total ? PH_DRAIN : PH_SEND;
    if (phase == PH_SEND && r->ladder && now - r->t0 < run_send_ns(r)) {
        /* the size ladder: its messages, then the drain (the first EHLO tells how many) */
        uint64_t total = atomic_load(&r->ladder_total);
        return total && atomic_load(&r->ladder_next) >= total ? PH_DRAIN : PH_SEND;
    }
    if (phase == PH_SEND) {
        int over = now - r->t0 >= run_send_ns(r) || (cfg->messages && atomic_load(&r->accepted) >= cfg->messages);
        if (!cfg->senders)
            over = now - r->t0 >= run_send_ns(r);   /* a readers-only run reads for the duration */
        return !over ? PH_SEND : cfg->readers || r->imap_own ? PH_DRAIN : PH_STOP;
    }
    if (phase == PH_DRAIN) {
        /* While the server's queue holds mail its mailboxes are not final. */
        struct series_now cn;
        sources_now(ct->sources, &cn);
        int queue_busy = cn.has.spool && cn.spool > 0;
        /* deferred messages (smtp.retry) still go out during the drain */
        int quiet = senders_open(ct) == 0 && (r->fill_mode || atomic_load(&r->ledger.owed_total) <= 0) &&
                    atomic_load(&r->retry_pending) <= 0;
        if (!quiet)
            ct->quiet_walked = 0;
        if (quiet && cn.has.spool) {
            /* The spool is counted every queue_interval: a count this old would hold the
             * drain up, and an empty one walked before the senders were done (before
             * the send, even) says nothing, and would end the drain while the queue
             * still holds mail for a retry: one walk now. */
            sources_refresh(ct->sources, ct->quiet_walked ? cfg->server.sample_interval : 0);
            ct->quiet_walked = 1;
            sources_now(ct->sources, &cn);
            queue_busy = cn.spool > 0;
        }
        int done = quiet && !queue_busy;
        if (!done && now - phase_start < cfg->drain)
            return PH_DRAIN;
        /* With nothing owed the sweep is one closing pass over the mailboxes sent
         * mail, for copies delivered again where nothing is owed (verdict/sweep.h);
         * the fill's verification needs none, and run.sweep_all = no leaves it out. */
        int owed = atomic_load(&r->ledger.owed_total) > 0, full = !r->fill_mode && cfg->sweep_all;
        if (!cfg->sweep || (!owed && (!full || !atomic_load(&r->accepted))))
            return PH_STOP;
        r->ledger.swept = owed;
        struct sweep_seen seen = run_sweep_seen(ct, now);
        sweep_begin(&ct->sw, &(struct sweep_rule){ cfg->settle, cfg->sweep_timeout, full }, &seen);
        publish_pass(ct);
        return PH_SWEEP;
    }
    if (phase == PH_SWEEP) {
        struct sweep_seen seen = run_sweep_seen(ct, now);
        if (seen.owed > 0)
            r->ledger.swept = 1;     /* mail owed in the sweep: what it leaves unread is pending for it */
        enum sweep_next n = sweep_step(&ct->sw, &seen);
        if (n == SWEEP_NEW_PASS)
            publish_pass(ct);
        return n == SWEEP_DONE ? PH_STOP : PH_SWEEP;
    }
    return PH_STOP;
}
