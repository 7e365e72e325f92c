/* smtp: the sender sessions — a non-blocking SMTP client state machine. Each
 * connection: banner, EHLO, k messages (MAIL, RCPT, DATA, body), QUIT, reconnect.
 * With PIPELINING, MAIL+RCPT+DATA go out in one write and their replies are taken
 * in order; in lockstep each command waits for the previous reply. The state
 * changes in exactly one place, set_state(), so its name is always known. */
#include "engine/smtp.h"

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

enum sm {
    SM_IDLE, SM_CONNECT, SM_BANNER, SM_EHLO, SM_MAIL, SM_RCPT, SM_DATA, SM_EOD, SM_RSET, SM_QUIT,
    SM_WAIT,                         /* connected, waiting for the next message to be due */
    SM_TLS, SM_STARTTLS, SM_AUTH,
    SM_BODY,                         /* a large body going out a piece at a time (the size ladder) */
};
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

/* Bodies of this size and more are written a piece at a time as the socket takes
 * them, never held whole: at most STREAM_WINDOW bytes wait in the output. */
#define STREAM_MIN (256u * 1024)
#define STREAM_WINDOW (256u * 1024)
#define STREAM_PIECE (64u * 1024)

struct smtp_session {
    struct conn c;
    struct session_env *env;
    struct timer backoff;
    struct rng rng;
    enum sm state;
    uint32_t ext;
    int pipelined;                   /* this connection pipelines its transactions */
    int group_failed;                /* a reply in the current transaction failed */
    int drain_data;                  /* DATA said 354 after a failed RCPT: send an empty body */
    int tokens;                      /* units of the messages = N budget held */
    enum { AHEAD_NONE, AHEAD_MAIL, AHEAD_QUIT } ahead;  /* sent behind the body */
    unsigned msgs_left, fails;
    int refused;                     /* the server turned this session away (banner, EHLO, AUTH) */
    int awaits_arrival;              /* idling for s->due, the next paced arrival */
    struct smtp_reply reply;
    uint64_t t_sent;                 /* when the awaited command(s) went out */
    uint64_t t_msg, t_next;          /* start of this message and of the next (paced: intended) */
    uint64_t due;                    /* a paced message or connection not yet due */
    /* this transaction's recipients, and the ledger entries of those accepted */
    uint32_t rcpt[MAX_RCPTS];
    unsigned nrcpt, rcpt_i, nentries, eod_i;
    uint64_t rcpt_ok;                /* bit i: RCPT i was accepted */
    uint64_t rcpt_defer;             /* bit i: RCPT i got a 4xx (smtp.retry) */
    struct ledger_entry *entries[MAX_RCPTS];
    uint64_t seq0;                   /* the ledger id of entries[0]; the others follow it */
    uint64_t size_limit;             /* the SIZE this connection's EHLO advertised (0: none) */
    int rung;                        /* the size ladder's rung of the message in hand */
    uint64_t plan_size;              /* and its whole size */
    struct msg_stream stream;        /* a body going out a piece at a time (SM_BODY) */
    /* smtp.retry: the claimed transaction of rcpt[] (not yet a body on the wire), a
     * message taken from the retry queue, its attempts before this one and when the
     * first began; the same for the message whose end of data is awaited, and its
     * recipients deferred there */
    int claimed, rcpts_given;        /* rcpts_given: rcpt[] chosen at the claim (a retry, the fill) */
    uint32_t tries, eod_tries;
    uint64_t t_first, eod_first;
    uint32_t eod_defer[MAX_RCPTS];
    unsigned n_eod_defer;
    int lmtp, accepted_any;
    const struct target *target;
    int authed;
    struct auth_exchange auth;
    uint32_t auth_user;
    uint64_t t_exchange;             /* start of a TLS handshake or an AUTH exchange */
};

static void smtp_event(struct conn *c, enum conn_event ev, void *ud);
static void start_connect(struct smtp_session *s);
static void next_transaction(struct smtp_session *s);
static void send_now(struct smtp_session *s);

static void set_state(struct smtp_session *s, enum sm st)
{
    s->state = st;
}

static const struct config *cfg_of(const struct smtp_session *s)
{
    return s->env->run->cfg;
}

static int retrying(const struct smtp_session *s)
{
    return cfg_of(s)->smtp_retry;
}

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
        next_transaction(s);
    else
        start_connect(s);
}

