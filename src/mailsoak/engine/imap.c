/* imap: the IMAP reader sessions, the drain model — log in as one user, SELECT
 * INBOX, list its UIDs, fetch and check the bodies, flag ours \Deleted and expunge
 * them (UID EXPUNGE with UIDPLUS), LOGOUT. A message is read when the server
 * answered the EXPUNGE that removed it: that is when IMAP commits a deletion.
 * A visit that listed the whole mailbox and fetched all it listed is complete:
 * only such a visit, in the sweep after the server settled, can prove a message
 * lost. One command at a time: a tagged reply must carry the tag of the command
 * in flight, and a reply that was already buffered when the command went out
 * answers nothing. Responses are read by imap_parse.c, bounded by a line, the
 * literal's cap and the size the server gave, and a count of untagged responses
 * per command. */
#include "engine/imap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/imap_parse.h"
#include "engine/reply.h"
#include "engine/sasl.h"
#include "lib/alloc.h"
#include "lib/conn.h"
#include "lib/rng.h"
#include "lib/tls.h"

enum is {
    IS_IDLE, IS_CONNECT, IS_TLS, IS_BANNER, IS_CAPA, IS_STARTTLS, IS_LOGIN, IS_SELECT, IS_LIST, IS_FETCH,
    IS_STORE, IS_EXPUNGE, IS_LOGOUT,
};
static const char *const is_stage[] = {
    "idle", "connect", "tls", "banner", "capability", "starttls", "login", "select", "list", "fetch",
    "store", "expunge", "logout",
};
static const enum lat is_lat[] = {
    LAT_COUNT, LAT_IMAP_CONNECT, LAT_IMAP_TLS, LAT_IMAP_BANNER, LAT_IMAP_CAPABILITY, LAT_COUNT, LAT_IMAP_LOGIN,
    LAT_IMAP_SELECT, LAT_IMAP_LIST, LAT_IMAP_FETCH, LAT_IMAP_STORE, LAT_IMAP_EXPUNGE, LAT_IMAP_LOGOUT,
};

/* A visit fetches at most this many messages, so the UID sets of its FETCH,
 * STORE and EXPUNGE stay within IMAP_SET_MAX bytes (ten digits and a comma each). */
#define IMAP_VISIT_MAX 500
#define IMAP_SET_MAX 8192
/* A response line: Dovecot's CAPABILITY and a FETCH's items fit in a few hundred
 * bytes; a body's lines are RFC 5322's 998 at most, corpora's a little more. */
#define IMAP_MAX_LINE 8192
/* Untagged responses a command may draw beyond one per message the mailbox holds
 * (EXISTS, RECENT, FLAGS, OK codes...): more is a flood. */
#define IMAP_UNTAGGED_SLACK 64
/* What EXISTS may announce: no mailbox of a soak holds ten million messages. */
#define IMAP_EXISTS_MAX 10000000
/* pop3.empty_backoff's first hold, and the streak's bits in a hold (pop3.c's) */
#define EMPTY_FIRST_NS (50 * NS_PER_MS)
#define EMPTY_STREAK 0xfull

enum mstate { M_LISTED, M_DELETE, M_KEEP };

struct umsg {
    uint64_t uid;
    struct ledger_entry *e;          /* ours (M_DELETE): read once expunged */
    uint64_t t;                      /* fetched, monotonic ns */
    enum mstate st;
};

/* The FETCH response being read: its items may come before or after the body. */
struct fetch_resp {
    int on;                          /* a "* n FETCH" response is open */
    uint64_t uid, size;
    int have_uid, have_size, in_body, body_done;
    enum msg_result v;
};

struct imap_session {
    struct conn c;
    struct session_env *env;
    struct timer backoff;
    struct rng rng;
    enum is state;
    uint32_t user;
    int sweep;                       /* visiting a mailbox for the final sweep */
    uint32_t pass;
    int listed, partial, refused, login_refused;
    unsigned fails, sweep_tries;
    int retry_user, owed_only, holds_mailbox;
    uint64_t hold_next;
    uint64_t t_sent, t_tls, t_list;
    const struct target *target;
    struct imap_rd rd;
    unsigned tag;                    /* the command in flight is "a<tag>" */
    size_t pre;                      /* input buffered before it went out: answers nothing */
    uint64_t untagged, max_untagged;
    int caps, cap_plain, cap_uidplus, cap_sasl_ir;
    int auth_wait;                   /* AUTHENTICATE PLAIN sent, its "+" awaited */
    int bye;
    uint64_t exists, uidvalidity;
    struct umsg *m;
    size_t nm, capm, hint;
    size_t limit;
    struct fetch_resp fr;
    struct msg_check chk;
    EVP_MD_CTX *md;
    char set[IMAP_SET_MAX];
};

