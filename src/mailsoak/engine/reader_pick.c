/* reader_pick: the mailbox a reader visits next, as pop3.c's readers pick it,
 * for the IMAP readers: atomics of the shared run only, no lock. */
#include "engine/reader_pick.h"

#include "engine/shared.h"
#include "lib/loop.h"

/* pop3.empty_backoff: the first hold of a mailbox whose visit found none of the
 * mail it owes, doubled at each further one up to the setting; the empty visits
 * in a row live in the hold's low bits (struct run's empty_hold). */
#define EMPTY_FIRST_NS (50 * NS_PER_MS)
#define EMPTY_STREAK 0xfull

static uint64_t empty_delay(const struct config *cfg, unsigned streak)
{
    uint64_t d = EMPTY_FIRST_NS << (streak > 1 ? (streak < 16 ? streak - 1 : 15) : 0);
    return d < cfg->empty_backoff ? d : cfg->empty_backoff;
}

/* A mailbox's hold: its time rounded up to clear the streak's bits (never early). */
static uint64_t hold_word(uint64_t due_ns, uint64_t streak)
{
    return ((due_ns + EMPTY_STREAK) & ~EMPTY_STREAK) | streak;
}

/* 1 when owed mailbox u may be visited now (its back-off is over, and this pick
 * claimed the next hold); else its time is kept in hold_next if earliest. */
static int hold_due(struct reader_pick *p, struct session_env *env, uint32_t u, uint64_t now)
{
    _Atomic uint64_t *h = env->run->empty_hold;
    if (!h)
        return 1;
    uint64_t v = atomic_load_explicit(&h[u], memory_order_relaxed);
    if (!v)
        return 1;
    uint64_t due = v & ~EMPTY_STREAK;
    if (due > now) {
        if (!p->hold_next || due < p->hold_next)
            p->hold_next = due;
        return 0;
    }
    uint64_t k = v & EMPTY_STREAK;
    uint64_t claim = hold_word(now + empty_delay(env->run->cfg, (unsigned)k), k);
    return atomic_compare_exchange_strong_explicit(&h[u], &v, claim, memory_order_relaxed, memory_order_relaxed);
}

void reader_empty_visited(struct reader_pick *p, struct session_env *env, int got)
{
    struct run *r = env->run;
    if (!p->owed_only || !r->empty_hold)
        return;
    _Atomic uint64_t *h = &r->empty_hold[p->user];
    uint64_t v = atomic_load_explicit(h, memory_order_relaxed);
    if (got || atomic_load_explicit(&r->ledger.owed[p->user], memory_order_relaxed) <= 0) {
        if (v)
            atomic_store_explicit(h, 0, memory_order_relaxed);
        return;
    }
    uint64_t k = v & EMPTY_STREAK;
    k += k < EMPTY_STREAK;
    atomic_store_explicit(h, hold_word(loop_now(env->loop) + empty_delay(r->cfg, (unsigned)k), k),
                          memory_order_relaxed);
}

int reader_hold(struct reader_pick *p, struct session_env *env, uint32_t u)
{
    struct run *r = env->run;
    if (!r->cfg->exclusive)
        return 1;
    if (atomic_exchange_explicit(&r->mailbox_busy[u], 1, memory_order_acquire))
        return 0;
    p->holds_mailbox = 1;
    return 1;
}

void reader_release(struct reader_pick *p, struct session_env *env)
{
    if (p->holds_mailbox) {
        atomic_store_explicit(&env->run->mailbox_busy[p->user], 0, memory_order_release);
        p->holds_mailbox = 0;
    }
}

void reader_end_sweep(struct reader_pick *p, struct session_env *env)
{
    if (p->sweep) {
        /* release: the controller that sees the pass end sees its visits and gains */
        atomic_fetch_sub_explicit(&env->run->sweep_active, 1, memory_order_release);
        p->sweep = 0;
    }
}

void reader_visit_end(struct reader_pick *p, struct session_env *env, int failed)
{
    reader_release(p, env);
    p->retry_user = failed && p->sweep && ++p->sweep_tries < 4;
    if (!p->retry_user) {
        reader_end_sweep(p, env);
        p->sweep_tries = 0;
    }
}

int reader_pick(struct reader_pick *p, struct session_env *env, int (*skip)(void *ud, uint32_t u), void *ud)
{
    struct run *r = env->run;
    struct ledger *l = &r->ledger;
    int phase = atomic_load_explicit(&r->phase, memory_order_relaxed);
    size_t n = r->users.n;
    p->hold_next = 0;
    p->owed_only = 0;
    if (p->retry_user && phase == PH_SWEEP) {
        if (!reader_hold(p, env, p->user))
            return 0;
        p->retry_user = 0;
        return 1;
    }
    if (phase == PH_SEND || phase == PH_DRAIN) {
        size_t start = (size_t)rng_range(&p->rng, 0, n - 1);
        /* the drain, and pop3.visit = owed, go only where mail is owed, and not
         * back to a mailbox that had none of it before its back-off ends */
        int owed_only = phase == PH_DRAIN || r->cfg->visit_owed;
        uint64_t now = loop_now(env->loop);
        for (size_t k = 0; k < n; k++) {
            uint32_t u = (uint32_t)((start + k) % n);
            if (skip && skip(ud, u))
                continue;
            if (owed_only &&
                (atomic_load_explicit(&l->owed[u], memory_order_relaxed) <= 0 || !hold_due(p, env, u, now)))
                continue;
            if (reader_hold(p, env, u)) {
                p->user = u;
                p->owed_only = owed_only;
                return 1;
            }
        }
        return 0;
    }
    if (phase == PH_SWEEP) {
        for (;;) {
            /* acquire: the cursor's rewind publishes the pass and whether it is full */
            uint64_t u = atomic_fetch_add_explicit(&r->sweep_cursor, 1, memory_order_acquire);
            if (u >= n)
                return 0;
            /* a full pass also opens the mailboxes sent mail that owe nothing: a copy
             * delivered again lands there (verdict/sweep.h) */
            if (atomic_load_explicit(&l->owed[u], memory_order_relaxed) > 0 ||
                (atomic_load_explicit(&r->sweep_full, memory_order_relaxed) &&
                 atomic_load_explicit(&l->mailed[u], memory_order_relaxed))) {
                p->user = (uint32_t)u;
                p->sweep = 1;
                p->pass = atomic_load_explicit(&r->sweep_pass, memory_order_acquire);
                atomic_fetch_add_explicit(&r->sweep_active, 1, memory_order_relaxed);
                if (reader_hold(p, env, (uint32_t)u))
                    return 1;
                p->retry_user = 1;   /* another reader has it: come back */
                return 0;
            }
        }
    }
    return 0;
}