/* Idles an open connection until `when`; the server may still close it. */
static void wait_until(struct smtp_session *s, uint64_t when)
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

static void refund(struct smtp_session *s)
{
    if (s->tokens > 0) {
        s->tokens--;
        atomic_fetch_add_explicit(&s->env->run->send_budget, 1, memory_order_relaxed);
    }
}

/* n recipients of a message that has had `tries` attempts since `first` go to the
 * retry queue; token: a unit of the messages = N budget goes with them (the
 * message is still to be sent), given back if they are given up. */
static void defer_users(struct smtp_session *s, const uint32_t *users, unsigned n, uint32_t tries, uint64_t first,
                        int token)
{
    struct session_env *env = s->env;
    const struct config *cfg = cfg_of(s);
    uint64_t now = mono_ns();
    if (token && s->tokens > 0)
        s->tokens--;
    else
        token = 0;
    if (!n) {
        if (token)
            atomic_fetch_add_explicit(&env->run->send_budget, 1, memory_order_relaxed);
        return;
    }
    env->st->c.deferrals += n;
    struct retry_item it = {
        .due = now + retry_backoff(cfg->retry_min, cfg->retry_max, tries), .first = first, .tries = tries,
        .token = (uint8_t)token, .n = (uint8_t)n,
    };
    memcpy(it.users, users, n * sizeof *users);
    int kept = now - first < cfg->retry_lifetime;
    if (!kept)
        env->st->c.retry_expired += n;
    else if (retryq_push(&env->retry, &it) < 0) {
        env->st->c.retry_dropped += n;
        kept = 0;
    }
    if (kept)
        atomic_fetch_add_explicit(&env->run->retry_pending, 1, memory_order_relaxed);
    else if (token)
        atomic_fetch_add_explicit(&env->run->send_budget, 1, memory_order_relaxed);
}

/* The recipients of rcpt[] whose bit is set in mask, deferred. */
static void defer_mask(struct smtp_session *s, uint64_t mask, int token)
{
    uint32_t u[MAX_RCPTS];
    unsigned n = 0;
    for (unsigned i = 0; i < s->nrcpt; i++)
        if (mask >> i & 1)
            u[n++] = s->rcpt[i];
    defer_users(s, u, n, s->tries + 1, s->t_first, token);
}

/* A failed reply within MAIL/RCPT/DATA for the whole transaction (mask: its
 * recipients concerned): a 4xx defers them when retrying; otherwise the message
 * is not sent and its budget unit returns. */
static void transaction_failed(struct smtp_session *s, int code, uint64_t mask)
{
    if (retrying(s) && code / 100 == 4) {
        defer_mask(s, mask, 1);
    } else {
        if (code / 100 == 5)
            s->env->st->c.bounced += (uint64_t)__builtin_popcountll(mask);
        refund(s);
    }
    s->claimed = 0;
}

/* A transaction that never got its end-of-data reply: the server may or may not
 * have the message; the ledger will tell if it turns up. */
static void abandon_transaction(struct smtp_session *s)
{
    s->c.on_drain = NULL;
    if ((s->state == SM_EOD || s->state == SM_BODY) && !s->drain_data) {
        if (retrying(s)) {
            /* as an MTA does: not answered is not delivered; it goes out again */
            uint32_t u[MAX_RCPTS];
            unsigned n = 0;
            for (unsigned i = s->eod_i; i < s->nentries; i++) {
                ledger_defer(s->entries[i]);
                u[n++] = s->entries[i]->user;
            }
            memcpy(s->eod_defer + s->n_eod_defer, u, n * sizeof *u);
            defer_users(s, s->eod_defer, s->n_eod_defer + n, s->eod_tries + 1, s->eod_first, !s->accepted_any);
        } else {
            for (unsigned i = s->eod_i; i < s->nentries; i++)
                ledger_reject(s->entries[i]);
        }
    }
    if (retrying(s) && s->claimed && !s->group_failed)
        defer_mask(s, ~0ull, 1);
    s->claimed = 0;
    s->n_eod_defer = 0;
    while (s->tokens > 0)
        refund(s);
    s->nentries = s->eod_i = 0;
    s->ahead = AHEAD_NONE;
}

