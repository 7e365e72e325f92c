/* pop3: the reader sessions — a non-blocking POP3 client state machine. Log in as
 * one user, STAT, LIST, RETR and check each message, DELE it, QUIT. Nothing is
 * counted as read until the server acknowledged its DELE and then the QUIT,
 * because that is when POP3 commits deletions (RFC 1939 section 6). A visit that
 * listed the whole mailbox and retrieved all of it is complete: only such a visit,
 * in the sweep after the server settled, can prove a message lost. Readers that go
 * only where mail is owed (the drain, pop3.visit = owed) leave a mailbox whose
 * visit found none of it alone for a growing while (pop3.empty_backoff). Here: the
 * session and its replies by state; which mailbox a session visits is
 * pop3_pick.c's. */
#include "engine/pop3.h"
#include "engine/pop3_pick.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/conn.h"
#include "lib/alloc.h"
#include "engine/reply.h"
#include "lib/rng.h"
#include "engine/sasl.h"
#include "lib/tls.h"
#include "engine/session.h"

static const char *const ps_stage[] = {
    "idle", "connect", "banner", "user", "pass", "stat", "list", "list",
    "retr", "retr", "dele", "quit", "tls", "stls", "apop", "auth",
    "uidl", "uidl", "uidl", "top", "top", "dele",
};
/* APOP and AUTH PLAIN are the login step, timed as pop3.pass; a UIDL listing is
 * the listing, timed as pop3.list */
static const enum lat ps_lat[] = {
    LAT_COUNT, LAT_POP3_CONNECT, LAT_POP3_BANNER, LAT_POP3_USER, LAT_POP3_PASS, LAT_POP3_STAT,
    LAT_POP3_LIST, LAT_COUNT, LAT_COUNT, LAT_COUNT, LAT_POP3_DELE, LAT_POP3_QUIT,
    LAT_COUNT, LAT_COUNT, LAT_POP3_PASS, LAT_POP3_PASS,
    LAT_POP3_LIST, LAT_COUNT, LAT_COUNT, LAT_COUNT, LAT_COUNT, LAT_POP3_DELE,
};

/* A sweep visit lists at most this many messages (1.6 MB of ids); a bigger
 * mailbox's visit is partial, so it proves nothing lost. */
#define SWEEP_MAX_IDS 100000


static void start_session(struct pop3_session *s);

static void backoff_fired(struct loop *l, struct timer *t)
{
    struct pop3_session *s = (struct pop3_session *)((char *)t - offsetof(struct pop3_session, backoff));
    (void)l;
    start_session(s);
}

void pop3_again_at(struct pop3_session *s, uint64_t when_ns)
{
    set_state(s, PS_IDLE);
    if (atomic_load_explicit(&s->env->run->phase, memory_order_relaxed) == PH_STOP)
        return;
    timer_arm(s->env->loop, &s->backoff, when_ns);
}

void pop3_again_in(struct pop3_session *s, uint64_t ms)
{
    pop3_again_at(s, loop_now(s->env->loop) + ms * NS_PER_MS);
}

static void finish(struct pop3_session *s, int failed)
{
    conn_close(&s->c);
    s->ngot = 0;
    if (s->polling)
        pop3_requeue_poll(s);
    /* A sweep visit that failed (a locked mailbox, say) keeps its claim and tries
     * the same mailbox again, a few times. */
    reader_visit_end(&s->pick, s->env, failed);
    s->fails = failed ? s->fails + 1 : 0;
    pop3_again_in(s, backoff_ms(s->fails, s->login_refused));
}

static void await(struct pop3_session *s, enum ps st)
{
    set_state(s, st);
    conn_deadline(&s->c, cfg_of(s)->pop3_timeout);
}

