/* smtp_txn: what the two halves of the SMTP client share: the session and its
 * states, the session's replies and commands (smtp.c: connection, greeting, TLS,
 * AUTH, the reply switch) and the transaction (smtp_txn.c: the message, its
 * recipients, its body, its end of data, retries). Internal to the SMTP client:
 * other code uses engine/smtp.h. */
#ifndef MS_ENGINE_SMTP_TXN_H
#define MS_ENGINE_SMTP_TXN_H

#include <stdint.h>

#include "engine/reply.h"
#include "engine/sasl.h"
#include "engine/session.h"
#include "lib/conn.h"

enum sm {
    SM_IDLE, SM_CONNECT, SM_BANNER, SM_EHLO, SM_MAIL, SM_RCPT, SM_DATA, SM_EOD, SM_RSET, SM_QUIT,
    SM_WAIT,                         /* connected, waiting for the next message to be due */
    SM_TLS, SM_STARTTLS, SM_AUTH,
    SM_BODY,                         /* a large body going out a piece at a time (the size ladder) */
};

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

/* The state changes here alone, so its name is always known. */
static inline void set_state(struct smtp_session *s, enum sm st)
{
    s->state = st;
}

static inline const struct config *cfg_of(const struct smtp_session *s)
{
    return s->env->run->cfg;
}

static inline int retrying(const struct smtp_session *s)
{
    return cfg_of(s)->smtp_retry;
}

/* smtp.c: the session's side */
/* Idles an open connection until `when`; the server may still close it. */
void smtp_wait_until(struct smtp_session *s, uint64_t when);
/* Waits for a reply in state st, within smtp.timeout. */
void smtp_await(struct smtp_session *s, enum sm st);
/* Sends what was written, unless input came unasked (then the session ends). */
void smtp_send_now(struct smtp_session *s);
/* Writes one command and waits for its reply in state st. */
void smtp_command(struct smtp_session *s, enum sm st, const char *line);
void smtp_send_quit(struct smtp_session *s);
/* A reply counted as an error of its stage: smtp_STAGE_CODE. */
void smtp_fail_reply(struct smtp_session *s, enum sm stage, const struct smtp_reply *r);

/* smtp_txn.c: the transaction's side */
void smtp_refund(struct smtp_session *s);
/* The recipients of rcpt[] whose bit is set in mask, deferred (token: a unit of the
 * messages = N budget goes with them). */
void smtp_defer_mask(struct smtp_session *s, uint64_t mask, int token);
/* A failed reply within MAIL/RCPT/DATA for the recipients of mask. */
void smtp_transaction_failed(struct smtp_session *s, int code, uint64_t mask);
/* A transaction that never got its end-of-data reply. */
void smtp_abandon_transaction(struct smtp_session *s);
/* The next message of this connection (its MAIL, or the whole pipelined group),
 * or a wait for its arrival, or QUIT. */
void smtp_next_transaction(struct smtp_session *s);
void smtp_write_rcpt(struct smtp_session *s, unsigned i);
/* After DATA's 354: the message's entries in the ledger, its body, its final dot. */
void smtp_write_body(struct smtp_session *s);
/* RSET after a failed group, else the next transaction. */
void smtp_transaction_done(struct smtp_session *s);
/* A reply to the end of data: 1 when the message is settled, 0 if more are due. */
int smtp_eod_reply(struct smtp_session *s, const struct smtp_reply *r, uint64_t now);

#endif