static void start_session(struct imap_session *s);
static void logout(struct imap_session *s);

static void set_state(struct imap_session *s, enum is st)
{
    s->state = st;
}

static const struct config *cfg_of(const struct imap_session *s)
{
    return s->env->run->cfg;
}

static void backoff_fired(struct loop *l, struct timer *t)
{
    struct imap_session *s = (struct imap_session *)((char *)t - offsetof(struct imap_session, backoff));
    (void)l;
    start_session(s);
}

/* ---- the mailbox's pick: pop3.c's rules (owed mailboxes, their back-off, the
 * sweep's cursor, pop3.exclusive) ---- */

static void end_sweep_claim(struct imap_session *s)
{
    if (s->sweep) {
        atomic_fetch_sub_explicit(&s->env->run->sweep_active, 1, memory_order_release);
        s->sweep = 0;
    }
}

static int hold_mailbox(struct imap_session *s, uint32_t u)
{
    struct run *r = s->env->run;
    if (!r->cfg->exclusive)
        return 1;
    if (atomic_exchange_explicit(&r->mailbox_busy[u], 1, memory_order_acquire))
        return 0;
    s->holds_mailbox = 1;
    return 1;
}

static void release_mailbox(struct imap_session *s)
{
    if (s->holds_mailbox) {
        atomic_store_explicit(&s->env->run->mailbox_busy[s->user], 0, memory_order_release);
        s->holds_mailbox = 0;
    }
}

static uint64_t empty_delay(const struct config *cfg, unsigned streak)
{
    uint64_t d = EMPTY_FIRST_NS << (streak > 1 ? (streak < 16 ? streak - 1 : 15) : 0);
    return d < cfg->empty_backoff ? d : cfg->empty_backoff;
}

static uint64_t hold_word(uint64_t due_ns, uint64_t streak)
{
    return ((due_ns + EMPTY_STREAK) & ~EMPTY_STREAK) | streak;
}

/* 1 when user u's owed mailbox may be visited now (its back-off is over, and
 * this session claimed the next hold); else the earliest time in hold_next. */
static int hold_due(struct imap_session *s, uint32_t u, uint64_t now)
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

static void empty_visited(struct imap_session *s, int got)
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

static int pick_user(struct imap_session *s)
{
    struct run *r = s->env->run;
    struct ledger *l = &r->ledger;
    int phase = atomic_load_explicit(&r->phase, memory_order_relaxed);
    size_t n = r->users.n;
    s->hold_next = 0;
    if (phase == PH_SEND || phase == PH_DRAIN) {
        size_t start = (size_t)rng_range(&s->rng, 0, n - 1);
        int owed_only = phase == PH_DRAIN || cfg_of(s)->visit_owed;
        uint64_t now = loop_now(s->env->loop);
        for (size_t k = 0; k < n; k++) {
            uint32_t u = (uint32_t)((start + k) % n);
            if (owed_only && (atomic_load_explicit(&l->owed[u], memory_order_relaxed) <= 0 || !hold_due(s, u, now)))
                continue;
            if (hold_mailbox(s, u)) {
                s->user = u;
                s->owed_only = owed_only;
                return 1;
            }
        }
        return 0;
    }
    if (phase == PH_SWEEP) {
        for (;;) {
            uint64_t u = atomic_fetch_add_explicit(&r->sweep_cursor, 1, memory_order_acquire);
            if (u >= n)
                return 0;
            if (atomic_load_explicit(&l->owed[u], memory_order_relaxed) > 0 ||
                (atomic_load_explicit(&r->sweep_full, memory_order_relaxed) &&
                 atomic_load_explicit(&l->mailed[u], memory_order_relaxed))) {
                s->user = (uint32_t)u;
                s->sweep = 1;
                s->pass = atomic_load_explicit(&r->sweep_pass, memory_order_acquire);
                atomic_fetch_add_explicit(&r->sweep_active, 1, memory_order_relaxed);
                if (hold_mailbox(s, (uint32_t)u))
                    return 1;
                s->retry_user = 1;
                return 0;
            }
        }
    }
    return 0;
}

static void again_at(struct imap_session *s, uint64_t when_ns)
{
    set_state(s, IS_IDLE);
    if (atomic_load_explicit(&s->env->run->phase, memory_order_relaxed) == PH_STOP)
        return;
    timer_arm(s->env->loop, &s->backoff, when_ns);
}

