/* imap_sync: what an IMAP reader does with a selected mailbox — list its UIDs
 * (from next_uid), fetch the bodies of those not known to be foreign, judge each
 * (ours, intact, for this mailbox), flag ours and our stale mail \Deleted, expunge
 * them (UID EXPUNGE with UIDPLUS, else EXPUNGE), and count ours read when the
 * EXPUNGE is answered: that is when IMAP commits a deletion. What was removed is
 * what the server reported removed (its untagged EXPUNGE responses, by message
 * number), never what was asked: a refused STORE with its UID EXPUNGE pipelined
 * behind may still have removed mail, and an EXPUNGE answered OK may have removed
 * nothing. A listing whose every message was fetched is complete: only such a
 * visit, in the sweep after the server settled, can prove a message lost. A
 * client that leaves what it read (imap.delete = never or a DURATION) flags it
 * \Seen instead, and with a DURATION deletes it at the first sync after it is
 * that much older than its acceptance. */
#include "engine/imap_sync.h"

#include <stdio.h>
#include <string.h>

#include "engine/foreign.h"
#include "engine/imap_session.h"
#include "engine/known.h"
#include "lib/alloc.h"

/* The UIDs of the visit's messages in state st as a set ("3:7,9") into out;
 * how many it names. Listed in ascending order, so runs are ranges. A UID has
 * ten digits at most (imap_fetch_text refuses others): eleven bytes a message,
 * with its comma or its share of a range, and the set fits. */
_Static_assert(IMAP_VISIT_MAX * 11 + 1 <= IMAP_SET_MAX, "a visit's UID set fits in IMAP_SET_MAX");
static size_t uid_set(const struct imap_session *s, enum mstate st, char *out, size_t outlen)
{
    size_t k = 0, count = 0;
    out[0] = 0;
    for (size_t i = 0; i < s->nm; i++) {
        if (s->m[i].st != st)
            continue;
        uint64_t lo = s->m[i].uid, hi = lo;
        while (i + 1 < s->nm && s->m[i + 1].st == st && s->m[i + 1].uid == hi + 1) {
            hi++;
            i++;
            count++;
        }
        count++;
        int w = lo == hi ? snprintf(out + k, outlen - k, "%s%llu", k ? "," : "", (unsigned long long)lo)
                         : snprintf(out + k, outlen - k, "%s%llu:%llu", k ? "," : "", (unsigned long long)lo,
                                    (unsigned long long)hi);
        k += (size_t)w;
    }
    return count;
}

static struct umsg *find_uid(struct imap_session *s, uint64_t uid)
{
    for (size_t j = 0; j < s->nm; j++) {
        size_t i = (s->hint + j) % s->nm;
        if (s->m[i].uid == uid) {
            s->hint = i + 1;
            return &s->m[i];
        }
    }
    return NULL;
}

/* Foreign mail is known by its mailbox's UIDVALIDITY and its UID. */
static uint64_t uid_key(const struct imap_session *s, uint64_t uid)
{
    char key[48];
    int kl = snprintf(key, sizeof key, "%llu.%llu", (unsigned long long)s->uidvalidity, (unsigned long long)uid);
    return foreign_key(key, (size_t)kl);
}

void imap_sync_start(struct imap_session *s)
{
    s->nm = s->hint = 0;
    s->listed = s->partial = s->purging = s->store_refused = 0;
    /* an empty mailbox needs no listing, but at an IDLE's renewal: then the
     * listing looks for what no EXISTS announced */
    if (!s->exists && s->why_sync != SYNC_RENEW) {
        s->listed = 1;
        s->t_list = mono_ns();
        imap_sync_done(s);
        return;
    }
    /* imap.delete = DURATION: what was read and left lies below next_uid, and
     * its age is looked at each time */
    uint64_t from = s->next_uid && !s->delete_after ? s->next_uid : 1;
    imap_send(s, IS_LIST, "UID FETCH %llu:* (UID)", (unsigned long long)from);
}

static void delete_aged(struct imap_session *s);

/* LOGOUT behind the sync's last command when the session ends with the sync
 * (every session's but an idle client's), and nothing but LOGOUT can follow:
 * expunge says a STORE of \Deleted is in flight, so an EXPUNGE follows it,
 * pipelined (UIDPLUS) or sent after its answer. */