static void fail_conn(struct smtp_session *s)
{
    count_conn_error(s->env, "smtp", sm_stage[s->state], &s->c);
    abandon_transaction(s);
    s->fails++;
    reconnect_later(s);
}

static void fail_reply(struct smtp_session *s, enum sm stage, const struct smtp_reply *r)
{
    char name[ERR_NAME_LEN];
    snprintf(name, sizeof name, "smtp_%s_%d", sm_stage[stage], r->code);
    stats_error_text(s->env->st, name, r->text, r->len);
}

static void close_and_reconnect(struct smtp_session *s, int failed)
{
    abandon_transaction(s);
    conn_close(&s->c);
    s->fails = failed ? s->fails + 1 : 0;
    reconnect_later(s);
}

static void await(struct smtp_session *s, enum sm st)
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
static void send_now(struct smtp_session *s)
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
static void command(struct smtp_session *s, enum sm st, const char *line)
{
    conn_puts(&s->c, line);
    s->t_sent = mono_ns();
    await(s, st);
    send_now(s);
}

static void send_quit(struct smtp_session *s)
{
    command(s, SM_QUIT, "QUIT\r\n");
}

/* 1: send a message now; 0: nothing more to send; -1: paced, not due until s->due. */
static int claim_message(struct smtp_session *s)
{
    struct run *r = s->env->run;
    struct pacer *p = &s->env->msg_pacer;
    uint64_t now = mono_ns();
    s->rcpts_given = 0;
    if (retrying(s)) {
        /* a deferred message whose back-off ended goes first, outside the rates and
         * with the budget unit it kept */
        struct retry_item it;
        if (retryq_pop_due(&s->env->retry, now, &it)) {
            atomic_fetch_sub_explicit(&r->retry_pending, 1, memory_order_relaxed);
            memcpy(s->rcpt, it.users, it.n * sizeof *it.users);
            s->nrcpt = it.n;
            s->tries = it.tries;
            s->t_first = it.first;
            s->tokens += it.token;
            s->rcpts_given = 1;
            s->t_next = now;
            return 1;
        }
    }
    if (atomic_load_explicit(&r->phase, memory_order_relaxed) != PH_SEND)
        return 0;
    if (r->ladder) {
        /* the size ladder's next message: its rung from the cursor */
        uint64_t rungs[LADDER_RUNGS_MAX], per = cfg_of(s)->ladder_count;
        unsigned n = ladder_rungs(s->size_limit, cfg_of(s)->ladder_max, rungs);
        uint64_t k = atomic_fetch_add_explicit(&r->ladder_next, 1, memory_order_relaxed);
        if (k >= n * per)
            return 0;
        s->rung = (int)(k / per);
        s->plan_size = rungs[s->rung];
        s->tries = 0;
        s->t_first = s->t_next = now;
        return 1;
    }
    if (r->fill_mode) {
        /* the fill: the plan's next message, one recipient, as fast as it goes */
        uint64_t k = atomic_fetch_add_explicit(&r->fill_next, 1, memory_order_relaxed);
        if (k >= r->fill_total)
            return 0;
        s->rcpt[0] = r->fill_plan[k];
        s->nrcpt = 1;
        s->rcpts_given = 1;
        s->tries = 0;
        s->t_first = s->t_next = now;
        return 1;
    }
    if (pacer_on(p) && (s->due = pacer_due(p)) > now)
        return -1;
    if (cfg_of(s)->messages) {
        if (atomic_fetch_sub_explicit(&r->send_budget, 1, memory_order_relaxed) <= 0) {
            atomic_fetch_add_explicit(&r->send_budget, 1, memory_order_relaxed);
            return 0;
        }
        s->tokens++;
    }
    /* With a rate, a message starts at its intended time however late we are, so
     * a server that stalls the senders shows in smtp.message (wrk2's correction).
     * Starting late is the tester's doing, though, and counted as such: a session
     * that waited for this arrival and woke late means a late engine, any other
     * means no sender was free when it came due. */
    if (pacer_on(p)) {
        pacer_take(p);
        s->env->st->c.arrivals++;
        if (now - s->due > cfg_of(s)->late_after) {
            if (s->awaits_arrival)
                s->env->st->c.late_engine++;
            else
                s->env->st->c.late_busy++;
        }
        s->awaits_arrival = 0;
        s->t_next = s->due;
    } else {
        s->t_next = now;
    }
    s->tries = 0;
    s->t_first = s->t_next;
    return 1;
}