static void finish(struct imap_session *s, int failed)
{
    conn_close(&s->c);
    release_mailbox(s);
    /* a sweep visit that failed keeps its claim and tries the mailbox again, a few times */
    s->retry_user = failed && s->sweep && ++s->sweep_tries < 4;
    if (!s->retry_user) {
        end_sweep_claim(s);
        s->sweep_tries = 0;
    }
    s->fails = failed ? s->fails + 1 : 0;
    again_at(s, loop_now(s->env->loop) + backoff_ms(s->fails, s->login_refused) * NS_PER_MS);
}

static void count_error(struct imap_session *s, const char *kind, const char *example)
{
    char name[ERR_NAME_LEN];
    snprintf(name, sizeof name, "imap_%s_%s", is_stage[s->state], kind);
    stats_error(s->env->st, name, example);
}

static void count_text(struct imap_session *s, const char *kind, const char *p, size_t n)
{
    char name[ERR_NAME_LEN];
    snprintf(name, sizeof name, "imap_%s_%s", is_stage[s->state], kind);
    stats_error_text(s->env->st, name, p, n < ERR_EXAMPLE_LEN - 1 ? n : ERR_EXAMPLE_LEN - 1);
}

/* A server that broke the protocol: counted, the connection dropped. */
static void protocol_error(struct imap_session *s, const char *why)
{
    count_error(s, "protocol", why);
    finish(s, 1);
}

static void await(struct imap_session *s, enum is st)
{
    set_state(s, st);
    conn_deadline(&s->c, cfg_of(s)->imap_timeout);
}

/* Sends "a<N> command\r\n" as the one command in flight. */
static void send_cmd(struct imap_session *s, enum is st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void send_cmd(struct imap_session *s, enum is st, const char *fmt, ...)
{
    char buf[IMAP_SET_MAX + 128];
    int k = snprintf(buf, sizeof buf, "a%u ", ++s->tag);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + k, sizeof buf - (size_t)k - 2, fmt, ap);
    va_end(ap);
    size_t len = (size_t)k + (n < (int)(sizeof buf - (size_t)k - 2) ? (size_t)n : sizeof buf - (size_t)k - 3);
    buf[len++] = '\r';
    buf[len++] = '\n';
    conn_write(&s->c, buf, len);
    s->t_sent = mono_ns();
    s->pre = conn_avail(&s->c);
    s->untagged = 0;
    s->max_untagged = s->exists + IMAP_UNTAGGED_SLACK;
    await(s, st);
    conn_flush(&s->c);
}

/* ---- UID sets ---- */

/* The UIDs of the visit's messages in state st as a set ("3:7,9"), into s->set;
 * how many it names. Listed in ascending order, so runs are ranges. */
