/* imap: the IMAP reader sessions (readers.protocol = imap) — a non-blocking
 * IMAP client state machine: the connection (implicit TLS or STARTTLS), the
 * greeting and capabilities, LOGIN or AUTHENTICATE PLAIN, SELECT INBOX, the
 * responses read by imap_parse.c and dispatched by their tags, LOGOUT. What a
 * session does with the mailbox is imap_sync.c's (the drain model: list, fetch,
 * judge, delete, expunge) and imap_idle.c's (the idle model: IDLE between
 * syncs). Commands go one at a time, or with imap.pipelining a few behind the
 * one in flight where RFC 3501 5.5 allows it (each depends on the one before):
 * a tagged reply must carry the tag of the oldest command in flight, and a
 * reply already buffered when a command went out with none in flight answers
 * nothing. Responses are bounded by a line, the literal's cap and the size the
 * server gave, and a count of untagged responses per command; the commands in
 * flight by IMAP_PIPE_MAX. A pipelined command is timed from when the server
 * could begin it (imap_began), so its time reads as without pipelining. */
#include "engine/imap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/imap_idle.h"
#include "engine/imap_parse.h"
#include "engine/imap_session.h"
#include "engine/imap_sync.h"
#include "engine/reply.h"
#include "engine/sasl.h"
#include "lib/alloc.h"
#include "lib/conn.h"
#include "lib/rng.h"
#include "lib/tls.h"

const char *const imap_stage[IS_STATES] = {
    "idle", "connect", "tls", "banner", "capability", "starttls", "login", "select", "list", "fetch",
    "store", "expunge", "logout", "idle", "idle", "done", "noop", "headers", "open",
};
static const enum lat is_lat[IS_STATES] = {
    LAT_COUNT, LAT_IMAP_CONNECT, LAT_IMAP_TLS, LAT_IMAP_BANNER, LAT_IMAP_CAPABILITY, LAT_COUNT, LAT_IMAP_LOGIN,
    LAT_IMAP_SELECT, LAT_IMAP_LIST, LAT_IMAP_FETCH, LAT_IMAP_STORE, LAT_IMAP_EXPUNGE, LAT_IMAP_LOGOUT,
    LAT_COUNT, LAT_COUNT, LAT_COUNT, LAT_COUNT, LAT_IMAP_HEADERS, LAT_IMAP_FETCH,
};

/* A response line: Dovecot's CAPABILITY and a FETCH's items fit in a few hundred
 * bytes; a body's lines are RFC 5322's 998 at most, corpora's a little more. */
#define IMAP_MAX_LINE 8192
/* Untagged responses a command may draw beyond one per message the mailbox holds
 * (EXISTS, RECENT, FLAGS, OK codes...): more is a flood. */
#define IMAP_UNTAGGED_SLACK 64
/* An idle client's reads (lib/conn.c's in_min). */
#define IMAP_IDLE_IN_MIN 1024
/* What EXISTS may announce: no mailbox of a soak holds ten million messages. */
#define IMAP_EXISTS_MAX 10000000

static void start_session(struct imap_session *s);

static void set_state(struct imap_session *s, enum is st)
{
    s->state = st;
}

const struct config *imap_cfg(const struct imap_session *s)
{
    return s->env->run->cfg;
}

static const struct config *cfg_of(const struct imap_session *s)
{
    return s->env->run->cfg;
}

/* Between sessions, the next one; while idling, the IDLE's renewal. */
static void backoff_fired(struct loop *l, struct timer *t)
{
    struct imap_session *s = (struct imap_session *)((char *)t - offsetof(struct imap_session, backoff));
    (void)l;
    if (s->state == IS_IDLING)
        imap_idle_renew(s);
    else
        start_session(s);
}

static void again_at(struct imap_session *s, uint64_t when_ns)
{
    set_state(s, IS_IDLE);
    if (atomic_load_explicit(&s->env->run->phase, memory_order_relaxed) == PH_STOP)
        return;
    timer_arm(s->env->loop, &s->backoff, when_ns);
}