static void write_cmd(struct smtp_session *s, const char *verb, const char *addr)
{
    size_t v = strlen(verb), a = strlen(addr);
    char *p = conn_reserve(&s->c, v + a + 3);
    memcpy(p, verb, v);
    memcpy(p + v, addr, a);
    memcpy(p + v + a, ">\r\n", 3);
    conn_commit(&s->c, v + a + 3);
}

static void write_rcpt(struct smtp_session *s, unsigned i)
{
    write_cmd(s, "RCPT TO:<", s->env->run->users.v[s->rcpt[i]].addr);
}

/* k distinct random users: a server may fold two copies for one mailbox into one,
 * which would look like a loss. */
static void pick_rcpts(struct smtp_session *s)
{
    const struct config *cfg = cfg_of(s);
    size_t n = s->env->run->users.n;
    const struct run *r = s->env->run;
    uint64_t k;
    if (r->nrcpt_w) {                /* smtp.rcpts_weights */
        double u = rng_unit(&s->rng);
        k = 1;
        while (k < r->nrcpt_w && u >= r->rcpt_cdf[k - 1])
            k++;
    } else {
        k = rng_range(&s->rng, cfg->rcpts.lo ? cfg->rcpts.lo : 1, cfg->rcpts.hi ? cfg->rcpts.hi : 1);
    }
    if (k > MAX_RCPTS)
        k = MAX_RCPTS;
    if (k > n)
        k = n;
    s->nrcpt = 0;
    while (s->nrcpt < k) {
        uint32_t u = (uint32_t)rng_range(&s->rng, 0, n - 1);
        unsigned j = 0;
        while (j < s->nrcpt && s->rcpt[j] != u)
            j++;
        if (j == s->nrcpt)
            s->rcpt[s->nrcpt++] = u;
    }
}

/* Claims the next message of this connection and writes its MAIL (pipelined: its
 * whole MAIL, RCPT, DATA group). As claim_message() otherwise. */
static int queue_transaction(struct smtp_session *s)
{
    if (!s->msgs_left)
        return 0;
    int c = claim_message(s);
    if (c <= 0)
        return c;
    s->msgs_left--;
    s->group_failed = 0;
    s->drain_data = 0;
    if (!s->rcpts_given)
        pick_rcpts(s);
    s->claimed = 1;
    s->rcpt_i = 0;
    s->rcpt_ok = s->rcpt_defer = 0;
    write_cmd(s, "MAIL FROM:<", cfg_of(s)->mail_from);
    if (s->pipelined) {
        for (unsigned i = 0; i < s->nrcpt; i++)
            write_rcpt(s, i);
        conn_puts(&s->c, "DATA\r\n");
    }
    return 1;
}

static void next_transaction(struct smtp_session *s)
{
    int q = queue_transaction(s);
    if (q < 0) {
        wait_until(s, s->due);
        s->awaits_arrival = 1;
        return;
    }
    if (q == 0) {
        send_quit(s);
        return;
    }
    s->t_msg = s->t_next;
    s->t_sent = mono_ns();
    await(s, SM_MAIL);
    send_now(s);
}

/* The size ladder: the body that makes the message its rung's size, headers
 * included (as SIZE counts it), the headers being those msg_write will write. */
static void ladder_body(struct smtp_session *s, struct msg_params *p, uint64_t now)
{
    struct run *r = s->env->run;
    unsigned n = 0;
    for (unsigned i = 0; i < s->nrcpt; i++)
        n += s->rcpt_ok >> i & 1;
    p->nrcpt = n;
    p->seq = ledger_seq(s->env->shard, atomic_load_explicit(&r->ledger.shards[s->env->shard].n, memory_order_relaxed));
    p->sent_unix_ms = r->t0_unix_ms + (now - r->t0) / NS_PER_MS;
    if (s->env->gen->content == MSG_RANDOM) {
        s->env->gen->own_headers = 1;    /* the headers the body will have, not the last message's */
        s->env->gen->hdr.len = 0;
    }
    uint8_t zero[MSG_DIGEST_LEN] = { 0 };
    char hdr[MAX_RCPTS * 8 + 1024];
    size_t hl = msg_wire_max(s->env->gen, p, 0) <= sizeof hdr ? msg_headers(s->env->gen, p, zero, hdr) : 0;
    p->body_size = s->plan_size > hl + 2 ? (size_t)(s->plan_size - hl) : 2;
}