static size_t uid_set(struct imap_session *s, enum mstate st)
{
    size_t k = 0, count = 0;
    s->set[0] = 0;
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
        int w = lo == hi ? snprintf(s->set + k, sizeof s->set - k, "%s%llu", k ? "," : "", (unsigned long long)lo)
                         : snprintf(s->set + k, sizeof s->set - k, "%s%llu:%llu", k ? "," : "",
                                    (unsigned long long)lo, (unsigned long long)hi);
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

/* ---- the visit's steps ---- */

static void login(struct imap_session *s)
{
    const struct user *u = &s->env->run->users.v[s->user];
    int mode = cfg_of(s)->imap_auth;
    if (mode == IMAP_AUTH_AUTO)
        mode = s->cap_plain ? IMAP_AUTH_PLAIN : IMAP_AUTH_LOGIN;
    char a[600], b[600];
    if (mode == IMAP_AUTH_PLAIN && sasl_plain(u->addr, u->pass, a, sizeof a) == 0) {
        if (s->cap_sasl_ir) {
            send_cmd(s, IS_LOGIN, "AUTHENTICATE PLAIN %s", a);
        } else {
            s->auth_wait = 1;
            send_cmd(s, IS_LOGIN, "AUTHENTICATE PLAIN");
        }
        return;
    }
    if (imap_quote(u->addr, a, sizeof a) < 0 || imap_quote(u->pass, b, sizeof b) < 0) {
        set_state(s, IS_LOGIN);
        count_error(s, "other", "a user or password a quoted string cannot carry (CR or LF)");
        s->refused = s->login_refused = 1;
        logout(s);
        return;
    }
    send_cmd(s, IS_LOGIN, "LOGIN %s %s", a, b);
}

/* After the greeting (and STARTTLS): what the login needs to know first. */
static void after_greeting(struct imap_session *s)
{
    if (cfg_of(s)->imap_tls == TLSM_UPGRADE && !tls_active(&s->c)) {
        send_cmd(s, IS_STARTTLS, "STARTTLS");
        return;
    }
    if (!s->caps && cfg_of(s)->imap_auth != IMAP_AUTH_LOGIN) {
        send_cmd(s, IS_CAPA, "CAPABILITY");
        return;
    }
    login(s);
}

static void logout(struct imap_session *s)
{
    send_cmd(s, IS_LOGOUT, "LOGOUT");
}

static void fetch_bodies(struct imap_session *s)
{
    if (!uid_set(s, M_LISTED)) {
        logout(s);
        return;
    }
    send_cmd(s, IS_FETCH, "UID FETCH %s (UID RFC822.SIZE BODY.PEEK[])", s->set);
}

/* After the fetch: flag ours (and our stale mail) deleted, or leave. */
static void delete_fetched(struct imap_session *s)
{
    if (!uid_set(s, M_DELETE)) {
        logout(s);
        return;
    }
    send_cmd(s, IS_STORE, "UID STORE %s +FLAGS.SILENT (\\Deleted)", s->set);
}

/* Retrieved, not deleted (the STORE or EXPUNGE refused): not read, still owed. */
static void not_deleted(struct imap_session *s)
{
    for (size_t i = 0; i < s->nm; i++)
        if (s->m[i].st == M_DELETE) {
            s->env->st->c.peeked += s->m[i].e != NULL;
            s->m[i].st = M_KEEP;
        }
}

/* The EXPUNGE was answered: each of ours it named is read. */
static void commit_reads(struct imap_session *s)
{
    struct session_env *env = s->env;
    struct run *r = env->run;
    int late = atomic_load_explicit(&r->phase, memory_order_relaxed) == PH_SWEEP;
    for (size_t i = 0; i < s->nm; i++) {
        struct umsg *m = &s->m[i];
        if (m->st != M_DELETE || !m->e)
            continue;
        uint32_t st = atomic_load_explicit(&m->e->state, memory_order_acquire);
        ledger_read(&r->ledger, m->e, late);
        env->st->c.read++;
        if (st & LS_ACCEPTED) {
            uint64_t acc = r->t0 + (uint64_t)m->e->accepted_ms * NS_PER_MS;
            if (m->t > acc)
                stats_lat(env->st, LAT_DELIVERY, m->t - acc);
        }
        m->st = M_KEEP;
    }
}

/* The LOGOUT answered (or the connection closed after its BYE): the visit ends. */
static void visit_done(struct imap_session *s)
{
    struct run *r = s->env->run;
    int got = 0;
    for (size_t i = 0; i < s->nm; i++)
        got |= s->m[i].e != NULL;
    s->env->st->c.pop3_sessions++;   /* reader sessions, whichever protocol */
    if (s->owed_only && r->empty_hold)
        empty_visited(s, got);
    if (s->listed && !s->partial && !s->refused)
        ledger_visited(&r->ledger, s->user, s->sweep ? s->pass : 0, run_ms(r, mono_ns()));
    finish(s, s->refused);
}

/* One message's body came whole in a FETCH response: is it ours, to delete? */
static void body_done(struct imap_session *s, struct umsg *m)
{
    struct session_env *env = s->env;
    struct run *r = env->run;
    uint64_t now = mono_ns();
    enum msg_result v = s->fr.v;
    m->t = now;
    m->st = M_KEEP;
    if (v == MSG_FOREIGN) {
        /* not ours: left alone, and from now on skipped (by UIDVALIDITY and UID) */
        char key[48];
        int kl = snprintf(key, sizeof key, "%llu.%llu", (unsigned long long)s->uidvalidity, (unsigned long long)m->uid);
        env->st->c.foreign += (uint64_t)foreign_add(&r->foreign, s->user, foreign_key(key, (size_t)kl));
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
    struct ledger_entry *e = ledger_find(&r->ledger, s->chk.seq, s->chk.nrcpt, s->user);
    if (!e) {
        env->st->c.corrupt_unattributed++;
        return;
    }
    session_judge_body(env, &s->chk, v, e, s->user);
    if (ledger_seen(e) && atomic_load_explicit(&r->phase, memory_order_relaxed) == PH_SWEEP)
        atomic_fetch_add_explicit(&r->sweep_gains, 1, memory_order_relaxed);
    m->e = e;
    m->st = M_DELETE;
}

/* A "* n FETCH" response ended. */
static int fetch_resp_done(struct imap_session *s)
{
    struct fetch_resp *fr = &s->fr;
    fr->on = 0;
    if (s->state == IS_LIST) {
        if (!fr->have_uid)
            return 0;                /* a flag change, say: not a listing line */
        char key[48];
        int kl = snprintf(key, sizeof key, "%llu.%llu", (unsigned long long)s->uidvalidity, (unsigned long long)fr->uid);
        struct run *r = s->env->run;
        uint64_t k = foreign_key(key, (size_t)kl);
        if (foreign_has(&r->foreign, s->user, k) || known_has(r->known, s->user, k))
            return 0;
        if (s->nm && s->m[s->nm - 1].uid >= fr->uid) {
            count_error(s, "protocol", "UIDs listed out of ascending order");
            return -1;
        }
        if (s->nm < s->limit) {
            s->m = grow(s->m, &s->capm, s->nm, 1, sizeof *s->m);
            s->m[s->nm++] = (struct umsg){ .uid = fr->uid, .st = M_LISTED };
        } else {
            s->env->st->c.left_behind += !s->partial;
            s->partial = 1;
        }
        return 0;
    }
    if (s->state != IS_FETCH || !fr->body_done)
        return 0;
    struct umsg *m = fr->have_uid ? find_uid(s, fr->uid) : NULL;
    if (!m || m->st != M_LISTED) {
        /* a body we did not ask for, or one served twice: it answers nothing */
        count_error(s, "protocol", m ? "a message's body served twice in one FETCH" : "a body for a UID not asked for");
        return 0;
    }
    body_done(s, m);
    return 0;
}

/* Items of a FETCH response's text; the body's literal begins when the text
 * before it ends with BODY[]. */
static int fetch_text(struct imap_session *s, const char *p, size_t n, const struct imap_piece *pc)
{
    struct fetch_resp *fr = &s->fr;
    uint64_t v;
    if (imap_item_num(p, n, "UID", &v) == 0) {
        fr->uid = v;
        fr->have_uid = 1;
    }
    if (imap_item_num(p, n, "RFC822.SIZE", &v) == 0) {
        fr->size = v;
        fr->have_size = 1;
    }
    if (!pc->last && imap_ends_with(p, n, "BODY[]")) {
        if (fr->body_done || (fr->have_size && pc->lit > fr->size)) {
            count_error(s, "protocol", fr->body_done ? "two bodies in one FETCH response"
                                                     : "a body's literal longer than the RFC822.SIZE given");
            return -1;
        }
        fr->in_body = 1;
        msg_check_begin(&s->chk, s->md, s->env->gen->sha256);
    }
    return 0;
}

static void on_tagged(struct imap_session *s, enum imap_status st, const char *text, size_t n)
{
    enum is cur = s->state;
    uint64_t now = mono_ns();
    if (is_lat[cur] != LAT_COUNT)
        stats_lat(s->env->st, is_lat[cur], now - s->t_sent);
    if (imap_is_capability(text, n)) {
        s->caps = 1;
        s->cap_uidplus = imap_has_cap(text, n, "UIDPLUS");
    }
    if (st != IMAP_ST_OK) {
        count_text(s, imap_err_kind(st, text, n), text, n);
        switch (cur) {
        case IS_FETCH:
            s->partial = 1;          /* what it did not send, we cannot tell */
            delete_fetched(s);
            return;
        case IS_STORE:
        case IS_EXPUNGE:
            not_deleted(s);
            logout(s);
            return;
        case IS_LOGOUT:
            finish(s, 1);
            return;
        default:
            s->refused = 1;
            s->login_refused = cur == IS_LOGIN && strcmp(imap_err_kind(st, text, n), "in_use");
            logout(s);
            return;
        }
    }
    switch (cur) {
    case IS_CAPA:
        login(s);
        return;
    case IS_STARTTLS:
        s->t_tls = mono_ns();
        s->caps = 0;                 /* capabilities before TLS count for nothing (RFC 3501 6.2.1) */
        set_state(s, IS_TLS);
        tls_start(&s->c, s->env->imap_tls, s->target->host, 0);
        return;
    case IS_LOGIN:
        send_cmd(s, IS_SELECT, "SELECT INBOX");
        return;
    case IS_SELECT:
        if (!s->exists) {
            s->listed = 1;
            s->t_list = now;
            logout(s);
            return;
        }
        send_cmd(s, IS_LIST, "UID FETCH 1:* (UID)");
        return;
    case IS_LIST:
        s->listed = 1;
        s->t_list = now;
        fetch_bodies(s);
        return;
    case IS_FETCH:
        for (size_t i = 0; i < s->nm; i++)
            if (s->m[i].st == M_LISTED)
                s->partial = 1;      /* listed, and its body never came */
        delete_fetched(s);
        return;
    case IS_STORE:
        if (s->cap_uidplus)
            send_cmd(s, IS_EXPUNGE, "UID EXPUNGE %s", s->set);
        else
            send_cmd(s, IS_EXPUNGE, "EXPUNGE");
        return;
    case IS_EXPUNGE:
        commit_reads(s);
        logout(s);
        return;
    case IS_LOGOUT:
        visit_done(s);
        return;
    default:
        return;
    }
}

/* An untagged response's first text (its data, without "* "). */
static int on_untagged(struct imap_session *s, const char *p, size_t n, const struct imap_piece *pc)
{
    const char *after, *w;
    size_t wl;
    uint64_t num;
    if (++s->untagged > s->max_untagged) {
        count_error(s, "protocol", "more untagged responses than the mailbox holds messages");
        return -1;
    }
    enum imap_status st = imap_status(p, n, &after);
    size_t an = (size_t)(p + n - after);
    if (s->state == IS_BANNER) {
        if (st == IMAP_ST_OK) {
            if (imap_is_capability(after, an)) {
                s->caps = 1;
                s->cap_plain = imap_has_cap(after, an, "AUTH=PLAIN");
                s->cap_sasl_ir = imap_has_cap(after, an, "SASL-IR");
                s->cap_uidplus = imap_has_cap(after, an, "UIDPLUS");
            }
            stats_lat(s->env->st, LAT_IMAP_BANNER, mono_ns() - s->t_sent);
            after_greeting(s);
            return 0;
        }
        /* BYE turns the connection away; PREAUTH skips the login we must make */
        count_text(s, st == IMAP_ST_BYE ? "bye" : st == IMAP_ST_PREAUTH ? "preauth" : "protocol", p, n);
        s->refused = s->login_refused = 1;
        finish(s, 1);
        return -1;
    }
    if (st == IMAP_ST_BYE) {
        s->bye = 1;
        if (s->state != IS_LOGOUT)
            count_text(s, "bye", p, n);
        return 0;
    }
    if (st == IMAP_ST_OK || st == IMAP_ST_NO || st == IMAP_ST_BAD) {
        uint64_t v;
        if (an > 13 && !strncasecmp(after, "[UIDVALIDITY ", 13) && imap_item_num(after + 1, an - 1, "UIDVALIDITY", &v) == 0)
            s->uidvalidity = v;
        if (imap_is_capability(after, an))
            s->cap_uidplus = imap_has_cap(after, an, "UIDPLUS");
        return 0;
    }
    if (imap_is_capability(p, n)) {
        s->caps = 1;
        s->cap_plain = imap_has_cap(p, n, "AUTH=PLAIN");
        s->cap_sasl_ir = imap_has_cap(p, n, "SASL-IR");
        s->cap_uidplus = imap_has_cap(p, n, "UIDPLUS");
        return 0;
    }
    if (imap_numbered(p, n, &num, &w, &wl) == 0) {
        if (wl == 6 && !strncasecmp(w, "EXISTS", 6)) {
            if (num > IMAP_EXISTS_MAX) {
                count_error(s, "protocol", "EXISTS over ten million messages");
                return -1;
            }
            s->exists = num;
            s->max_untagged = s->untagged + num + IMAP_UNTAGGED_SLACK;
        } else if (wl == 5 && !strncasecmp(w, "FETCH", 5)) {
            memset(&s->fr, 0, sizeof s->fr);
            s->fr.on = 1;
            if (fetch_text(s, w + wl, (size_t)(p + n - w - wl), pc) < 0)
                return -1;
            if (pc->last)
                return fetch_resp_done(s);
        }
    }
    return 0;
}

/* One piece of input; -1 when the session ended on it. */
static int on_piece(struct imap_session *s, const struct imap_piece *pc, size_t used)
{
    int early = s->pre > 0;
    s->pre = s->pre > used ? s->pre - used : 0;
    if (pc->kind == IMAP_LITLINE) {
        if (s->fr.in_body)
            msg_check_line(&s->chk, pc->p, pc->len);
        return 0;
    }
    if (pc->kind == IMAP_LITEND) {
        if (s->fr.in_body) {
            s->fr.in_body = 0;
            s->fr.body_done = 1;
            s->fr.v = msg_check_end(&s->chk);
        }
        return 0;
    }
    if (!pc->first) {                /* a response's text after a literal */
        if (s->fr.on) {
            if (fetch_text(s, pc->p, pc->len, pc) < 0)
                return -1;
            if (pc->last)
                return fetch_resp_done(s);
        }
        return 0;
    }
    const char *tag, *rest;
    size_t tl;
    int kind = imap_split(pc->p, pc->len, &tag, &tl, &rest);
    size_t rn = kind < 0 ? 0 : (size_t)(pc->p + pc->len - rest);
    if (kind < 0 || s->state == IS_IDLE || s->state == IS_CONNECT || s->state == IS_TLS) {
        count_text(s, "protocol", pc->p, pc->len);
        return -1;
    }
    if (kind == IMAP_UNTAGGED)
        return on_untagged(s, rest, rn, pc);
    if (early) {
        /* sent before the server saw the command: it answers nothing */
        char ex[ERR_EXAMPLE_LEN];
        int k = snprintf(ex, sizeof ex, "sent unasked: %.*s", (int)(pc->len < 100 ? pc->len : 100), pc->p);
        count_text(s, "protocol", ex, (size_t)k);
        return -1;
    }
    if (kind == IMAP_CONTINUE) {
        if (!s->auth_wait) {
            count_text(s, "protocol", pc->p, pc->len);
            return -1;
        }
        s->auth_wait = 0;
        const struct user *u = &s->env->run->users.v[s->user];
        char a[600];
        if (sasl_plain(u->addr, u->pass, a, sizeof a) < 0)
            a[0] = 0;
        conn_write(&s->c, a, strlen(a));
        conn_write(&s->c, "\r\n", 2);
        conn_flush(&s->c);
        return 0;
    }
    char want[16];
    int wl = snprintf(want, sizeof want, "a%u", s->tag);
    if (tl != (size_t)wl || memcmp(tag, want, tl) || !pc->last) {
        char ex[ERR_EXAMPLE_LEN];
        int k = snprintf(ex, sizeof ex, "a tagged reply to no command in flight (%s): %.*s", want,
                         (int)(pc->len < 80 ? pc->len : 80), pc->p);
        count_text(s, "protocol", ex, (size_t)k);
        return -1;
    }
    s->auth_wait = 0;
    const char *after;
    enum imap_status st = imap_status(rest, rn, &after);
    if (st != IMAP_ST_OK && st != IMAP_ST_NO && st != IMAP_ST_BAD) {
        count_text(s, "protocol", pc->p, pc->len);
        return -1;
    }
    on_tagged(s, st, after, (size_t)(rest + rn - after));
    return conn_is_open(&s->c) ? 0 : -1;
}

static void on_data(struct imap_session *s)
{
    char why[96];
    while (conn_is_open(&s->c) && s->state != IS_TLS) {
        struct imap_piece pc;
        size_t used;
        int r = imap_next(&s->rd, conn_peek(&s->c), conn_avail(&s->c), &used, &pc, why, sizeof why);
        if (r == 0)
            return;
        if (r < 0) {
            protocol_error(s, why);
            return;
        }
        conn_take(&s->c, used);
        if (on_piece(s, &pc, used) < 0) {
            if (conn_is_open(&s->c))
                finish(s, 1);
            return;
        }
    }
}

static void imap_event(struct conn *c, enum conn_event ev, void *ud)
{
    struct imap_session *s = ud;
    switch (ev) {
    case CONN_UP:
        stats_lat(s->env->st, LAT_IMAP_CONNECT, mono_ns() - s->t_sent);
        s->t_sent = mono_ns();
        if (cfg_of(s)->imap_tls == TLSM_IMPLICIT) {
            s->t_tls = s->t_sent;
            await(s, IS_TLS);
            tls_start(&s->c, s->env->imap_tls, s->target->host, 0);
            return;
        }
        await(s, IS_BANNER);
        return;
    case CONN_TLS_UP: {
        uint64_t now = mono_ns();
        stats_lat(s->env->st, LAT_IMAP_TLS, now - s->t_tls);
        s->env->st->c.tls_handshakes++;
        s->env->st->c.tls_resumed += tls_session_reused(&s->c) > 0;
        s->t_sent = now;
        imap_rd_init(&s->rd, IMAP_MAX_LINE, cfg_of(s)->imap_max_literal);
        if (cfg_of(s)->imap_tls == TLSM_UPGRADE)
            after_greeting(s);       /* after STARTTLS: the greeting came before */
        else
            await(s, IS_BANNER);
        return;
    }
    case CONN_DATA:
        on_data(s);
        return;
    case CONN_TIMEOUT:
        count_timeout(s->env, "imap", is_stage[s->state], &s->c, cfg_of(s)->imap_timeout);
        finish(s, 1);
        return;
    case CONN_CLOSED:
        if (s->state == IS_LOGOUT && s->bye) {
            visit_done(s);           /* a server may close after its BYE, before the tagged OK */
            return;
        }
        count_conn_error(s->env, "imap", is_stage[s->state], &s->c);
        finish(s, 1);
        return;
    }
}

static void start_session(struct imap_session *s)
{
    struct session_env *env = s->env;
    struct run *r = env->run;
    int phase = atomic_load_explicit(&r->phase, memory_order_relaxed);
    if (phase == PH_STOP)
        return;
    s->owed_only = 0;
    if (s->retry_user && phase == PH_SWEEP) {
        if (!hold_mailbox(s, s->user)) {
            again_at(s, loop_now(env->loop) + 50 * NS_PER_MS);
            return;
        }
        s->retry_user = 0;
    } else if (!pick_user(s)) {
        uint64_t soon = loop_now(env->loop) + 100 * NS_PER_MS;
        again_at(s, s->hold_next && s->hold_next < soon ? s->hold_next : soon);
        return;
    }
    s->limit = s->sweep || cfg_of(s)->max_per_session > IMAP_VISIT_MAX ? IMAP_VISIT_MAX
                                                                       : (size_t)cfg_of(s)->max_per_session;
    s->nm = s->hint = 0;
    s->listed = s->partial = s->refused = s->login_refused = 0;
    s->caps = s->cap_plain = s->cap_uidplus = s->cap_sasl_ir = 0;
    s->auth_wait = s->bye = 0;
    s->exists = s->uidvalidity = 0;
    s->untagged = 0;
    s->max_untagged = IMAP_UNTAGGED_SLACK;
    s->pre = 0;
    s->t_list = 0;
    memset(&s->fr, 0, sizeof s->fr);
    imap_rd_init(&s->rd, IMAP_MAX_LINE, cfg_of(s)->imap_max_literal);
    const struct target *t = &r->imap[env->rr++ % r->nimap];
    const struct target *b = next_bind(env, r->pop3_bind, r->npop3_bind);
    s->target = t;
    s->t_sent = mono_ns();
    set_state(s, IS_CONNECT);
    if (env->dial(env, &s->c, t, b) < 0) {
        count_conn_error(env, "imap", "connect", &s->c);
        finish(s, 1);
        return;
    }
    s->c.max_line = IMAP_MAX_LINE;
    conn_deadline(&s->c, cfg_of(s)->imap_timeout);
}

static void imap_init(void *arg, struct session_env *env, unsigned id)
{
    struct imap_session *s = arg;
    s->env = env;
    conn_init(&s->c, env->loop, imap_event, s);
    s->backoff.fn = backoff_fired;
    s->md = alloc_check(EVP_MD_CTX_new());
    rng_seed(&s->rng, env->run->seed ^ (0x494d415000000000ull + id));
}

static void imap_start(void *arg)
{
    struct imap_session *s = arg;
    uint64_t delay = s->env->run->cfg->start_after;
    if (delay)
        timer_arm_in(s->env->loop, &s->backoff, delay);
    else
        start_session(s);
}

static void imap_phase(void *arg, int phase)
{
    struct imap_session *s = arg;
    struct session_env *env = s->env;
    if (phase == PH_STOP) {
        timer_cancel(env->loop, &s->backoff);
        /* an EXPUNGE in flight may already have removed mail: its answer is
         * awaited (bounded by the timeout) so the count stays exact */
        if (s->state == IS_EXPUNGE && conn_is_open(&s->c))
            return;
        count_unanswered(env, "imap", is_stage[s->state], &s->c, cfg_of(s)->imap_timeout);
        conn_close(&s->c);
        end_sweep_claim(s);
        release_mailbox(s);
        set_state(s, IS_IDLE);
    } else if (s->state == IS_IDLE && timer_armed(&s->backoff) &&
               loop_now(env->loop) >= env->run->t0 + env->run->cfg->start_after) {
        timer_arm_in(env->loop, &s->backoff, 0);
    }
}

static int imap_is_open(const void *s)
{
    return conn_is_open(&((const struct imap_session *)s)->c);
}

static void imap_free(void *arg)
{
    struct imap_session *s = arg;
    conn_close(&s->c);
    buf_free(&s->c.in);
    buf_free(&s->c.out);
    free(s->m);
    EVP_MD_CTX_free(s->md);
}

const struct session_ops imap_ops = {
    .name = "imap", .size = sizeof(struct imap_session), .init = imap_init, .start = imap_start,
    .phase = imap_phase, .is_open = imap_is_open, .free = imap_free,
};
