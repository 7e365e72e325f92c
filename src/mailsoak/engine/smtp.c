/* smtp: the sender sessions — a non-blocking SMTP client state machine. Each
 * connection: banner, EHLO, k messages (MAIL, RCPT, DATA, body), QUIT, reconnect.
 * With PIPELINING, MAIL+RCPT+DATA go out in one write and their replies are taken
 * in order; in lockstep each command waits for the previous reply. Here: the
 * connection, its greeting, TLS, AUTH and the replies by state; one transaction
 * (the message, its recipients, its body, its end of data, retries) is
 * smtp_txn.c's. The state changes in exactly one place, set_state() (smtp_txn.h),
 * so its name is always known. */
#include "engine/smtp.h"
#include "engine/smtp_txn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/conn.h"
#include "engine/reply.h"
#include "lib/printable.h"
#include "lib/rng.h"
#include "engine/sasl.h"
#include "lib/tls.h"
#include "engine/session.h"

static const char *const sm_stage[] = {
    "idle", "connect", "banner", "ehlo", "mail", "rcpt", "data", "eod", "rset", "quit", "wait",
    "tls", "starttls", "auth", "body",
};
static const enum lat sm_lat[] = {
    LAT_COUNT, LAT_SMTP_CONNECT, LAT_SMTP_BANNER, LAT_SMTP_EHLO, LAT_SMTP_MAIL, LAT_SMTP_RCPT,
    LAT_SMTP_DATA, LAT_SMTP_EOD, LAT_COUNT, LAT_SMTP_QUIT, LAT_COUNT,
    LAT_COUNT, LAT_COUNT, LAT_COUNT,  /* TLS and AUTH are timed as a whole exchange */
    LAT_COUNT,
};


static void smtp_event(struct conn *c, enum conn_event ev, void *ud);
static void start_connect(struct smtp_session *s);

/* Whether this session may open a connection: while sending, and while draining
 * as long as this worker holds deferred messages. */
static int may_send(const struct smtp_session *s)
{
    int phase = atomic_load_explicit(&s->env->run->phase, memory_order_relaxed);
    return phase == PH_SEND || (phase == PH_DRAIN && retrying(s) && retryq_len(&s->env->retry));
}

static void backoff_fired(struct loop *l, struct timer *t)
{
    struct smtp_session *s = (struct smtp_session *)((char *)t - offsetof(struct smtp_session, backoff));
    (void)l;
    if (s->state == SM_WAIT && conn_is_open(&s->c))
        smtp_next_transaction(s);
    else
        start_connect(s);
}

/* Idles an open connection until `when`; the server may still close it. */
void smtp_wait_until(struct smtp_session *s, uint64_t when)
{
    set_state(s, SM_WAIT);
    conn_deadline(&s->c, 0);
    timer_arm(s->env->loop, &s->backoff, when);
}

/* After a failure: try again later each time (backoff_ms). */
static void reconnect_later(struct smtp_session *s)
{
    uint64_t ms = backoff_ms(s->fails, s->refused);
    set_state(s, SM_IDLE);
    if (!may_send(s))
        return;
    uint64_t at = mono_ns() + ms * NS_PER_MS;
    if (retrying(s)) {
        /* nothing new to send (draining, or the messages = N budget is held by
         * deferred messages): come back when the next deferred one is due */
        int idle = atomic_load_explicit(&s->env->run->phase, memory_order_relaxed) != PH_SEND ||
                   (cfg_of(s)->messages && atomic_load_explicit(&s->env->run->send_budget, memory_order_relaxed) <= 0);
        uint64_t due = retryq_next_due(&s->env->retry);
        if (idle && !due)
            due = mono_ns() + 1000 * NS_PER_MS;  /* another worker's deferred message holds the budget */
        if (idle && due > at)
            at = due;
    }
    timer_arm(s->env->loop, &s->backoff, at);
}

static void fail_conn(struct smtp_session *s)
{
    count_conn_error(s->env, "smtp", sm_stage[s->state], &s->c);
    smtp_abandon_transaction(s);
    s->fails++;
    reconnect_later(s);
}

void smtp_fail_reply(struct smtp_session *s, enum sm stage, const struct smtp_reply *r)
{
    char name[ERR_NAME_LEN];
    snprintf(name, sizeof name, "smtp_%s_%d", sm_stage[stage], r->code);
    stats_error_text(s->env->st, name, r->text, r->len);
}

static void close_and_reconnect(struct smtp_session *s, int failed)
{
    smtp_abandon_transaction(s);
    conn_close(&s->c);
    s->fails = failed ? s->fails + 1 : 0;
    reconnect_later(s);
}