/* A streamed body: pieces while the output holds less than STREAM_WINDOW, then the
 * final dot and the wait for the end-of-data reply. Called again from the loop
 * whenever the socket took what was written (body_drained). */
static void pump_body(struct smtp_session *s)
{
    for (;;) {
        while (s->stream.rem && conn_pending_out(&s->c) < STREAM_WINDOW) {
            char *o = conn_reserve(&s->c, STREAM_PIECE);
            conn_commit(&s->c, msg_stream_next(s->env->gen, &s->stream, o, STREAM_PIECE));
        }
        if (!s->stream.rem) {
            s->c.on_drain = NULL;
            conn_puts(&s->c, ".\r\n");
            await(s, SM_EOD);
            send_now(s);
            return;
        }
        conn_flush(&s->c);
        conn_deadline(&s->c, cfg_of(s)->smtp_timeout);   /* the body moves: not a timeout */
        if (!conn_is_open(&s->c) || s->c.err != CE_NONE || conn_pending_out(&s->c))
            return;
    }
}

static void body_drained(struct conn *c, void *ud)
{
    struct smtp_session *s = ud;
    (void)c;
    if (s->state == SM_BODY)
        pump_body(s);
}

static void write_body(struct smtp_session *s)
{
    struct session_env *env = s->env;
    struct run *r = env->run;
    const struct config *cfg = cfg_of(s);
    uint8_t digest[MSG_DIGEST_LEN];
    char to[MAX_RCPTS * 8 + 256];
    size_t tl = 0;
    for (unsigned i = 0; i < s->nrcpt && tl < sizeof to - 2; i++)
        if (s->rcpt_ok >> i & 1)
            tl += (size_t)snprintf(to + tl, sizeof to - tl, "%s%s", tl ? ">, <" : "", r->users.v[s->rcpt[i]].addr);
    struct msg_params p = {
        .run_id = r->run_id, .from = cfg->mail_from, .to = to,
        .body_size = r->ladder ? 0 : (size_t)size_draw(&r->sizes, &s->rng),
        .body_seed = rng_next(&s->rng),
    };
    uint64_t now = mono_ns();
    if (r->ladder)
        ladder_body(s, &p, now);
    int streamed = p.body_size >= STREAM_MIN && env->gen->content == MSG_RANDOM;
    size_t blen = p.body_size == 1 ? 2 : p.body_size;
    if (streamed)
        msg_stream_digest(env->gen, &p, digest);
    else
        blen = msg_body(env->gen, &p, digest);
    uint64_t d8;
    memcpy(&d8, digest, sizeof d8);
    /* one entry per accepted recipient, consecutive in this worker's shard, so the
     * message's id (the first) and its count find them all */
    s->nentries = s->eod_i = 0;
    for (unsigned i = 0; i < s->nrcpt; i++) {
        if (!(s->rcpt_ok >> i & 1))
            continue;
        uint64_t idx = ledger_add(&r->ledger, env->shard, s->rcpt[i], (uint32_t)blen, d8, s->nentries);
        if (s->tries)
            ledger_note(&r->ledger, env->shard, idx, s->tries + 1, run_ms(r, s->t_first));
        if (!s->nentries)
            p.seq = s->seq0 = ledger_seq(env->shard, idx);
        s->entries[s->nentries++] = ledger_get(&r->ledger, ledger_seq(env->shard, idx));
    }
    p.nrcpt = s->nentries;
    /* from here the message is the one awaiting its end-of-data reply */
    s->claimed = 0;
    s->eod_tries = s->tries;
    s->eod_first = s->t_first;
    s->n_eod_defer = 0;
    p.sent_unix_ms = r->t0_unix_ms + (now - r->t0) / NS_PER_MS;
    if (r->ladder)
        atomic_fetch_add_explicit(&r->ladder_seen[s->rung].tried, 1, memory_order_relaxed);
    if (streamed) {
        char *out = conn_reserve(&s->c, msg_wire_max(env->gen, &p, 0));
        conn_commit(&s->c, msg_headers(env->gen, &p, digest, out));
        msg_stream_begin(env->gen, &s->stream, &p);
        s->ahead = AHEAD_NONE;       /* nothing rides behind a body this long */
        s->t_sent = now;
        set_state(s, SM_BODY);
        conn_deadline(&s->c, cfg->smtp_timeout);
        s->c.on_drain = body_drained;
        pump_body(s);
        return;
    }
    char *out = conn_reserve(&s->c, msg_wire_max(env->gen, &p, blen));
    conn_commit(&s->c, msg_write(env->gen, &p, blen, digest, out));
    /* RFC 2920 lets message content open a group: with PIPELINING the next
     * transaction (or QUIT) rides behind the final dot, halving the round trips. */
    s->ahead = AHEAD_NONE;
    if (s->pipelined && !cfg->think) {
        int q = queue_transaction(s);
        if (q > 0) {
            s->ahead = AHEAD_MAIL;
        } else if (q == 0) {
            conn_puts(&s->c, "QUIT\r\n");
            s->ahead = AHEAD_QUIT;
        }                            /* paced and not due: decided after the reply */
    }
    s->t_sent = now;
    await(s, SM_EOD);
    send_now(s);
}

