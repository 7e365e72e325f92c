/* pop3_pick: which mailbox a reader session visits (include/engine/pop3_pick.h):
 * any while sending, one owed mail while draining or with pop3.visit = owed (not
 * one held back by pop3.empty_backoff), the next owed in order in the sweep, a mail
 * client's due check with pop3.poll_interval; the exclusive hold of a mailbox
 * (pop3.exclusive) and the sweep's claim. */
#include "engine/pop3_pick.h"

#include "lib/rng.h"

/* pop3.empty_backoff: the first hold of a mailbox whose visit found none of the
 * mail it owes, doubled at each further one up to the setting; the empty visits in
 * a row live in the hold's low bits (struct run's empty_hold). */
#define EMPTY_FIRST_NS (50 * NS_PER_MS)
#define EMPTY_STREAK 0xfull

void pop3_end_sweep_claim(struct pop3_session *s)
{
    if (s->sweep) {
        /* release: the controller that sees the pass end sees its visits and gains */
        atomic_fetch_sub_explicit(&s->env->run->sweep_active, 1, memory_order_release);
        s->sweep = 0;
    }
}

int pop3_hold_mailbox(struct pop3_session *s, uint32_t u)
{
    struct run *r = s->env->run;
    if (!r->cfg->exclusive)
        return 1;
    if (atomic_exchange_explicit(&r->mailbox_busy[u], 1, memory_order_acquire))
        return 0;
    s->holds_mailbox = 1;
    return 1;
}

void pop3_release_mailbox(struct pop3_session *s)
{
    if (s->holds_mailbox) {
        atomic_store_explicit(&s->env->run->mailbox_busy[s->user], 0, memory_order_release);
        s->holds_mailbox = 0;
    }
}

/* pop3.empty_backoff: how long a mailbox is left after `streak` visits in a row
 * that found none of the mail it owes (1: the first). */
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

/* 1 when user u's mailbox may be visited at now. While the server still queues
 * its mail, an owed mailbox is empty, and readers that went back at once logged
 * in to it as fast as the server answered (37,343 logins in a 14 s step to read
 * 342 messages, at twice a reference server's ceiling): one that found nothing waits its back-off. One whose time came
 * is claimed for another hold, so the readers that woke for it do not all log in
 * to it; its visit then sets the hold it earned. Else the earliest time is kept in
 * s->hold_next. */
int pop3_hold_due(struct pop3_session *s, uint32_t u, uint64_t now)
{
    _Atomic uint64_t *h = s->env->run->empty_hold;
    if (!h)
        return 1;
    uint64_t v = atomic_load_explicit(&h[u], memory_order_relaxed);
    if (!v)
        return 1;
    uint64_t due = v & ~EMPTY_STREAK;
    if (due > now) {
        if (!s->hold_next || due < s->hold_next)
            s->hold_next = due;
        return 0;
    }
    uint64_t k = v & EMPTY_STREAK;
    uint64_t claim = hold_word(now + empty_delay(cfg_of(s), (unsigned)k), k);
    return atomic_compare_exchange_strong_explicit(&h[u], &v, claim, memory_order_relaxed, memory_order_relaxed);
}

/* A visit of a mailbox picked for its owed mail ended with its QUIT answered: one
 * that retrieved none of it while the mailbox still owes holds the mailbox back
 * for longer; one that retrieved some, or left nothing owed, ends the back-off. */
void pop3_empty_visited(struct pop3_session *s, int got)
{
    struct run *r = s->env->run;
    _Atomic uint64_t *h = &r->empty_hold[s->user];
    uint64_t v = atomic_load_explicit(h, memory_order_relaxed);
    if (got || atomic_load_explicit(&r->ledger.owed[s->user], memory_order_relaxed) <= 0) {
        if (v)
            atomic_store_explicit(h, 0, memory_order_relaxed);
        return;
    }
    uint64_t k = v & EMPTY_STREAK;
    k += k < EMPTY_STREAK;
    atomic_store_explicit(h, hold_word(loop_now(s->env->loop) + empty_delay(cfg_of(s), (unsigned)k), k),
                          memory_order_relaxed);
}

