/* imap_idle: the idle model (imap.models = idle:N) — each idle user's client
 * holds one connection on its INBOX in IDLE (RFC 2177), as Thunderbird and Apple
 * Mail do. An EXISTS that raises the count ends the IDLE (DONE) and the client
 * syncs: lists the UIDs above those it has seen, fetches their bodies, deletes
 * them (imap.delete = now), and idles again. An IDLE is renewed before
 * imap.idle_renew, and a renewal's sync that finds mail no EXISTS announced
 * counts the server's missed push. Per message: acceptance to the EXISTS seen
 * (push.exists) only when the client was idling when it came, and acceptance to
 * the body fetched (push.fetched); a message whose client was busy when its
 * EXISTS came is counted as such (push_busy), never charged to the server. When
 * the run sweeps or stops, the client leaves its IDLE and logs out. */
#include "engine/imap_idle.h"

#include <stdio.h>

#include "engine/imap_session.h"

static int sending(const struct imap_session *s)
{
    int phase = atomic_load_explicit(&s->env->run->phase, memory_order_relaxed);
    return phase == PH_SEND || phase == PH_DRAIN;
}

/* DONE ends the IDLE; its tagged reply follows. Input already here answers
 * nothing DONE asked. */
static void done(struct imap_session *s)
{
    timer_cancel(s->env->loop, &s->backoff);
    conn_write(&s->c, "DONE\r\n", 6);
    s->pre = conn_avail(&s->c);
    s->state = IS_DONE;
    conn_deadline(&s->c, imap_cfg(s)->imap_timeout);
    conn_flush(&s->c);
}

/* Each sync of an idle client is a reader visit (kept-up's): empty when it
 * found none of the mail owed; full when it retrieved mail that waited for the
 * client, busy when its EXISTS came or logging in. A pushed sync's mail came
 * while the client waited for the server, and a renewal's no EXISTS announced
 * (the server's missed push): neither waited for the reader. */
static void sync_counted(struct imap_session *s)
{
    s->env->st->c.idle_syncs++;
    imap_visit_said(s, imap_got_ours(s), s->why_sync == SYNC_BUSY || s->why_sync == SYNC_LOGIN);
}

void imap_sync_done(struct imap_session *s)
{
    if (s->idle_client)
        sync_counted(s);
    if (!s->idle_client || s->leaving || !sending(s)) {
        imap_logout(s);
        return;
    }
    uint64_t top = s->nm ? s->m[s->nm - 1].uid : 0;
    if (!s->partial && top >= s->next_uid)
        s->next_uid = top + 1;       /* seen: the next sync lists only what is newer */
    s->t_exists = 0;
    if (s->busy_news || (s->partial && s->nm)) {
        /* news while the sync ran, or more than a sync takes: sync again at once,
         * the delay the client's */
        s->busy_news = 0;
        s->why_sync = SYNC_BUSY;
        imap_sync_start(s);
        return;
    }
    s->t_idle = mono_ns();
    imap_send(s, IS_IDLE_CMD, "IDLE");
}

void imap_idle_exists(struct imap_session *s, uint64_t n)
{
    if (!s->idle_client || n <= s->exists)
        return;
    if (s->state == IS_IDLING || s->state == IS_IDLE_CMD || s->state == IS_DONE) {
        /* pushed to a client in IDLE (asking for it, or ending it): the server's
         * push, timed from the first EXISTS of the sync it starts */
        if (!s->t_exists) {
            s->t_exists = mono_ns();
            s->why_sync = SYNC_PUSH;
        }
        if (s->state == IS_IDLING)
            done(s);
        return;
    }
    /* news while the client fetched, stored or logged in: synced next, and
     * counted as the client's delay, not the server's; a renewal's NOOP shows
     * what the server did not push, and its sync lists it */
    if (s->state != IS_NOOP)
        s->busy_news = 1;
}

void imap_idle_continued(struct imap_session *s)
{
    stats_lat(s->env->st, LAT_IMAP_IDLE, mono_ns() - s->t_sent);
    s->state = IS_IDLING;
    conn_deadline(&s->c, 0);         /* idle for as long as the renewal allows */
    if (s->t_exists || s->leaving || !sending(s)) {
        done(s);                     /* news or the run's end came before the "+" */
        return;
    }
    s->why_sync = SYNC_RENEW;        /* until an EXISTS says otherwise */
    timer_arm_in(s->env->loop, &s->backoff, imap_cfg(s)->imap_idle_renew);
    conn_trim(&s->c);                /* idling for minutes: no buffers held */
}

void imap_idle_renew(struct imap_session *s)
{
    s->why_sync = SYNC_RENEW;
    done(s);
}

void imap_idle_tagged(struct imap_session *s, int ok)
{
    if (!ok || s->leaving || !sending(s)) {
        imap_logout(s);
        return;
    }
    if (s->state == IS_DONE && s->why_sync == SYNC_RENEW) {
        /* a server may show news only when asked: what this NOOP shows, no
         * EXISTS pushed while the client idled */
        s->t_exists = 0;
        imap_send(s, IS_NOOP, "NOOP");
        return;
    }
    imap_sync_start(s);
}

void imap_idle_phase(struct imap_session *s, int phase)
{
    if (phase == PH_SEND || phase == PH_DRAIN)
        return;
    s->leaving = 1;                  /* the sweep reads every mailbox: the idle clients leave */
    if (s->state == IS_IDLING)
        done(s);
}

void imap_idle_read(struct imap_session *s, const struct ledger_entry *e, uint64_t fetched)
{
    struct session_env *env = s->env;
    struct run *r = env->run;
    uint64_t acc = r->t0 + (uint64_t)e->accepted_ms * NS_PER_MS;
    if (fetched > acc)
        stats_lat(env->st, LAT_PUSH_FETCHED, fetched - acc);
    switch (s->why_sync) {
    case SYNC_PUSH:
        if (s->t_exists >= acc) {
            stats_lat(env->st, LAT_PUSH_EXISTS, s->t_exists - acc);
            return;
        }
        /* accepted after the EXISTS this sync answered: it came while the client
         * was busy with the others */
        env->st->c.push_busy++;
        return;
    case SYNC_RENEW:
        /* no EXISTS announced it while the client idled */
        env->st->c.push_missed++;
        stats_error(env->st, "imap_idle_unannounced", "a message no EXISTS announced, found when IDLE was renewed");
        return;
    default:
        env->st->c.push_busy++;      /* the client was logging in or busy */
        return;
    }
}