static void queue_logout(struct imap_session *s, int expunge)
{
    if (!s->idle_client && (!expunge || s->cap_uidplus))
        imap_queue(s, IS_LOGOUT, "LOGOUT");
}

/* UID EXPUNGE of the messages in state st behind their STORE. Only with
 * UIDPLUS: a plain EXPUNGE behind a STORE that failed would remove what others
 * flagged; a UID EXPUNGE removes only those its STORE flagged. */
static void queue_expunge(struct imap_session *s, enum mstate st)
{
    char set[IMAP_SET_MAX];
    if (s->cap_uidplus && uid_set(s, st, set, sizeof set))
        imap_queue(s, IS_EXPUNGE, "UID EXPUNGE %s", set);
}

static void fetch_bodies(struct imap_session *s)
{
    char set[IMAP_SET_MAX];
    if (!uid_set(s, M_LISTED, set, sizeof set)) {
        delete_aged(s);
        return;
    }
    imap_send(s, IS_FETCH, "UID FETCH %s (UID RFC822.SIZE BODY.PEEK[])", set);
}

/* imap.delete = DURATION: what this client read and left earlier and is now
 * older than that, flagged deleted and expunged; then the sync is done. */
static void delete_aged(struct imap_session *s)
{
    char set[IMAP_SET_MAX];
    if (!uid_set(s, M_AGED, set, sizeof set)) {
        imap_sync_done(s);
        return;
    }
    s->purging = 1;
    imap_send(s, IS_STORE, "UID STORE %s +FLAGS.SILENT (\\Deleted)", set);
    queue_expunge(s, M_AGED);
    queue_logout(s, 1);
}

/* The aged messages' EXPUNGE was answered: those the server reported removed
 * are forgotten by this client; the rest are tried again at the next sync. */
static void forget_aged(struct imap_session *s)
{
    struct run *r = s->env->run;
    for (size_t i = 0; i < s->nm; i++)
        if (s->m[i].st == M_AGED && s->m[i].gone) {
            known_del(&r->seen, s->pick.user, uid_key(s, s->m[i].uid));
            s->m[i].st = M_KEEP;
        }
}

/* After the fetch: flag ours (and our stale mail) deleted, or go on. */
static void delete_fetched(struct imap_session *s)
{
    char set[IMAP_SET_MAX];
    if (!uid_set(s, M_DELETE, set, sizeof set)) {
        delete_aged(s);
        return;
    }
    /* imap.delete = never or DURATION: flagged seen, as a client that read it,
     * and left; the aged flagged deleted behind it */
    imap_send(s, IS_STORE, "UID STORE %s +FLAGS.SILENT (%s)", set, s->keep ? "\\Seen" : "\\Deleted");
    int aged = s->keep && uid_set(s, M_AGED, set, sizeof set);
    if (aged) {
        imap_queue(s, IS_STORE, "UID STORE %s +FLAGS.SILENT (\\Deleted)", set);
        queue_expunge(s, M_AGED);
    } else if (!s->keep) {
        queue_expunge(s, M_DELETE);
    }
    queue_logout(s, aged || !s->keep);
}

/* Retrieved, not deleted (the STORE or EXPUNGE refused): not read, still owed. */
static void not_deleted(struct imap_session *s)
{
    for (size_t i = 0; i < s->nm; i++)
        if (s->m[i].st == M_DELETE) {
            s->env->st->c.peeked += s->m[i].ours;
            s->m[i].st = M_KEEP;
        }
}

/* The EXPUNGE was answered: each of ours the server reported removed is read
 * (with imap.delete = never, the STORE of \Seen answered: each of ours it
 * named). */
