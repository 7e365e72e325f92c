/* pop3_pick: which mailbox a reader session visits (include/engine/pop3_pick.h): a
 * mail client's due check with pop3.poll_interval, else reader_pick's choice (any
 * while sending, one owed mail while draining or with pop3.visit = owed, the next
 * owed in order in the sweep), which the IMAP readers share. */
#include "engine/pop3_pick.h"

#include "lib/rng.h"

/* The mail client's next check: one interval (+- the jitter) after the one just
 * made was due, so the checks keep their rate however long each took. */
void pop3_requeue_poll(struct pop3_session *s)
{
    struct session_env *env = s->env;
    const struct config *cfg = cfg_of(s);
    double j = cfg->poll_jitter * (2 * rng_unit(&env->poll_rng) - 1);
    struct poll_item it = { s->poll_due + (uint64_t)((double)cfg->poll_interval * (1 + j)), s->pick.user };
    dueheap_push(&env->polls, &it);
    s->polling = 0;
}

int pop3_pick_user(struct pop3_session *s)
{
    struct run *r = s->env->run;
    if (r->fill_mode && atomic_load_explicit(&r->phase, memory_order_relaxed) != PH_SWEEP) {
        s->pick.hold_next = 0;
        return 0;                    /* the fill's readers only verify, after it */
    }
    return reader_pick(&s->pick, s->env, NULL, NULL);
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
    if (!reader_hold(&s->pick, s->env, it.user)) {
        /* the sweep's or another visit's: this check waits for it */
        it.due += 10 * NS_PER_MS;
        dueheap_push(&env->polls, &it);
        pop3_again_in(s, 10);
        return 0;
    }
    s->pick.user = it.user;
    s->polling = 1;
    s->poll_due = it.due;
    /* a check begun late had no free reader: the tester's limit, not the server's */
    stats_lat(env->st, LAT_POLL_LAG, now - it.due);
    env->st->c.polls++;
    env->st->c.polls_late += now - it.due > NS_PER_S;
    return 1;
}