static void transaction_done(struct smtp_session *s)
{
    if (s->group_failed) {
        command(s, SM_RSET, "RSET\r\n");
        return;
    }
    next_transaction(s);
}

/* The first refusal of a rung's messages, kept printable for the ladder's table. */
static void ladder_refused(struct ladder_seen *ls, const struct smtp_reply *r)
{
    atomic_fetch_add_explicit(&ls->refused, 1, memory_order_relaxed);
    int none = 0;
    if (atomic_compare_exchange_strong_explicit(&ls->said, &none, 1, memory_order_acq_rel, memory_order_relaxed)) {
        printable(ls->reply, sizeof ls->reply, r->text, r->len);
        atomic_store_explicit(&ls->said, 2, memory_order_release);
    }
}

/* A reply to the end of data: SMTP answers once for all recipients, LMTP once per
 * accepted recipient. Returns 1 when the message is settled, 0 if more replies are
 * due. */
static int eod_reply(struct smtp_session *s, const struct smtp_reply *r, uint64_t now)
{
    struct session_env *env = s->env;
    unsigned upto = s->lmtp ? s->eod_i + 1 : s->nentries;
    char qid[SMTP_QID_MAX + 1];
    size_t qn = r->code == 250 ? smtp_queue_id(r->text, r->len, qid) : 0;
    for (unsigned i = s->eod_i; i < upto; i++) {
        if (r->code == 250) {
            ledger_set_qid(&env->run->ledger, s->seq0 + i, qid, qn);
            ledger_accept(&env->run->ledger, s->entries[i], run_ms(env->run, now));
            env->st->c.sent++;
            s->accepted_any = 1;
        } else if (retrying(s) && r->code / 100 == 4) {
            ledger_defer(s->entries[i]);
            s->eod_defer[s->n_eod_defer++] = s->entries[i]->user;
        } else {
            ledger_reject(s->entries[i]);
            env->st->c.rejected++;
            env->st->c.bounced += r->code / 100 == 5;
        }
    }
    if (r->code != 250) {
        fail_reply(s, SM_EOD, r);
        if (env->run->ladder)
            ladder_refused(&env->run->ladder_seen[s->rung], r);
    }
    s->eod_i = upto;
    if (s->eod_i < s->nentries) {
        await(s, SM_EOD);
        return 0;
    }
    stats_lat(env->st, LAT_SMTP_EOD, now - s->t_sent);
    stats_lat(env->st, LAT_SMTP_MESSAGE, now - s->t_msg);
    if (s->ahead == AHEAD_MAIL)
        s->t_msg = s->t_next;
    if (s->n_eod_defer) {
        /* the message's budget unit goes with it unless part of it was accepted */
        defer_users(s, s->eod_defer, s->n_eod_defer, s->eod_tries + 1, s->eod_first, !s->accepted_any);
        s->n_eod_defer = 0;
        if (s->accepted_any) {
            if (s->tokens > 0)
                s->tokens--;
            atomic_fetch_add_explicit(&env->run->accepted, 1, memory_order_relaxed);
        }
    } else if (s->accepted_any) {
        if (s->tokens > 0)           /* 0 when there is no messages = N budget */
            s->tokens--;
        atomic_fetch_add_explicit(&env->run->accepted, 1, memory_order_relaxed);
    } else {
        refund(s);
    }
    s->accepted_any = 0;
    s->nentries = s->eod_i = 0;
    return 1;
}