static void commit_reads(struct imap_session *s)
{
    struct session_env *env = s->env;
    struct run *r = env->run;
    int late = atomic_load_explicit(&r->phase, memory_order_relaxed) == PH_SWEEP;
    for (size_t i = 0; i < s->nm; i++) {
        struct umsg *m = &s->m[i];
        if (m->st == M_DELETE && !s->keep && !m->gone)
            continue;                /* not removed: not_deleted() */
        /* found earlier: its chunk may have been compacted since (ledger_hold) */
        struct ledger_entry *e = m->st == M_DELETE && m->ours ? ledger_hold(&r->ledger, m->seq, m->rcpt, s->pick.user) : NULL;
        if (m->st == M_DELETE && s->keep) {  /* left on the server: no reader fetches it again */
            uint64_t k = uid_key(s, m->uid);
            known_add(&r->seen, s->pick.user, k);
            /* its age, for imap.delete = DURATION: from its acceptance, or from
             * now for what is not ours to time (or no longer has its time) */
            uint32_t *at = known_seen(&r->seen, s->pick.user, k);
            uint32_t now = run_ms(r, loop_now(env->loop));
            int timed = e && !(atomic_load_explicit(&e->state, memory_order_relaxed) & LS_REVIVED);
            if (at)
                *at = timed && e->accepted_ms <= now ? e->accepted_ms : now;
        }
        if (!e)
            continue;
        uint32_t st = atomic_load_explicit(&e->state, memory_order_acquire);
        ledger_read(&r->ledger, e, late);
        env->st->c.read++;
        if (st & LS_REVIVED) {
            /* a duplicate of a compacted message: no acceptance time left to time it from */
        } else if (st & LS_ACCEPTED) {
            uint64_t acc = r->t0 + (uint64_t)e->accepted_ms * NS_PER_MS;
            if (m->t > acc)
                stats_lat(env->st, LAT_DELIVERY, m->t - acc);
            if (s->idle_client)
                imap_idle_read(s, e, m->t);
        } else if (s->idle_client) {
            /* pushed and fetched before its sender took the server's 250: no
             * acceptance to time it from, the tester's lag */
            env->st->c.push_busy++;
        }
        m->st = M_KEEP;
    }
}

/* Messages flagged \Deleted and not reported removed. */
static int still_flagged(const struct imap_session *s)
{
    for (size_t i = 0; i < s->nm; i++)
        if (s->m[i].st == M_DELETE && !s->m[i].gone)
            return 1;
    return 0;
}

void imap_expunged(struct imap_session *s, uint64_t n)
{
    for (size_t i = 0; i < s->nm; i++) {
        struct umsg *m = &s->m[i];
        if (m->lseq == n) {
            m->gone = 1;
            m->lseq = 0;
        } else if (m->lseq > n) {
            m->lseq--;
        }
    }
}

int imap_got_ours(const struct imap_session *s)
{
    for (size_t i = 0; i < s->nm; i++)
        if (s->m[i].ours)
            return 1;
    return 0;
}

void imap_visit_said(struct imap_session *s, int got, int waited)
{
    struct session_env *env = s->env;
    /* a listing refused or cut short proves nothing of what the mailbox holds,
     * and the sweep comes after the window kept-up judges */
    if (s->pick.sweep || !s->listed || s->partial || s->refused)
        return;
    if (!got && atomic_load_explicit(&env->run->ledger.owed[s->pick.user], memory_order_relaxed) > 0)
        env->st->c.empty_visits++;
    env->st->c.full_visits += got && waited;
}

void imap_visit_done(struct imap_session *s)
{
    struct run *r = s->env->run;
    int got = imap_got_ours(s);
    s->env->st->c.pop3_sessions++;   /* reader sessions, whichever protocol */
    /* a drain reader's or a poll client's session is its visit; an idle
     * client's syncs were each one (imap_idle.c) */
    if (!s->idle_client)
        imap_visit_said(s, got, 1);
    reader_empty_visited(&s->pick, s->env, got);
    if (s->listed && !s->partial && !s->refused)
        ledger_visited(&r->ledger, s->pick.user, s->pick.sweep ? s->pick.pass : 0, run_ms(r, mono_ns()));
    imap_finish(s, s->refused);
}

/* One message's body came whole in a FETCH response: is it ours, to delete? */
static void body_done(struct imap_session *s, struct umsg *m)
{
    struct session_env *env = s->env;
    struct run *r = env->run;
    uint32_t user = s->pick.user;
    enum msg_result v = s->fr.v;
    m->t = mono_ns();
    m->st = M_KEEP;
    if (v == MSG_FOREIGN) {
        /* not ours: left alone, and from now on skipped */
        env->st->c.foreign += (uint64_t)foreign_add(&r->foreign, user, uid_key(s, m->uid));
        return;
    }
    if (!s->chk.have_id) {
        env->st->c.corrupt_unattributed++;
        return;
    }
    if (strcmp(s->chk.run_id, r->run_id)) {
        env->st->c.stale++;          /* ours, from an earlier run: cleared away */
        m->st = M_DELETE;
        return;
    }
    uint64_t eseq = 0;
    struct ledger_entry *e = ledger_find_seq(&r->ledger, s->chk.seq, s->chk.nrcpt, user, &eseq);
    if (!e) {
        env->st->c.corrupt_unattributed++;
        return;
    }
    session_judge_body(env, &s->chk, v, e, user);
    if (ledger_seen(e) && atomic_load_explicit(&r->phase, memory_order_relaxed) == PH_SWEEP)
        atomic_fetch_add_explicit(&r->sweep_gains, 1, memory_order_relaxed);
    m->seq = eseq;
    m->rcpt = atomic_load_explicit(&e->state, memory_order_relaxed) >> LS_RCPT_SHIFT;
    m->ours = 1;
    m->st = M_DELETE;
}