/* The mail client's next check: one interval (+- the jitter) after the one just
 * made was due, so the checks keep their rate however long each took. */
void pop3_requeue_poll(struct pop3_session *s)
{
    struct session_env *env = s->env;
    const struct config *cfg = cfg_of(s);
    double j = cfg->poll_jitter * (2 * rng_unit(&env->poll_rng) - 1);
    struct poll_item it = { s->poll_due + (uint64_t)((double)cfg->poll_interval * (1 + j)), s->user };
    dueheap_push(&env->polls, &it);
    s->polling = 0;
}

/* Picks the mailbox for the next session: any user while sending, one that owes
 * messages while draining, the next owing one in order during the sweep (in a full
 * pass, the next one sent mail). */
int pop3_pick_user(struct pop3_session *s)
{
    struct run *r = s->env->run;
    struct ledger *l = &r->ledger;
    int phase = atomic_load_explicit(&r->phase, memory_order_relaxed);
    size_t n = r->users.n;
    s->hold_next = 0;
    if (r->fill_mode && phase != PH_SWEEP)
        return 0;                    /* the fill's readers only verify, after it */
    if (phase == PH_SEND || phase == PH_DRAIN) {
        size_t start = (size_t)rng_range(&s->rng, 0, n - 1);
        /* the drain, and pop3.visit = owed, go only where mail is owed, and not
         * back to a mailbox that had none of it before its back-off ends */
        int owed_only = phase == PH_DRAIN || cfg_of(s)->visit_owed;
        uint64_t now = loop_now(s->env->loop);
        for (size_t k = 0; k < n; k++) {
            uint32_t u = (uint32_t)((start + k) % n);
            if (owed_only && (atomic_load_explicit(&l->owed[u], memory_order_relaxed) <= 0 || !pop3_hold_due(s, u, now)))
                continue;
            if (pop3_hold_mailbox(s, u)) {
                s->user = u;
                s->owed_only = owed_only;
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
                s->user = (uint32_t)u;
                s->sweep = 1;
                s->pass = atomic_load_explicit(&r->sweep_pass, memory_order_acquire);
                atomic_fetch_add_explicit(&r->sweep_active, 1, memory_order_relaxed);
                if (pop3_hold_mailbox(s, (uint32_t)u))
                    return 1;
                s->retry_user = 1;   /* a drain session still has it: come back */
                return 0;
            }
        }
    }
    return 0;
}

/* While sending, with pop3.poll_interval: the next of this worker's mail clients
 * whose check is due (1), or 0 with the session waiting for the next one's time.
 * Due times are read on the loop's clock, the one its timer is armed on (the
 * monotonic clock as of the loop's last wake). */
int pop3_poll_pick(struct pop3_session *s)
{
    struct session_env *env = s->env;
    struct poll_item it;
    uint64_t now = loop_now(env->loop);
    if (!dueheap_pop_due(&env->polls, now, &it)) {
        uint64_t next = dueheap_next(&env->polls);
        set_state(s, PS_IDLE);
        timer_arm(env->loop, &s->backoff, next ? next : now + 100 * NS_PER_MS);
        return 0;
    }
    if (!pop3_hold_mailbox(s, it.user)) {
        /* the sweep's or another visit's: this check waits for it */
        it.due += 10 * NS_PER_MS;
        dueheap_push(&env->polls, &it);
        pop3_again_in(s, 10);
        return 0;
    }
    s->user = it.user;
    s->polling = 1;
    s->poll_due = it.due;
    /* a check begun late had no free reader: the tester's limit, not the server's */
    stats_lat(env->st, LAT_POLL_LAG, now - it.due);
    env->st->c.polls++;
    env->st->c.polls_late += now - it.due > NS_PER_S;
    return 1;
}
