/* smtp_txn: one transaction of a sender session (include/engine/smtp_txn.h): the
 * message claimed (a due retry first, the ladder's or the fill's next, a paced
 * arrival, within the messages = N budget), its recipients, its MAIL (or the whole
 * pipelined group), its body (streamed when large), the end-of-data reply into the
 * ledger, and what smtp.retry defers or gives up. */
#include "engine/smtp_txn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/printable.h"
#include "lib/rng.h"

/* Bodies of this size and more are written a piece at a time as the socket takes
 * them, never held whole: at most STREAM_WINDOW bytes wait in the output. */
#define STREAM_MIN (256u * 1024)
#define STREAM_WINDOW (256u * 1024)
#define STREAM_PIECE (64u * 1024)

void smtp_refund(struct smtp_session *s)
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
void smtp_defer_mask(struct smtp_session *s, uint64_t mask, int token)
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
void smtp_transaction_failed(struct smtp_session *s, int code, uint64_t mask)
{
    if (retrying(s) && code / 100 == 4) {
        smtp_defer_mask(s, mask, 1);
    } else {
        if (code / 100 == 5)
            s->env->st->c.bounced += (uint64_t)__builtin_popcountll(mask);
        smtp_refund(s);
    }
    s->claimed = 0;
}

/* A transaction that never got its end-of-data reply: the server may or may not
 * have the message; the ledger will tell if it turns up. */
void smtp_abandon_transaction(struct smtp_session *s)
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
        smtp_defer_mask(s, ~0ull, 1);
    s->claimed = 0;
    s->n_eod_defer = 0;
    while (s->tokens > 0)
        smtp_refund(s);
    s->nentries = s->eod_i = 0;
    s->ahead = AHEAD_NONE;
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

void smtp_write_rcpt(struct smtp_session *s, unsigned i)
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
            smtp_write_rcpt(s, i);
        conn_puts(&s->c, "DATA\r\n");
    }
    return 1;
}

void smtp_next_transaction(struct smtp_session *s)
{
    int q = queue_transaction(s);
    if (q < 0) {
        smtp_wait_until(s, s->due);
        s->awaits_arrival = 1;
        return;
    }
    if (q == 0) {
        smtp_send_quit(s);
        return;
    }
    s->t_msg = s->t_next;
    s->t_sent = mono_ns();
    smtp_await(s, SM_MAIL);
    smtp_send_now(s);
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
            smtp_await(s, SM_EOD);
            smtp_send_now(s);
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

void smtp_write_body(struct smtp_session *s)
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
    smtp_await(s, SM_EOD);
    smtp_send_now(s);
}

void smtp_transaction_done(struct smtp_session *s)
{
    if (s->group_failed) {
        smtp_command(s, SM_RSET, "RSET\r\n");
        return;
    }
    smtp_next_transaction(s);
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
int smtp_eod_reply(struct smtp_session *s, const struct smtp_reply *r, uint64_t now)
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
        smtp_fail_reply(s, SM_EOD, r);
        if (env->run->ladder)
            ladder_refused(&env->run->ladder_seen[s->rung], r);
    }
    s->eod_i = upto;
    if (s->eod_i < s->nentries) {
        smtp_await(s, SM_EOD);
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
        smtp_refund(s);
    }
    s->accepted_any = 0;
    s->nentries = s->eod_i = 0;
    return 1;
}