int imap_fetch_done(struct imap_session *s)
{
    struct fetch_resp *fr = &s->fr;
    fr->on = 0;
    if (s->state == IS_LIST) {
        /* a flag change, say, is no listing line; nor, in an idle session's
         * listing from next_uid, the last message "n:*" names when none is newer */
        if (!fr->have_uid)
            return 0;
        struct run *r = s->env->run;
        uint64_t k = uid_key(s, fr->uid);
        if (foreign_has(&r->foreign, s->pick.user, k) || known_has(r->known, s->pick.user, k))
            return 0;                /* not ours, or a fill's */
        enum mstate st = M_LISTED;
        uint32_t *at = s->keep ? known_seen(&r->seen, s->pick.user, k) : NULL;
        if (at) {
            /* read and left (imap.delete = never or DURATION): deleted once
             * older than the DURATION */
            if (!s->delete_after || run_ms(r, loop_now(s->env->loop)) < *at + s->delete_after)
                return 0;
            st = M_AGED;
        } else if (fr->uid < s->next_uid) {
            return 0;                /* an idle client's sync lists only what is new to it */
        }
        if (s->nm && s->m[s->nm - 1].uid >= fr->uid) {
            imap_count(s, "protocol", "UIDs listed out of ascending order");
            return -1;
        }
        /* message numbers ascend with UIDs (RFC 3501 2.3.1.1): an EXPUNGE names one */
        if (!fr->seq || fr->seq > s->exists || (s->nm && s->m[s->nm - 1].lseq >= fr->seq)) {
            imap_count(s, "protocol", "a listing's message numbers out of order, or beyond EXISTS");
            return -1;
        }
        if (s->nm < s->limit) {
            s->m = grow(s->m, &s->capm, s->nm, 1, sizeof *s->m);
            s->m[s->nm++] = (struct umsg){ .uid = fr->uid, .lseq = fr->seq, .st = st };
        } else {
            s->env->st->c.left_behind += !s->partial;
            s->partial = 1;
        }
        return 0;
    }
    if (s->state == IS_HEADERS) {
        if (fr->have_uid && fr->uid > s->web_top)
            s->web_top = fr->uid;
        return 0;
    }
    if (s->state != IS_FETCH || !fr->body_done)
        return 0;                    /* webmail's open body is read, and judged by no one */
    struct umsg *m = fr->have_uid ? find_uid(s, fr->uid) : NULL;
    if (!m || m->st != M_LISTED) {
        /* a body we did not ask for, or one served twice: it answers nothing */
        imap_count(s, "protocol", m ? "a message's body served twice in one FETCH" : "a body for a UID not asked for");
        return 0;
    }
    if (fr->seq != m->lseq) {
        /* its number is how an EXPUNGE will name it: one the listing and the
         * EXPUNGEs since do not agree with attributes a removal to nothing sure */
        imap_count(s, "protocol", "a body under a message number its listing did not give it");
        return -1;
    }
    body_done(s, m);
    return 0;
}

int imap_fetch_text(struct imap_session *s, const char *p, size_t n, const struct imap_piece *pc)
{
    struct fetch_resp *fr = &s->fr;
    uint64_t v;
    int r = imap_item_num(p, n, "UID", &v);
    if (r == -2 || (r == 0 && (v == 0 || v > UINT32_MAX))) {
        /* a UID is a non-zero 32-bit number (RFC 3501 9): one that is not
         * would be a message the listing skips, or overflow a UID set */
        imap_count(s, "protocol", "a UID that is not a number from 1 to 4294967295");
        return -1;
    }
    if (r == 0) {
        fr->uid = v;
        fr->have_uid = 1;
    }
    if (imap_item_num(p, n, "RFC822.SIZE", &v) == 0) {
        fr->size = v;
        fr->have_size = 1;
    }
    if (!pc->last && imap_ends_with(p, n, "BODY[]")) {
        if (fr->body_done || (fr->have_size && pc->lit > fr->size)) {
            imap_count(s, "protocol", fr->body_done ? "two bodies in one FETCH response"
                                                    : "a body's literal longer than the RFC822.SIZE given");
            return -1;
        }
        fr->in_body = 1;
        msg_check_begin(&s->chk, s->md, s->env->gen->sha256);
    }
    return 0;
}