void imap_finish(struct imap_session *s, int failed)
{
    conn_close(&s->c);
    /* a sweep visit that failed keeps its claim and tries the mailbox again, a few times */
    reader_visit_end(&s->pick, s->env, failed);
    s->fails = failed ? s->fails + 1 : 0;
    again_at(s, loop_now(s->env->loop) + backoff_ms(s->fails, s->login_refused) * NS_PER_MS);
}

void imap_count(struct imap_session *s, const char *kind, const char *example)
{
    char name[ERR_NAME_LEN];
    snprintf(name, sizeof name, "imap_%s_%s", imap_stage[s->state], kind);
    stats_error(s->env->st, name, example);
}

static void count_text(struct imap_session *s, const char *kind, const char *p, size_t n)
{
    char name[ERR_NAME_LEN];
    snprintf(name, sizeof name, "imap_%s_%s", imap_stage[s->state], kind);
    stats_error_text(s->env->st, name, p, n < ERR_EXAMPLE_LEN - 1 ? n : ERR_EXAMPLE_LEN - 1);
}

/* A server that broke the protocol: counted, the connection dropped. */
static void protocol_error(struct imap_session *s, const char *why)
{
    imap_count(s, "protocol", why);
    imap_finish(s, 1);
}

static void await(struct imap_session *s, enum is st)
{
    set_state(s, st);
    conn_deadline(&s->c, cfg_of(s)->imap_timeout);
}

/* Writes "a<N> command\r\n" and notes it in flight. Input already buffered when
 * a command goes out with none in flight answers nothing (s->pre). */