void smtp_await(struct smtp_session *s, enum sm st)
{
    set_state(s, st);
    smtp_reply_reset(&s->reply);
    conn_deadline(&s->c, cfg_of(s)->smtp_timeout);
}

/* Input that answers nothing (not SMTP, a line past the limit, a reply sent
 * before it was asked for): the session cannot go on. */
static void protocol_error(struct smtp_session *s, const char *text, size_t len)
{
    char name[ERR_NAME_LEN];
    snprintf(name, sizeof name, "smtp_%s_protocol", sm_stage[s->state == SM_CONNECT ? SM_BANNER : s->state]);
    stats_error_text(s->env->st, name, text, len);
    close_and_reconnect(s, 1);
}

/* Sends what was written. We write only once every reply asked for has come, so
 * input already waiting was sent before the server saw this command and answers
 * nothing: an early 250 behind a 354 would settle a message whose body never went
 * out (issue 13). Only a 421 may come unasked (RFC 5321 3.8); it is read as such. */
void smtp_send_now(struct smtp_session *s)
{
    size_t n = conn_avail(&s->c);
    if (n && !(n >= 3 && !memcmp(conn_peek(&s->c), "421", 3))) {
        count_unasked(s->env, "smtp", sm_stage[s->state], &s->c);
        close_and_reconnect(s, 1);
        return;
    }
    conn_flush(&s->c);
}

/* Writes one command and waits for its reply in state st. */
void smtp_command(struct smtp_session *s, enum sm st, const char *line)
{
    conn_puts(&s->c, line);
    s->t_sent = mono_ns();
    smtp_await(s, st);
    smtp_send_now(s);
}

void smtp_send_quit(struct smtp_session *s)
{
    smtp_command(s, SM_QUIT, "QUIT\r\n");
}

static void send_ehlo(struct smtp_session *s)
{
    conn_printf(&s->c, "%s %s\r\n", s->lmtp ? "LHLO" : "EHLO", cfg_of(s)->helo);
    s->t_sent = mono_ns();
    s->ext = 0;
    s->size_limit = 0;
    smtp_await(s, SM_EHLO);
    smtp_send_now(s);
}

/* Implicit TLS (SM_TLS, right after connect) or the STARTTLS upgrade. */
static void start_tls(struct smtp_session *s, enum sm st)
{
    set_state(s, st);
    s->t_exchange = mono_ns();
    conn_deadline(&s->c, cfg_of(s)->smtp_timeout);
    tls_start(&s->c, s->env->smtp_tls, s->target->host, 0);
}

static void tls_done(struct smtp_session *s)
{
    struct session_env *env = s->env;
    uint64_t now = mono_ns();
    stats_lat(env->st, LAT_SMTP_TLS, now - s->t_exchange);
    env->st->c.tls_handshakes++;
    env->st->c.tls_resumed += tls_session_reused(&s->c) > 0;
    if (s->state == SM_TLS) {
        s->t_sent = now;
        smtp_await(s, SM_BANNER);
    } else {
        send_ehlo(s);                /* RFC 3207: forget what was learnt before TLS */
    }
}

static void ready_to_send(struct smtp_session *s)
{
    /* RFC 2033: every LMTP server pipelines */
    s->pipelined = cfg_of(s)->pipelining == PIPE_ON ||
                   (cfg_of(s)->pipelining == PIPE_AUTO && (s->ext & EXT_PIPELINING || s->lmtp));
    s->env->st->c.smtp_pipelined += s->pipelined;
    s->fails = 0;
    s->msgs_left = (unsigned)rng_range(&s->rng, cfg_of(s)->msgs_per_conn.lo, cfg_of(s)->msgs_per_conn.hi);
    struct run *r = s->env->run;
    if (r->ladder) {
        /* the ladder's rungs follow from what the server advertised: told once */
        uint64_t none = 0, rungs[LADDER_RUNGS_MAX];
        if (atomic_compare_exchange_strong(&r->ladder_limit, &none, s->size_limit + 1))
            atomic_store(&r->ladder_total,
                         ladder_rungs(s->size_limit, cfg_of(s)->ladder_max, rungs) * cfg_of(s)->ladder_count);
    }
    smtp_next_transaction(s);
}