void imap_sync_tagged(struct imap_session *s, int ok)
{
    char set[IMAP_SET_MAX];
    switch (s->state) {
    case IS_LIST:
        if (!ok) {
            s->refused = 1;
            imap_logout(s);
            return;
        }
        s->listed = 1;
        s->t_list = mono_ns();
        fetch_bodies(s);
        return;
    case IS_FETCH:
        for (size_t i = 0; i < s->nm; i++)
            if (s->m[i].st == M_LISTED)
                s->partial = 1;      /* listed, and its body never came (or the FETCH failed) */
        delete_fetched(s);
        return;
    case IS_STORE:
        if (!ok && (s->purging || !s->keep) && imap_in_flight(s, IS_EXPUNGE)) {
            /* its UID EXPUNGE went out behind it: whatever that removes (a STORE
             * refused but applied, flags left by an earlier session) counts by
             * what the server reports removed, so its answer is awaited */
            s->store_refused = 1;
            imap_send(s, IS_EXPUNGE, "UID EXPUNGE");
        } else if (s->purging && !ok) {
            imap_sync_done(s);       /* the aged stay, and are tried again at the next sync */
        } else if (s->purging) {
            uid_set(s, M_AGED, set, sizeof set);
            if (s->cap_uidplus)
                imap_send(s, IS_EXPUNGE, "UID EXPUNGE %s", set);
            else
                imap_send(s, IS_EXPUNGE, "EXPUNGE");
        } else if (!ok) {
            not_deleted(s);
            delete_aged(s);          /* what aged is deleted all the same */
        } else if (s->keep) {
            commit_reads(s);         /* seen and left: read now, expunged once aged, if ever */
            delete_aged(s);
        } else if (s->cap_uidplus) {
            uid_set(s, M_DELETE, set, sizeof set);
            imap_send(s, IS_EXPUNGE, "UID EXPUNGE %s", set);
        } else {
            imap_send(s, IS_EXPUNGE, "EXPUNGE");
        }
        return;
    case IS_EXPUNGE:
        /* answered, or refused after removing some: what it removed is what
         * the untagged EXPUNGE responses named */
        if (s->purging) {
            forget_aged(s);
        } else {
            commit_reads(s);
            if (ok && !s->store_refused && still_flagged(s))
                imap_count(s, "kept", "an EXPUNGE answered OK that did not report removing every message it was to");
            not_deleted(s);
        }
        imap_sync_done(s);
        return;
    default:
        return;
    }
}

/* ---- the webmail model: a non-caching session that reads and deletes nothing ---- */

/* Webmail shows the newest page of a mailbox (its headers), as imaptest's
 * benchmark notes a webmail client does at every login. */
#define WEBMAIL_PAGE 50

void imap_webmail_start(struct imap_session *s)
{
    s->web_top = 0;
    s->listed = 0;                   /* no listing: the visit proves nothing */
    if (!s->exists) {
        imap_logout(s);
        return;
    }
    uint64_t lo = s->exists > WEBMAIL_PAGE ? s->exists - WEBMAIL_PAGE + 1 : 1;
    imap_send(s, IS_HEADERS,
              "FETCH %llu:* (UID FLAGS RFC822.SIZE INTERNALDATE ENVELOPE BODY.PEEK[HEADER.FIELDS (FROM TO SUBJECT DATE)])",
              (unsigned long long)lo);
}

void imap_webmail_tagged(struct imap_session *s, int ok)
{
    if (s->state == IS_HEADERS && ok && s->web_top) {
        imap_send(s, IS_OPEN, "UID FETCH %llu (BODY.PEEK[])", (unsigned long long)s->web_top);
        imap_queue(s, IS_LOGOUT, "LOGOUT");
        return;
    }
    imap_logout(s);
}