static void write_cmd(struct imap_session *s, enum is st, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void write_cmd(struct imap_session *s, enum is st, const char *fmt, va_list ap)
{
    char buf[IMAP_SET_MAX + 128];
    int k = snprintf(buf, sizeof buf, "a%u ", ++s->tag);
    int n = vsnprintf(buf + k, sizeof buf - (size_t)k - 2, fmt, ap);
    size_t len = (size_t)k + (n < (int)(sizeof buf - (size_t)k - 2) ? (size_t)n : sizeof buf - (size_t)k - 3);
    buf[len++] = '\r';
    buf[len++] = '\n';
    conn_write(&s->c, buf, len);
    if (!s->nfl) {
        s->pre = conn_avail(&s->c);
        s->env->st->c.imap_rounds++;
    }
    s->env->st->c.imap_commands++;
    s->fl[s->nfl++] = (struct inflight){ .tag = s->tag, .st = st, .sent = mono_ns() };
}

uint64_t imap_began(uint64_t sent, uint64_t prev_answer, uint64_t rtt)
{
    uint64_t alone = prev_answer > rtt ? prev_answer - rtt : 0;
    return sent > alone ? sent : alone;
}

/* The state awaits the reply to the command in flight at fl[i]: it is timed
 * from when the server could begin it, and its untagged responses are counted.
 * Behind others still in flight (dropped), that moment comes with their
 * answers (on_piece). */
static void awaiting(struct imap_session *s, enum is st, unsigned i)
{
    s->cur_tag = s->fl[i].tag;
    s->t_sent = i ? s->fl[i].sent : imap_began(s->fl[0].sent, s->t_answer, s->rtt);
    s->untagged = 0;
    s->max_untagged = s->exists + IMAP_UNTAGGED_SLACK;
    await(s, st);
}

void imap_send(struct imap_session *s, enum is st, const char *fmt, ...)
{
    /* already sent, pipelined: those before it the session no longer wants */
    for (unsigned i = 0; i < s->nfl; i++)
        if (!s->fl[i].drop && s->fl[i].st == st) {
            for (unsigned j = 0; j < i; j++)
                s->fl[j].drop = 1;
            awaiting(s, st, i);
            return;
        }
    for (unsigned i = 0; i < s->nfl; i++) {
        /* cannot happen: LOGOUT is queued only where nothing else follows, and
         * the queue leaves a place */
        if (s->fl[i].st == IS_LOGOUT || s->nfl == IMAP_PIPE_MAX) {
            imap_count(s, "other", "a command wanted behind a LOGOUT or a full pipeline");
            imap_finish(s, 1);
            return;
        }
        s->fl[i].drop = 1;
    }
    va_list ap;
    va_start(ap, fmt);
    write_cmd(s, st, fmt, ap);
    va_end(ap);
    awaiting(s, st, s->nfl - 1);
    conn_flush(&s->c);
}

void imap_queue(struct imap_session *s, enum is st, const char *fmt, ...)
{
    if (!cfg_of(s)->imap_pipelining || !s->nfl || s->nfl + 1 >= IMAP_PIPE_MAX)
        return;
    for (unsigned i = 0; i < s->nfl; i++)
        if (!s->fl[i].drop && s->fl[i].st == st && s->fl[i].tag != s->cur_tag)
            return;                  /* queued already, behind the one awaited */
    va_list ap;
    va_start(ap, fmt);
    write_cmd(s, st, fmt, ap);
    va_end(ap);
    conn_flush(&s->c);
}

/* ---- the visit's steps ---- */

/* SELECT INBOX (webmail: EXAMINE, it changes nothing), pipelined behind the
 * login, or sent once it is answered. */
static void queue_select(struct imap_session *s)
{
    if (s->own_client && s->model == IMAP_WEBMAIL)
        imap_queue(s, IS_SELECT, "EXAMINE INBOX");
    else
        imap_queue(s, IS_SELECT, "SELECT INBOX");
}

static void login(struct imap_session *s)
{
    const struct user *u = &s->env->run->users.v[s->pick.user];
    int mode = cfg_of(s)->imap_auth;
    if (mode == IMAP_AUTH_AUTO)
        mode = s->cap_plain ? IMAP_AUTH_PLAIN : IMAP_AUTH_LOGIN;
    char a[600], b[600];
    if (mode == IMAP_AUTH_PLAIN && sasl_plain(u->addr, u->pass, a, sizeof a) == 0) {
        if (s->cap_sasl_ir) {
            imap_send(s, IS_LOGIN, "AUTHENTICATE PLAIN %s", a);
            queue_select(s);
        } else {                     /* the credentials follow the "+": nothing behind it */
            s->auth_wait = 1;
            imap_send(s, IS_LOGIN, "AUTHENTICATE PLAIN");
        }
        return;
    }
    if (imap_quote(u->addr, a, sizeof a) < 0 || imap_quote(u->pass, b, sizeof b) < 0) {
        set_state(s, IS_LOGIN);
        imap_count(s, "other", "a user or password a quoted string cannot carry (CR or LF)");
        s->refused = s->login_refused = 1;
        imap_logout(s);
        return;
    }
    imap_send(s, IS_LOGIN, "LOGIN %s %s", a, b);
    queue_select(s);
}

/* After the greeting (and STARTTLS): what the login needs to know first. */
static void after_greeting(struct imap_session *s)
{
    if (cfg_of(s)->imap_tls == TLSM_UPGRADE && !tls_active(&s->c)) {
        imap_send(s, IS_STARTTLS, "STARTTLS");
        return;
    }
    if (!s->caps && cfg_of(s)->imap_auth != IMAP_AUTH_LOGIN) {
        imap_send(s, IS_CAPA, "CAPABILITY");
        return;
    }
    login(s);
}

void imap_logout(struct imap_session *s)
{
    imap_send(s, IS_LOGOUT, "LOGOUT");
}

int imap_in_flight(const struct imap_session *s, enum is st)
{
    for (unsigned i = 0; i < s->nfl; i++)
        if (!s->fl[i].drop && s->fl[i].st == st)
            return 1;
    return 0;
}

static void on_tagged(struct imap_session *s, enum imap_status st, const char *text, size_t n)
{
    enum is cur = s->state;
    if (is_lat[cur] != LAT_COUNT)
        stats_lat(s->env->st, is_lat[cur], mono_ns() - s->t_sent);
    if (imap_is_capability(text, n)) {
        s->caps = 1;
        s->cap_uidplus = imap_has_cap(text, n, "UIDPLUS");
    }
    int ok = st == IMAP_ST_OK;
    if (!ok)
        count_text(s, imap_err_kind(st, text, n), text, n);
    switch (cur) {
    case IS_LIST:
    case IS_FETCH:
    case IS_STORE:
    case IS_EXPUNGE:
        imap_sync_tagged(s, ok);
        return;
    case IS_IDLE_CMD:
    case IS_IDLING:
    case IS_DONE:
    case IS_NOOP:
        imap_idle_tagged(s, ok);
        return;
    case IS_HEADERS:
    case IS_OPEN:
        imap_webmail_tagged(s, ok);
        return;
    case IS_LOGOUT:
        if (ok)
            imap_visit_done(s);
        else
            imap_finish(s, 1);
        return;
    default:
        break;
    }
    if (!ok) {
        /* a refused login, SELECT or STARTTLS: the visit failed */
        s->refused = 1;
        s->login_refused = cur == IS_LOGIN && strcmp(imap_err_kind(st, text, n), "in_use");
        imap_logout(s);
        return;
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
        /* webmail reads, and never changes the mailbox */
        if (s->own_client && s->model == IMAP_WEBMAIL)
            imap_send(s, IS_SELECT, "EXAMINE INBOX");
        else
            imap_send(s, IS_SELECT, "SELECT INBOX");
        return;
    case IS_SELECT:
        if (s->own_client && s->model == IMAP_WEBMAIL) {
            imap_webmail_start(s);
            return;
        }
        s->next_uid = 0;             /* a new login lists the whole mailbox */
        s->why_sync = SYNC_LOGIN;
        imap_sync_start(s);
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
        imap_count(s, "protocol", "more untagged responses than the mailbox holds messages");
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
        imap_finish(s, 1);
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
    if (n >= 8 && !strncasecmp(p, "VANISHED", 8) && (n == 8 || p[8] == ' ')) {
        /* QRESYNC's removal by UID (RFC 7162), never enabled here: what it
         * removed cannot be told, so it proves nothing */
        imap_count(s, "protocol", "VANISHED, and QRESYNC was never enabled");
        return -1;
    }
    if (imap_numbered(p, n, &num, &w, &wl) == 0) {
        if (wl == 6 && !strncasecmp(w, "EXISTS", 6)) {
            if (num > IMAP_EXISTS_MAX) {
                imap_count(s, "protocol", "EXISTS over ten million messages");
                return -1;
            }
            s->max_untagged = s->untagged + num + IMAP_UNTAGGED_SLACK;
            imap_idle_exists(s, num);
            s->exists = num;
        } else if (wl == 7 && !strncasecmp(w, "EXPUNGE", 7)) {
            /* a number the mailbox does not hold would remove some other message */
            if (!num || num > s->exists) {
                imap_count(s, "protocol", "an EXPUNGE of a message number beyond EXISTS");
                return -1;
            }
            imap_expunged(s, num);
            s->exists--;
        } else if (wl == 5 && !strncasecmp(w, "FETCH", 5)) {
            memset(&s->fr, 0, sizeof s->fr);
            s->fr.on = 1;
            s->fr.seq = num;
            if (imap_fetch_text(s, w + wl, (size_t)(p + n - w - wl), pc) < 0)
                return -1;
            if (pc->last)
                return imap_fetch_done(s);
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
            if (imap_fetch_text(s, pc->p, pc->len, pc) < 0)
                return -1;
            if (pc->last)
                return imap_fetch_done(s);
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
    if (kind == IMAP_CONTINUE && s->state == IS_IDLE_CMD) {
        imap_idle_continued(s);
        return conn_is_open(&s->c) ? 0 : -1;
    }
    if (kind == IMAP_CONTINUE) {
        if (!s->auth_wait) {
            count_text(s, "protocol", pc->p, pc->len);
            return -1;
        }
        s->auth_wait = 0;
        const struct user *u = &s->env->run->users.v[s->pick.user];
        char a[600];
        if (sasl_plain(u->addr, u->pass, a, sizeof a) < 0)
            a[0] = 0;
        conn_write(&s->c, a, strlen(a));
        conn_write(&s->c, "\r\n", 2);
        conn_flush(&s->c);
        return 0;
    }
    /* the oldest command in flight is answered first: pipelined commands
     * depend each on the one before, so the server answers them in order */
    char want[16] = "none";
    int wl = s->nfl ? snprintf(want, sizeof want, "a%u", s->fl[0].tag) : 0;
    if (!s->nfl || tl != (size_t)wl || memcmp(tag, want, tl) || !pc->last) {
        char ex[ERR_EXAMPLE_LEN];
        int k = snprintf(ex, sizeof ex, "a tagged reply to no command in flight, or out of order (awaited %s): %.*s",
                         want, (int)(pc->len < 80 ? pc->len : 80), pc->p);
        count_text(s, "protocol", ex, (size_t)k);
        return -1;
    }
    struct inflight f = s->fl[0];
    memmove(s->fl, s->fl + 1, --s->nfl * sizeof *s->fl);
    s->t_answer = mono_ns();
    if (s->nfl && s->fl[0].tag == s->cur_tag && f.tag != s->cur_tag)
        s->t_sent = imap_began(s->fl[0].sent, s->t_answer, s->rtt);  /* the awaited one is next */
    s->auth_wait = 0;
    const char *after;
    enum imap_status st = imap_status(rest, rn, &after);
    if (st != IMAP_ST_OK && st != IMAP_ST_NO && st != IMAP_ST_BAD) {
        count_text(s, "protocol", pc->p, pc->len);
        return -1;
    }
    size_t an = (size_t)(rest + rn - after);
    if (f.drop || f.tag != s->cur_tag)
        return 0;                    /* pipelined, and unwanted since the command before it failed */
    on_tagged(s, st, after, an);
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
                imap_finish(s, 1);
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
        s->rtt = mono_ns() - s->t_sent;  /* a SYN and its answer: one round trip */
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
        count_timeout(s->env, "imap", imap_stage[s->state], &s->c, cfg_of(s)->imap_timeout);
        imap_finish(s, 1);
        return;
    case CONN_CLOSED:
        if (s->state == IS_LOGOUT && s->bye) {
            imap_visit_done(s);           /* a server may close after its BYE, before the tagged OK */
            return;
        }
        count_conn_error(s->env, "imap", imap_stage[s->state], &s->c);
        imap_finish(s, 1);
        return;
    }
}

/* The drain readers leave the idle and poll users' mailboxes to their clients
 * while the run sends and drains (the sweep visits them all); the webmail users'
 * they read, webmail deletes nothing. */
static int clients_mailbox(void *ud, uint32_t u)
{
    const struct imap_session *s = ud;
    const struct run *r = s->env->run;
    return u < r->imap_users[IMAP_IDLE] + r->imap_users[IMAP_POLL];
}

/* The next session: an idle user's client logs in to its own mailbox while the
 * run sends and drains; every other session, and an idle one in the sweep,
 * picks a mailbox as a drain reader does. */
static int pick(struct imap_session *s, int phase)
{
    struct session_env *env = s->env;
    s->own_client = s->idle_user >= 0 && (phase == PH_SEND || phase == PH_DRAIN);
    s->idle_client = s->own_client && s->model == IMAP_IDLE;
    if (s->own_client) {
        s->pick.user = (uint32_t)s->idle_user;
        s->pick.owed_only = 0;
        s->pick.hold_next = 0;
        /* webmail deletes nothing: it shares the mailbox with whoever reads it */
        return s->model == IMAP_WEBMAIL || reader_hold(&s->pick, env, s->pick.user);
    }
    return reader_pick(&s->pick, env, clients_mailbox, s);
}

static void start_session(struct imap_session *s)
{
    struct session_env *env = s->env;
    struct run *r = env->run;
    int phase = atomic_load_explicit(&r->phase, memory_order_relaxed);
    if (phase == PH_STOP)
        return;
    if (s->idle_user >= 0 && s->model != IMAP_IDLE && (phase == PH_SEND || phase == PH_DRAIN)) {
        /* poll and webmail: a login every poll_interval (+- 10 %), the first at
         * a random point of the first interval, so the logins come evenly */
        uint64_t now = loop_now(env->loop), iv = cfg_of(s)->imap_poll_interval;
        if (!s->next_due)
            s->next_due = now + (uint64_t)(rng_unit(&s->pick.rng) * (double)iv);
        if (now < s->next_due) {
            again_at(s, s->next_due);
            return;
        }
        s->next_due += (uint64_t)((double)iv * (0.9 + 0.2 * rng_unit(&s->pick.rng)));
        if (s->next_due < now)
            s->next_due = now;       /* a late login: the next one an interval on, not at once */
    }
    if (!pick(s, phase)) {
        /* nothing owed now, or every owed mailbox held back: look again soon, or
         * when the first of those may be visited, if sooner */
        uint64_t soon = loop_now(env->loop) + 100 * NS_PER_MS;
        again_at(s, s->pick.hold_next && s->pick.hold_next < soon ? s->pick.hold_next : soon);
        return;
    }
    s->limit = s->pick.sweep || cfg_of(s)->max_per_session > IMAP_VISIT_MAX ? IMAP_VISIT_MAX
                                                                            : (size_t)cfg_of(s)->max_per_session;
    s->nm = s->hint = 0;
    s->listed = s->partial = s->refused = s->login_refused = 0;
    s->caps = s->cap_plain = s->cap_uidplus = s->cap_sasl_ir = 0;
    s->auth_wait = s->bye = s->leaving = 0;
    s->exists = s->uidvalidity = s->next_uid = 0;
    s->t_exists = 0;
    s->busy_news = 0;
    s->untagged = 0;
    s->max_untagged = IMAP_UNTAGGED_SLACK;
    s->pre = 0;
    s->nfl = 0;
    s->t_answer = s->rtt = 0;
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
        imap_finish(s, 1);
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
    rng_seed(&s->pick.rng, env->run->seed ^ (0x494d415000000000ull + id));
    uint64_t after = 0;
    if (imap_delete_parse(env->run->cfg->imap_delete, &after) == 0 && after) {
        s->keep = 1;
        s->delete_after = after == IMAP_DELETE_NEVER ? 0 : after / NS_PER_MS;
    }
    /* the first sessions are the idle users' clients, one each */
    const struct run *r = env->run;
    s->idle_user = id < r->imap_own ? (int)id : -1;
    s->model = id < r->imap_users[IMAP_IDLE] ? IMAP_IDLE
             : id < r->imap_users[IMAP_IDLE] + r->imap_users[IMAP_POLL] ? IMAP_POLL : IMAP_WEBMAIL;
    /* an idle client reads greetings, capabilities and EXISTS, seldom a body:
     * small reads keep 10,000 of them within 4 KiB each (make bench) */
    if (s->idle_user >= 0 && s->model == IMAP_IDLE)
        s->c.in_min = IMAP_IDLE_IN_MIN;
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
        /* an EXPUNGE in flight (or pipelined behind the STORE in flight) may
         * already have removed mail: its answer is awaited (bounded by the
         * timeout) so the count stays exact */
        int expunging = 0;
        for (unsigned i = 0; i < s->nfl; i++)
            expunging |= s->fl[i].st == IS_EXPUNGE && !s->fl[i].drop;
        if (expunging && conn_is_open(&s->c))
            return;
        count_unanswered(env, "imap", imap_stage[s->state], &s->c, cfg_of(s)->imap_timeout);
        conn_close(&s->c);
        reader_end_sweep(&s->pick, env);
        reader_release(&s->pick, env);
        set_state(s, IS_IDLE);
        return;
    }
    if (s->idle_client)
        imap_idle_phase(s, phase);
    if (s->state == IS_IDLE && timer_armed(&s->backoff) &&
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