/* SMTP AUTH as one user of the list, chosen per connection. */
static void start_auth(struct smtp_session *s)
{
    char line[720];
    s->auth_user = (uint32_t)rng_range(&s->rng, 0, s->env->run->users.n - 1);
    const struct user *u = &s->env->run->users.v[s->auth_user];
    smtp_auth_begin(&s->auth, cfg_of(s)->smtp_auth, s->ext, u->addr, u->pass, line, sizeof line);
    conn_printf(&s->c, "%s\r\n", line);
    s->t_exchange = s->t_sent = mono_ns();
    smtp_await(s, SM_AUTH);
    smtp_send_now(s);
}

/* last: the reply's last line, whole: a CRAM-MD5 challenge may be longer than the
 * copy kept for examples (issue 13). */
static void on_auth_reply(struct smtp_session *s, const struct smtp_reply *r, const char *last, size_t len)
{
    const struct user *u = &s->env->run->users.v[s->auth_user];
    char line[720];
    if (r->code == 235) {
        stats_lat(s->env->st, LAT_SMTP_AUTH, mono_ns() - s->t_exchange);
        s->authed = 1;
        ready_to_send(s);
        return;
    }
    if (r->code == 334 && smtp_auth_answer(&s->auth, u->addr, u->pass, len > 4 ? last + 4 : "", line, sizeof line)) {
        conn_printf(&s->c, "%s\r\n", line);
        smtp_await(s, SM_AUTH);
        smtp_send_now(s);
        return;
    }
    smtp_fail_reply(s, SM_AUTH, r);
    s->refused = 1;
    smtp_send_quit(s);
}

/* After a reply within the MAIL/RCPT/DATA group: pipelined, the next command is
 * already out; in lockstep it goes now (RCPT number `rcpt`, or DATA for -1), unless
 * the transaction failed, which ends it. Then its reply is awaited in state next. */
static void lockstep_next(struct smtp_session *s, uint64_t now, int rcpt, enum sm next)
{
    if (s->pipelined) {
        smtp_await(s, next);
        return;
    }
    if (s->group_failed) {
        smtp_transaction_done(s);
        return;
    }
    if (rcpt >= 0)
        smtp_write_rcpt(s, (unsigned)rcpt);
    else
        conn_puts(&s->c, "DATA\r\n");
    s->t_sent = now;
    smtp_await(s, next);
    smtp_send_now(s);
}

/* 1 if the reply is the one wanted; otherwise it is counted and the session QUITs. */
static int want(struct smtp_session *s, const struct smtp_reply *r, int code)
{
    if (r->code == code)
        return 1;
    smtp_fail_reply(s, s->state, r);
    s->refused = 1;
    smtp_send_quit(s);
    return 0;
}

/* A reply within the MAIL/RCPT/DATA group (s->state says which). */
static void on_group_reply(struct smtp_session *s, const struct smtp_reply *r, uint64_t now)
{
    enum sm st = s->state;
    switch (st) {
    case SM_MAIL:
        if (r->code != 250) {
            smtp_fail_reply(s, st, r);
            s->group_failed = 1;
            smtp_transaction_failed(s, r->code, (s->nrcpt < 64 ? (1ull << s->nrcpt) : 0) - 1);
        }
        lockstep_next(s, now, 0, SM_RCPT);
        return;
    case SM_RCPT: {
        unsigned i = s->rcpt_i++;
        if (r->code == 250 || r->code == 251) {
            s->rcpt_ok |= 1ull << i;
        } else if (!s->group_failed) {   /* after a failed MAIL, RCPT failures are echoes */
            smtp_fail_reply(s, st, r);
            if (retrying(s) && r->code / 100 == 4)
                s->rcpt_defer |= 1ull << i;
            else
                s->env->st->c.bounced += r->code / 100 == 5;
        }
        if (s->rcpt_i < s->nrcpt) {
            lockstep_next(s, now, (int)s->rcpt_i, SM_RCPT);
            return;
        }
        if (!s->rcpt_ok && !s->group_failed) {
            s->group_failed = 1;
            if (s->rcpt_defer)
                smtp_defer_mask(s, s->rcpt_defer, 1);
            else
                smtp_refund(s);
            s->claimed = 0;
        } else if (s->rcpt_defer && !s->group_failed) {
            smtp_defer_mask(s, s->rcpt_defer, 0);   /* the rest of the message goes on now */
        }
        s->rcpt_defer = 0;
        lockstep_next(s, now, -1, SM_DATA);
        return;
    }
    case SM_DATA:
        if (r->code == 354 && s->group_failed) {
            /* A server that says 354 with no valid recipient still wants an end. */
            conn_puts(&s->c, ".\r\n");
            s->drain_data = 1;
            smtp_await(s, SM_EOD);
            smtp_send_now(s);
            return;
        }
        if (r->code != 354) {
            if (!s->group_failed) {
                smtp_fail_reply(s, st, r);
                s->group_failed = 1;
                /* bounced counts recipients refused: those RCPT had accepted */
                smtp_transaction_failed(s, r->code, s->rcpt_ok);
            }
            smtp_transaction_done(s);
            return;
        }
        smtp_write_body(s);
        return;
    default:
        return;
    }
}