static void send_cmd(struct pop3_session *s, enum ps st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void send_cmd(struct pop3_session *s, enum ps st, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    conn_write(&s->c, buf, n < (int)sizeof buf ? (size_t)n : sizeof buf - 1);
    s->t_sent = mono_ns();
    await(s, st);
    /* Every command waits for the answer to the one before, so input already here
     * was sent before the server saw this one: a second +OK after DELE once passed
     * for the answer to QUIT, and deletions the server never made were counted. */
    if (conn_avail(&s->c)) {
        count_unasked(s->env, "pop3", ps_stage[st], &s->c);
        finish(s, 1);
        return;
    }
    conn_flush(&s->c);
}

static void fail_err(struct pop3_session *s, const char *text)
{
    char name[ERR_NAME_LEN];
    snprintf(name, sizeof name, "pop3_%s_%s", ps_stage[s->state], pop3_err_kind(text));
    stats_error(s->env->st, name, text);
}

static void count_error(struct pop3_session *s, const char *kind, const char *example)
{
    char name[ERR_NAME_LEN];
    snprintf(name, sizeof name, "pop3_%s_%s", ps_stage[s->state], kind);
    stats_error(s->env->st, name, example);
}

static void start_session(struct pop3_session *s)
{
    struct session_env *env = s->env;
    struct run *r = env->run;
    int phase = atomic_load_explicit(&r->phase, memory_order_relaxed);
    if (phase == PH_STOP)
        return;
    s->pick.owed_only = 0;                /* pick_user says when */
    if (s->pick.retry_user && phase == PH_SWEEP) {
        if (!reader_hold(&s->pick, s->env, s->pick.user)) {
            pop3_again_in(s, 50);
            return;
        }
        s->pick.retry_user = 0;
    } else if (cfg_of(s)->poll_interval && phase == PH_SEND && !r->fill_mode) {
        if (!pop3_poll_pick(s))
            return;
    } else if (!pop3_pick_user(s)) {
        /* nothing owed right now, or every owed mailbox held back: look again
         * soon, or when the first of those may be visited, if sooner */
        uint64_t soon = loop_now(env->loop) + 100 * NS_PER_MS;
        pop3_again_at(s, s->pick.hold_next && s->pick.hold_next < soon ? s->pick.hold_next : soon);
        return;
    }
    s->limit = s->pick.sweep ? SWEEP_MAX_IDS : (size_t)cfg_of(s)->max_per_session;
    s->nids = s->cur = s->ngot = 0;
    s->listed = s->partial = s->refused = s->login_refused = 0;
    s->nlisted = s->stat_n = 0;
    s->dele.ours = 0;
    s->t_list = 0;
    s->previewed = 0;
    s->nexp = s->curexp = s->ngone = 0;
    const struct target *t = &r->pop3[env->rr++ % r->npop3];
    const struct target *b = next_bind(env, r->pop3_bind, r->npop3_bind);
    s->target = t;
    s->banner[0] = 0;
    s->t_sent = mono_ns();
    set_state(s, PS_CONNECT);
    if (env->dial(env, &s->c, t, b) < 0) {
        count_conn_error(env, "pop3", "connect", &s->c);
        finish(s, 1);
        return;
    }
    conn_deadline(&s->c, cfg_of(s)->pop3_timeout);
}

static void next_retr(struct pop3_session *s)
{
    const struct config *cfg = cfg_of(s);
    if (s->cur < s->nids) {
        if (s->env->run->fill_mode)
            send_cmd(s, PS_TOP, "TOP %u 0\r\n", s->ids[s->cur].id);
        else if (cfg->preview && !s->previewed)
            send_cmd(s, PS_TOP, "TOP %u %llu\r\n", s->ids[s->cur].id, (unsigned long long)cfg->preview_lines);
        else
            send_cmd(s, PS_RETR, "RETR %u\r\n", s->ids[s->cur].id);
        return;
    }
    if (s->curexp < s->nexp) {       /* pop3.leave: kept long enough */
        send_cmd(s, PS_EXPIRE, "DELE %u\r\n", s->exp[s->curexp].id);
        return;
    }
    send_cmd(s, PS_QUIT, "QUIT\r\n");
}

static struct got got_of(const struct ledger_entry *e, uint64_t seq, uint64_t t, uint64_t uid)
{
    return (struct got){ seq, atomic_load_explicit(&e->state, memory_order_relaxed) >> LS_RCPT_SHIFT, 1, t, uid };
}

static void add_got(struct pop3_session *s, struct got g)
{
    s->got = grow(s->got, &s->capgot, s->ngot, 1, sizeof *s->got);
    s->got[s->ngot++] = g;
}

/* The fill's verification: the headers of one listed message (TOP n 0). A filled
 * message of this mailbox is counted read when the visit's QUIT is answered, and
 * its UIDL becomes known, so later passes and the soak skip it; anything else is
 * left alone. */
static void verify_done(struct pop3_session *s)
{
    struct session_env *env = s->env;
    struct run *r = env->run;
    uint64_t now = mono_ns();
    msg_check_end(&s->chk);          /* no body: only the id counts */
    stats_lat(env->st, LAT_POP3_TOP, now - s->t_sent);
    if (!r->fill_mode) {             /* a preview: now the message itself */
        s->previewed = 1;
        next_retr(s);
        return;
    }
    const struct listed *l = &s->ids[s->cur++];
    struct ledger_entry *e = NULL;
    uint64_t eseq = 0;
    if (s->chk.have_id && !strcmp(s->chk.run_id, r->run_id))
        e = ledger_find_seq(&r->ledger, s->chk.seq, s->chk.nrcpt, s->pick.user, &eseq);
    if (e) {
        if (ledger_seen(e))
            atomic_fetch_add_explicit(&r->sweep_gains, 1, memory_order_relaxed);
        add_got(s, got_of(e, eseq, now, l->uid));
    } else if (s->chk.have_id && !strcmp(s->chk.run_id, r->run_id)) {
        env->st->c.corrupt_unattributed++;
    } else {
        env->st->c.foreign += (uint64_t)foreign_add(&r->foreign, s->pick.user, l->uid);
    }
    next_retr(s);
}

/* A retrieved message, checked: decide whether it is ours and whether to delete it. */
static void message_done(struct pop3_session *s)
{
    struct session_env *env = s->env;
    struct run *r = env->run;
    uint64_t now = mono_ns();
    enum msg_result v = msg_check_end(&s->chk);
    stats_lat(env->st, LAT_POP3_RETR, now - s->t_sent);
    double share = cfg_of(s)->delete_share;
    /* retrieve only (the sweep empties): the message stays, and is not read until
     * some session deletes it */
    int keep = share < 1 && !s->pick.sweep && rng_unit(&s->pick.rng) >= share, dele = !keep;
    struct ledger_entry *e = NULL;
    uint64_t eseq = 0;
    if (v == MSG_FOREIGN) {
        keep = 0;                    /* not ours: left alone, not peeked */
        dele = dele && cfg_of(s)->delete_foreign;
        if (cfg_of(s)->delete_foreign) {
            env->st->c.foreign++;
        } else if (!s->ids[s->cur].uid) {
            /* left in place: learn its UIDL, then it is skipped and counted once */
            send_cmd(s, PS_UIDL1, "UIDL %u\r\n", s->ids[s->cur].id);
            return;
        } else {
            env->st->c.foreign += (uint64_t)foreign_add(&r->foreign, s->pick.user, s->ids[s->cur].uid);
        }
    } else if (!s->chk.have_id) {
        env->st->c.corrupt_unattributed++;
    } else if (r->fill_run_id[0] && !strcmp(s->chk.run_id, r->fill_run_id)) {
        /* a filled message the verification did not list: left, and skipped from now on */
        keep = dele = 0;
        env->st->c.fill_unlisted++;
        if (s->ids[s->cur].uid)
            known_add(r->known, s->pick.user, s->ids[s->cur].uid);
    } else if (strcmp(s->chk.run_id, r->run_id)) {
        env->st->c.stale++;             /* ours, from an earlier run: clear it away */
    } else {
        /* the entries of a message's recipients follow its id: ours is the one
         * for the mailbox we are in */
        e = ledger_find_seq(&r->ledger, s->chk.seq, s->chk.nrcpt, s->pick.user, &eseq);
        if (!e) {
            /* ours, but no recipient of it lives here: misdelivered or mangled */
            env->st->c.corrupt_unattributed++;
        } else {
            session_judge_body(env, &s->chk, v, e, s->pick.user);
            /* a first sighting during the sweep: the server is still delivering */
            if (ledger_seen(e) && atomic_load_explicit(&r->phase, memory_order_relaxed) == PH_SWEEP)
                atomic_fetch_add_explicit(&r->sweep_gains, 1, memory_order_relaxed);
        }
    }
    s->cur++;
    s->previewed = 0;
    if (e && cfg_of(s)->pop3_leave) {
        /* a leave-on-server client keeps it: read once the QUIT is answered, and
         * never retrieved again by this client */
        add_got(s, got_of(e, eseq, now, s->ids[s->cur - 1].uid));
        next_retr(s);
        return;
    }
    if (!dele) {
        env->st->c.peeked += keep;
        next_retr(s);
        return;
    }
    s->dele = e ? got_of(e, eseq, now, s->ids[s->cur - 1].uid) : (struct got){ 0 };
    send_cmd(s, PS_DELE, "DELE %u\r\n", s->ids[s->cur - 1].id);
}

static void commit(struct pop3_session *s)
{
    struct session_env *env = s->env;
    struct run *r = env->run;
    /* read by the sweep: the server delivered it after the drain */
    int late = atomic_load_explicit(&r->phase, memory_order_relaxed) == PH_SWEEP;
    int complete = s->listed && !s->partial && !s->refused;
    int got = s->ngot > 0;
    /* the listing before this visit's (poll_interval): what was accepted before it
     * and not in it was still the server's */
    uint32_t prev_list = r->list_ms ? atomic_load_explicit(&r->list_ms[s->pick.user], memory_order_relaxed) : 0;
    for (size_t i = 0; i < s->ngot; i++) {
        /* found earlier: its chunk may have been compacted since (ledger_hold) */
        struct ledger_entry *e = ledger_hold(&r->ledger, s->got[i].seq, s->got[i].rcpt, s->pick.user);
        if (!e)
            continue;
        uint32_t st = atomic_load_explicit(&e->state, memory_order_acquire);
        ledger_read(&r->ledger, e, late);
        env->st->c.read++;
        if (r->fill_mode) {          /* verified: from now on left where it is */
            if (s->got[i].uid)
                known_add(r->known, s->pick.user, s->got[i].uid);
            continue;
        }
        if (s->got[i].uid && cfg_of(s)->pop3_leave)
            known_add(&r->seen, s->pick.user, s->got[i].uid);   /* this client has it now */
        if ((st & LS_ACCEPTED) && !(st & LS_REVIVED)) {   /* a revived one has no acceptance time left */
            uint64_t acc = r->t0 + (uint64_t)e->accepted_ms * NS_PER_MS;
            if (s->got[i].t > acc) {
                uint64_t total = s->got[i].t - acc;
                stats_lat(env->st, LAT_DELIVERY, total);
                if (r->list_ms) {
                    uint64_t srv = prev_list > e->accepted_ms ? (uint64_t)(prev_list - e->accepted_ms) * NS_PER_MS : 0;
                    srv = srv < total ? srv : total;
                    stats_lat(env->st, LAT_DELIVERY_SERVER, srv);
                    stats_lat(env->st, LAT_DELIVERY_POLL, total - srv);
                }
            }
        }
    }
    s->ngot = 0;
    if (complete && !got && !s->pick.sweep && atomic_load_explicit(&r->ledger.owed[s->pick.user], memory_order_relaxed) > 0)
        env->st->c.empty_visits++;
    env->st->c.full_visits += complete && got && !s->pick.sweep;
    if (s->pick.owed_only && r->empty_hold)
        reader_empty_visited(&s->pick, s->env, got);
    for (size_t i = 0; i < s->ngone; i++)   /* deleted after keep_polls checks: forgotten */
        known_del(&r->seen, s->pick.user, s->gone[i]);
    s->ngone = 0;
    /* A refused login, a failed RETR or a LIST cut short proves nothing about what
     * the mailbox holds. */
    if (complete) {
        ledger_visited(&r->ledger, s->pick.user, s->pick.sweep ? s->pick.pass : 0, run_ms(r, mono_ns()));
        if (r->list_ms && s->t_list) {
            uint32_t t = run_ms(r, s->t_list);
            atomic_store_explicit(&r->list_ms[s->pick.user], t ? t : 1, memory_order_relaxed);
        }
    }
}

/* One line of a LIST ("n size") or UIDL ("n uid") listing. Bounded by what STAT
 * said: a listing of more messages, or of numbers STAT did not count, is a
 * hostile one (an endless LIST once grew a reader to 234 MB). -1 on such a line. */
static int listing_line(struct pop3_session *s, const char *line, size_t len)
{
    const char *rest;
    size_t rl;
    unsigned id;
    if (++s->nlisted > s->stat_n || pop3_listing(line, len, &id, &rest, &rl) < 0 || id < 1 || id > s->stat_n)
        return -1;
    uint64_t uid = 0;
    if (s->state == PS_UIDL_BODY) {
        uid = foreign_key(rest, rl);
        struct run *r = s->env->run;
        if (foreign_has(&r->foreign, s->pick.user, uid) || known_has(r->known, s->pick.user, uid))
            return 0;                /* known not to be ours, or filled: not retrieved again */
        uint32_t *seen = cfg_of(s)->pop3_leave ? known_seen(&r->seen, s->pick.user, uid) : NULL;
        if (seen) {                  /* this client has it: deleted after keep_polls checks */
            uint64_t keep = cfg_of(s)->keep_polls;
            if (keep && ++*seen >= keep) {
                s->exp = grow(s->exp, &s->capexp, s->nexp, 1, sizeof *s->exp);
                s->exp[s->nexp++] = (struct listed){ id, uid };
            }
            return 0;
        }
    }
    if (s->nids < s->limit) {
        s->ids = grow(s->ids, &s->capids, s->nids, 1, sizeof *s->ids);
        s->ids[s->nids++] = (struct listed){ id, uid };
    } else {
        /* a message we will not retrieve: the readers left mail behind (a sign they
         * fall behind what the store already holds) */
        s->env->st->c.left_behind += !s->partial;
        s->partial = 1;
    }
    return 0;
}

/* USER/PASS, APOP or AUTH PLAIN (RFC 5034, initial response on the command line). */
static void login(struct pop3_session *s)
{
    const struct user *u = &s->env->run->users.v[s->pick.user];
    char buf[700];
    int mode = cfg_of(s)->pop3_auth;
    if (mode == POP3_AUTH_AUTO)
        mode = pop3_apop(s->banner, u->pass, buf) == 0 ? POP3_AUTH_APOP : POP3_AUTH_USER;
    if (mode == POP3_AUTH_APOP) {
        if (pop3_apop(s->banner, u->pass, buf) < 0) {
            set_state(s, PS_APOP);
            count_error(s, "other", "APOP: no timestamp in the server's greeting");
            s->refused = s->login_refused = 1;
            send_cmd(s, PS_QUIT, "QUIT\r\n");
            return;
        }
        send_cmd(s, PS_APOP, "APOP %s %s\r\n", u->addr, buf);
    } else if (mode == POP3_AUTH_PLAIN && sasl_plain(u->addr, u->pass, buf, sizeof buf) == 0) {
        send_cmd(s, PS_AUTH, "AUTH PLAIN %s\r\n", buf);
    } else {
        send_cmd(s, PS_USER, "USER %s\r\n", u->addr);
    }
}

/* A -ERR in state st: a message's command skips the message, anything else fails
 * the visit (the login's refusal also the next session's back-off). */
static void on_err(struct pop3_session *s, enum ps st, const char *text)
{
    fail_err(s, text);
    if (st == PS_QUIT) {
        finish(s, 1);            /* deletions not committed */
        return;
    }
    if (st == PS_UIDL1) {        /* no UIDL: seen again next time, and counted again */
        s->env->st->c.foreign++;
        s->cur++;
        next_retr(s);
        return;
    }
    if (st == PS_RETR || st == PS_DELE || st == PS_TOP || st == PS_EXPIRE) {
        if (st == PS_EXPIRE) {
            s->curexp++;         /* still there: the next check tries again */
        } else if (st == PS_RETR || st == PS_TOP) {
            s->cur++;
            s->partial = 1;      /* what it was, we cannot tell */
        } else if (s->dele.ours) {
            s->env->st->c.peeked++; /* retrieved, not deleted: not read */
        }
        next_retr(s);
        return;
    }
    /* A refused login, STAT or LIST: the visit failed (a sweep visit is tried
     * again), though its QUIT may be answered +OK. */
    s->refused = 1;
    /* turned away at the login: the next session waits longer (backoff_ms) */
    s->login_refused = (st == PS_BANNER || st == PS_USER || st == PS_PASS || st == PS_APOP || st == PS_AUTH) &&
                       strcmp(pop3_err_kind(text), "in_use");
    if (st == PS_BANNER) {
        /* a greeting of -ERR turns the connection away and the server closes it:
         * a QUIT would only add a second error (pop3_quit_closed) to this one */
        finish(s, 1);
        return;
    }
    send_cmd(s, PS_QUIT, "QUIT\r\n");
    s->ngot = 0;
}

static void on_status(struct pop3_session *s, int ok, const char *text)
{
    uint64_t now = mono_ns();
    enum ps st = s->state;
    if (ps_lat[st] != LAT_COUNT && st != PS_LIST && st != PS_UIDL)
        stats_lat(s->env->st, ps_lat[st], now - s->t_sent);
    if (!ok) {
        on_err(s, st, text);
        return;
    }
    switch (st) {
    case PS_BANNER:
        snprintf(s->banner, sizeof s->banner, "%s", text);
        if (cfg_of(s)->pop3_tls == TLSM_UPGRADE && !tls_active(&s->c)) {
            send_cmd(s, PS_STLS, "STLS\r\n");
            return;
        }
        login(s);
        return;
    case PS_STLS:
        s->t_tls = mono_ns();
        set_state(s, PS_TLS);
        tls_start(&s->c, s->env->pop3_tls, s->target->host, 0);
        return;
    case PS_USER:
        send_cmd(s, PS_PASS, "PASS %s\r\n", s->env->run->users.v[s->pick.user].pass);
        return;
    case PS_PASS:
    case PS_APOP:
    case PS_AUTH:
        s->env->st->c.poll_logins += s->polling;
        send_cmd(s, PS_STAT, "STAT\r\n");
        return;
    case PS_STAT: {
        const char *end;
        if (pop3_number(text, &end, &s->stat_n) < 0 || (*end && *end != ' ')) {
            count_error(s, "protocol", text);
            s->refused = 1;
            send_cmd(s, PS_QUIT, "QUIT\r\n");
            return;
        }
        if (s->stat_n == 0) {
            s->listed = 1;
            s->t_list = mono_ns();
            send_cmd(s, PS_QUIT, "QUIT\r\n");
            return;
        }
        struct run *r = s->env->run;
        if (foreign_any(&r->foreign, s->pick.user) || known_any(r->known, s->pick.user) || r->fill_mode ||
            cfg_of(s)->pop3_leave)
            send_cmd(s, PS_UIDL, "UIDL\r\n");
        else
            send_cmd(s, PS_LIST, "LIST\r\n");
        return;
    }
    case PS_LIST:
    case PS_UIDL:
        set_state(s, st == PS_LIST ? PS_LIST_BODY : PS_UIDL_BODY);
        return;
    case PS_UIDL1: {                 /* "n uid": this foreign message, from now on known */
        const char *uid;
        size_t ul;
        unsigned id;
        if (pop3_listing(text, strlen(text), &id, &uid, &ul) == 0)
            s->env->st->c.foreign += (uint64_t)foreign_add(&s->env->run->foreign, s->pick.user, foreign_key(uid, ul));
        else
            s->env->st->c.foreign++;
        s->cur++;
        next_retr(s);
        return;
    }
    case PS_RETR:
    case PS_TOP: {
        struct session_env *env = s->env;
        msg_check_begin(&s->chk, s->md, env->gen->sha256);
        set_state(s, st == PS_RETR ? PS_RETR_BODY : PS_TOP_BODY);
        return;
    }
    case PS_EXPIRE:
        s->gone = grow(s->gone, &s->capgone, s->ngone, 1, sizeof *s->gone);
        s->gone[s->ngone++] = s->exp[s->curexp++].uid;
        next_retr(s);
        return;
    case PS_DELE:
        if (s->dele.ours)
            add_got(s, s->dele);
        next_retr(s);
        return;
    case PS_QUIT:
        commit(s);
        s->env->st->c.pop3_sessions++;
        finish(s, s->refused);
        return;
    default:
        return;
    }
}

static void on_data(struct pop3_session *s)
{
    char *line, why[64];
    size_t len;
    int r;
    while (conn_is_open(&s->c) && (r = conn_line_why(&s->c, &line, &len, why, sizeof why)) != 0) {
        if (r < 0) {
            count_error(s, "protocol", why);
            finish(s, 1);
            return;
        }
        if (s->state == PS_LIST_BODY || s->state == PS_UIDL_BODY || s->state == PS_RETR_BODY ||
            s->state == PS_TOP_BODY) {
            if (len == 1 && line[0] == '.') {
                if (s->state == PS_TOP_BODY) {
                    verify_done(s);
                } else if (s->state != PS_RETR_BODY) {
                    s->t_list = mono_ns();
                    stats_lat(s->env->st, LAT_POP3_LIST, s->t_list - s->t_sent);
                    s->listed = 1;
                    next_retr(s);
                } else {
                    message_done(s);
                }
                continue;
            }
            if (line[0] == '.') {    /* dot-unstuffing */
                line++;
                len--;
            }
            if (s->state == PS_RETR_BODY || s->state == PS_TOP_BODY) {
                msg_check_line(&s->chk, line, len);
            } else if (listing_line(s, line, len) < 0) {
                char ex[ERR_EXAMPLE_LEN];
                snprintf(ex, sizeof ex, "STAT said %u; listed: %s", s->stat_n, line);
                count_error(s, "protocol", ex);
                finish(s, 1);
                return;
            }
            continue;
        }
        const char *text;
        int ok = pop3_status(line, len, &text);
        if (ok < 0 || s->state == PS_IDLE || s->state == PS_CONNECT) {
            count_error(s, "protocol", line);
            finish(s, 1);
            return;
        }
        on_status(s, ok, text);
    }
}

static void pop3_event(struct conn *c, enum conn_event ev, void *ud)
{
    struct pop3_session *s = ud;
    switch (ev) {
    case CONN_UP:
        stats_lat(s->env->st, LAT_POP3_CONNECT, mono_ns() - s->t_sent);
        s->t_sent = mono_ns();
        if (cfg_of(s)->pop3_tls == TLSM_IMPLICIT) {
            s->t_tls = s->t_sent;
            s->banner[0] = 0;
            await(s, PS_TLS);
            tls_start(&s->c, s->env->pop3_tls, s->target->host, 0);
            return;
        }
        await(s, PS_BANNER);
        return;
    case CONN_TLS_UP: {
        uint64_t now = mono_ns();
        stats_lat(s->env->st, LAT_POP3_TLS, now - s->t_tls);
        s->env->st->c.tls_handshakes++;
        s->env->st->c.tls_resumed += tls_session_reused(&s->c) > 0;
        s->t_sent = now;
        if (s->banner[0] || cfg_of(s)->pop3_tls == TLSM_UPGRADE)
            login(s);                /* after STLS: the greeting came before */
        else
            await(s, PS_BANNER);
        return;
    }
    case CONN_DATA:
        on_data(s);
        return;
    case CONN_TIMEOUT:
        count_timeout(s->env, "pop3", ps_stage[s->state], &s->c, cfg_of(s)->pop3_timeout);
        finish(s, 1);
        return;
    case CONN_CLOSED:
        count_conn_error(s->env, "pop3", ps_stage[s->state], &s->c);
        finish(s, 1);
        return;
    }
}

static void pop3_init(void *arg, struct session_env *env, unsigned id)
{
    struct pop3_session *s = arg;
    s->env = env;
    conn_init(&s->c, env->loop, pop3_event, s);
    s->backoff.fn = backoff_fired;
    s->md = alloc_check(EVP_MD_CTX_new());
    rng_seed(&s->pick.rng, env->run->seed ^ (0x90930000000000ull + id));
}

static void pop3_start(void *arg)
{
    struct pop3_session *s = arg;
    uint64_t delay = s->env->run->cfg->start_after;
    if (delay)
        timer_arm_in(s->env->loop, &s->backoff, delay);
    else
        start_session(s);
}

static void pop3_phase(void *arg, int phase)
{
    struct pop3_session *s = arg;
    struct session_env *env = s->env;
    if (phase == PH_STOP) {
        timer_cancel(env->loop, &s->backoff);
        /* A QUIT in flight may already have deleted mail on the server: wait
         * for its answer (bounded by the timeout) so the count stays exact.
         * Anything earlier is abandoned, which commits nothing. */
        if (s->state == PS_QUIT && conn_is_open(&s->c))
            return;
        count_unanswered(env, "pop3", ps_stage[s->state], &s->c, cfg_of(s)->pop3_timeout);
        conn_close(&s->c);
        reader_end_sweep(&s->pick, s->env);
        reader_release(&s->pick, s->env);
        set_state(s, PS_IDLE);
    } else if (s->state == PS_IDLE && timer_armed(&s->backoff) &&
               loop_now(env->loop) >= env->run->t0 + env->run->cfg->start_after) {
        /* idle readers look at the new phase's work at once */
        timer_arm_in(env->loop, &s->backoff, 0);
    }
}

static int pop3_is_open(const void *s)
{
    return conn_is_open(&((const struct pop3_session *)s)->c);
}

static void pop3_free(void *arg)
{
    struct pop3_session *s = arg;
    conn_close(&s->c);
    buf_free(&s->c.in);
    buf_free(&s->c.out);
    free(s->ids);
    free(s->got);
    free(s->exp);
    free(s->gone);
    EVP_MD_CTX_free(s->md);
}

const struct session_ops pop3_ops = {
    .name = "pop3", .size = sizeof(struct pop3_session), .init = pop3_init, .start = pop3_start,
    .phase = pop3_phase, .is_open = pop3_is_open, .free = pop3_free,
};