static void send_ehlo(struct smtp_session *s)
{
    conn_printf(&s->c, "%s %s\r\n", s->lmtp ? "LHLO" : "EHLO", cfg_of(s)->helo);
    s->t_sent = mono_ns();
    s->ext = 0;
    s->size_limit = 0;
    await(s, SM_EHLO);
    send_now(s);
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
        await(s, SM_BANNER);
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
    next_transaction(s);
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
    await(s, SM_AUTH);
    send_now(s);
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
        await(s, SM_AUTH);
        send_now(s);
        return;
    }
    fail_reply(s, SM_AUTH, r);
    s->refused = 1;
    send_quit(s);
}

/* After a reply within the MAIL/RCPT/DATA group: pipelined, the next command is
 * already out; in lockstep it goes now (RCPT number `rcpt`, or DATA for -1), unless
 * the transaction failed, which ends it. Then its reply is awaited in state next. */
static void lockstep_next(struct smtp_session *s, uint64_t now, int rcpt, enum sm next)
{
    if (s->pipelined) {
        await(s, next);
        return;
    }
    if (s->group_failed) {
        transaction_done(s);
        return;
    }
    if (rcpt >= 0)
        write_rcpt(s, (unsigned)rcpt);
    else
        conn_puts(&s->c, "DATA\r\n");
    s->t_sent = now;
    await(s, next);
    send_now(s);
}

/* 1 if the reply is the one wanted; otherwise it is counted and the session QUITs. */
static int want(struct smtp_session *s, const struct smtp_reply *r, int code)
{
    if (r->code == code)
        return 1;
    fail_reply(s, s->state, r);
    s->refused = 1;
    send_quit(s);
    return 0;
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
        fail_reply(s, st, r);
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
            command(s, SM_STARTTLS, "STARTTLS\r\n");
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
        if (r->code != 250) {
            fail_reply(s, st, r);
            s->group_failed = 1;
            transaction_failed(s, r->code, (s->nrcpt < 64 ? (1ull << s->nrcpt) : 0) - 1);
        }
        lockstep_next(s, now, 0, SM_RCPT);
        return;
    case SM_RCPT: {
        unsigned i = s->rcpt_i++;
        if (r->code == 250 || r->code == 251) {
            s->rcpt_ok |= 1ull << i;
        } else if (!s->group_failed) {   /* after a failed MAIL, RCPT failures are echoes */
            fail_reply(s, st, r);
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
                defer_mask(s, s->rcpt_defer, 1);
            else
                refund(s);
            s->claimed = 0;
        } else if (s->rcpt_defer && !s->group_failed) {
            defer_mask(s, s->rcpt_defer, 0);   /* the rest of the message goes on now */
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
            await(s, SM_EOD);
            send_now(s);
            return;
        }
        if (r->code != 354) {
            if (!s->group_failed) {
                fail_reply(s, st, r);
                s->group_failed = 1;
                /* bounced counts recipients refused: those RCPT had accepted */
                transaction_failed(s, r->code, s->rcpt_ok);
            }
            transaction_done(s);
            return;
        }
        write_body(s);
        return;
    case SM_EOD:
        if (s->drain_data) {
            transaction_done(s);
            return;
        }
        if (!eod_reply(s, r, now))
            return;
        if (s->ahead == AHEAD_MAIL) {
            s->ahead = AHEAD_NONE;
            await(s, SM_MAIL);       /* its group is already on the wire */
        } else if (s->ahead == AHEAD_QUIT) {
            s->ahead = AHEAD_NONE;
            await(s, SM_QUIT);
        } else if (cfg_of(s)->think) {
            wait_until(s, now + cfg_of(s)->think);
        } else {
            next_transaction(s);
        }
        return;
    case SM_RSET:
        if (r->code != 250)
            fail_reply(s, st, r);
        next_transaction(s);
        return;
    case SM_QUIT:
        if (r->code != 221)
            fail_reply(s, st, r);
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
        await(s, SM_BANNER);
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
        abandon_transaction(s);
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