/* A reply to the end of data (or to the empty body after a failed group); then what
 * rides behind it, a pause (smtp.think) or the next transaction. */
static void on_eod(struct smtp_session *s, const struct smtp_reply *r, uint64_t now)
{
    if (s->drain_data) {
        smtp_transaction_done(s);
        return;
    }
    if (!smtp_eod_reply(s, r, now))
        return;
    if (s->ahead == AHEAD_MAIL) {
        s->ahead = AHEAD_NONE;
        smtp_await(s, SM_MAIL);       /* its group is already on the wire */
    } else if (s->ahead == AHEAD_QUIT) {
        s->ahead = AHEAD_NONE;
        smtp_await(s, SM_QUIT);
    } else if (cfg_of(s)->think) {
        smtp_wait_until(s, now + cfg_of(s)->think);
    } else {
        smtp_next_transaction(s);
    }
}

/* One complete reply in state s->state; last is its last line. */
static void on_reply(struct smtp_session *s, const struct smtp_reply *r, const char *last, size_t len)
{
    struct session_env *env = s->env;
    uint64_t now = mono_ns();
    enum sm st = s->state;
    if (sm_lat[st] != LAT_COUNT && st != SM_EOD)
        stats_lat(env->st, sm_lat[st], now - s->t_sent);

    if (r->code == 421 && st != SM_QUIT) {
        /* The server is closing the channel: whatever was in flight is gone. */
        smtp_fail_reply(s, st, r);
        close_and_reconnect(s, 1);
        return;
    }
    switch (st) {
    case SM_BANNER:
        if (want(s, r, 220))
            send_ehlo(s);
        return;
    case SM_EHLO:
        if (!want(s, r, 250))
            return;
        if (cfg_of(s)->smtp_tls == TLSM_UPGRADE && !tls_active(&s->c))
            smtp_command(s, SM_STARTTLS, "STARTTLS\r\n");
        else if (cfg_of(s)->smtp_auth != SMTP_AUTH_NONE && !s->authed)
            start_auth(s);
        else
            ready_to_send(s);
        return;
    case SM_STARTTLS:
        if (want(s, r, 220))
            start_tls(s, SM_STARTTLS);
        return;
    case SM_AUTH:
        on_auth_reply(s, r, last, len);
        return;
    case SM_MAIL:
    case SM_RCPT:
    case SM_DATA:
        on_group_reply(s, r, now);
        return;
    case SM_EOD:
        on_eod(s, r, now);
        return;
    case SM_RSET:
        if (r->code != 250)
            smtp_fail_reply(s, st, r);
        smtp_next_transaction(s);
        return;
    case SM_QUIT:
        if (r->code != 221)
            smtp_fail_reply(s, st, r);
        close_and_reconnect(s, s->refused);
        return;
    default:
        return;
    }
}

static void on_data(struct smtp_session *s)
{
    char *line, why[64];
    size_t len;
    int r;
    while (conn_is_open(&s->c) && (r = conn_line_why(&s->c, &line, &len, why, sizeof why)) != 0) {
        if (r < 0) {
            protocol_error(s, why, strlen(why));
            return;
        }
        /* nothing was asked while idle or waiting for the next message to be due */
        /* nor while a body is still going out: an early reply answers nothing */
        int done = s->state == SM_IDLE || s->state == SM_WAIT || s->state == SM_BODY
                       ? -1 : smtp_reply_feed(&s->reply, line, len);
        if (done < 0) {
            protocol_error(s, line, len);
            return;
        }
        if (s->state == SM_EHLO && s->reply.lines > 1) {
            s->ext |= ehlo_keywords(line + 4, len > 4 ? len - 4 : 0);
            uint64_t limit = ehlo_size(line + 4, len > 4 ? len - 4 : 0);
            if (limit)
                s->size_limit = limit;
        }
        if (done) {
            struct smtp_reply rep = s->reply;
            on_reply(s, &rep, line, len);
        }
    }
}

static void smtp_event(struct conn *c, enum conn_event ev, void *ud)
{
    struct smtp_session *s = ud;
    switch (ev) {
    case CONN_UP:
        stats_lat(s->env->st, LAT_SMTP_CONNECT, mono_ns() - s->t_sent);
        s->t_sent = mono_ns();
        s->env->st->c.smtp_sessions++;
        if (cfg_of(s)->smtp_tls == TLSM_IMPLICIT) {
            start_tls(s, SM_TLS);
            return;
        }
        smtp_await(s, SM_BANNER);
        return;
    case CONN_TLS_UP:
        tls_done(s);
        return;
    case CONN_DATA:
        on_data(s);
        return;
    case CONN_TIMEOUT:
        count_timeout(s->env, "smtp", sm_stage[s->state], &s->c, cfg_of(s)->smtp_timeout);
        close_and_reconnect(s, 1);
        return;
    case CONN_CLOSED:
        if (s->state == SM_QUIT) {   /* closed instead of 221: still a finished session */
            count_conn_error(s->env, "smtp", "quit", &s->c);   /* _closed, or _reset */
            close_and_reconnect(s, s->refused);
            return;
        }
        fail_conn(s);
        return;
    }
}

static void start_connect(struct smtp_session *s)
{
    struct session_env *env = s->env;
    struct run *r = env->run;
    if (!may_send(s))
        return;
    if (pacer_on(&env->conn_pacer)) {
        uint64_t due = pacer_due(&env->conn_pacer);
        if (due > mono_ns()) {
            set_state(s, SM_IDLE);
            timer_arm(env->loop, &s->backoff, due);
            return;
        }
        pacer_take(&env->conn_pacer);
    }
    const struct target *t = &r->smtp[env->rr++ % r->nsmtp];
    const struct target *b = next_bind(env, r->smtp_bind, r->nsmtp_bind);
    s->nentries = s->eod_i = 0;
    s->lmtp = cfg_of(s)->smtp_protocol == PROTO_LMTP;
    s->target = t;
    s->authed = 0;
    s->refused = 0;
    s->awaits_arrival = 0;
    s->t_sent = mono_ns();
    set_state(s, SM_CONNECT);
    if (env->dial(env, &s->c, t, b) < 0) {
        count_conn_error(env, "smtp", "connect", &s->c);
        s->fails++;
        reconnect_later(s);
        return;
    }
    conn_deadline(&s->c, cfg_of(s)->smtp_timeout);
}

static void smtp_init(void *arg, struct session_env *env, unsigned id)
{
    struct smtp_session *s = arg;
    s->env = env;
    conn_init(&s->c, env->loop, smtp_event, s);
    s->backoff.fn = backoff_fired;
    rng_seed(&s->rng, env->run->seed ^ (0x5e4d000000000000ull + id));
}

static void smtp_start(void *s)
{
    start_connect(s);
}

static void smtp_phase(void *arg, int phase)
{
    struct smtp_session *s = arg;
    struct loop *l = s->env->loop;
    if (phase == PH_STOP) {
        timer_cancel(l, &s->backoff);
        /* A message whose end of data is out waits for its verdict, so the
         * ledger knows whether it was accepted; then the session QUITs. */
        if ((s->state == SM_EOD || s->state == SM_QUIT) && conn_is_open(&s->c))
            return;
        count_unanswered(s->env, "smtp", sm_stage[s->state], &s->c, cfg_of(s)->smtp_timeout);
        smtp_abandon_transaction(s);
        conn_close(&s->c);
        set_state(s, SM_IDLE);
    } else if (phase != PH_SEND) {
        /* Senders finish the transaction in flight, then QUIT (claim_message
         * says no from now on); waiting ones QUIT now; idle ones stay idle. */
        if (s->state == SM_WAIT) {
            timer_arm(l, &s->backoff, 0);
        } else {
            timer_cancel(l, &s->backoff);
            if (s->state == SM_IDLE && may_send(s))  /* deferred messages still to send */
                timer_arm(l, &s->backoff, retryq_next_due(&s->env->retry));
        }
    }
}

static int smtp_is_open(const void *s)
{
    return conn_is_open(&((const struct smtp_session *)s)->c);
}

static void smtp_free(void *arg)
{
    struct smtp_session *s = arg;
    conn_close(&s->c);
    buf_free(&s->c.in);
    buf_free(&s->c.out);
}

const struct session_ops smtp_ops = {
    .name = "smtp", .size = sizeof(struct smtp_session), .init = smtp_init, .start = smtp_start,
    .phase = smtp_phase, .is_open = smtp_is_open, .free = smtp_free,
};
