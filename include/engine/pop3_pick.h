/* pop3_pick: what the two halves of the POP3 client share: the session and its
 * states, the session's rescheduling (pop3.c) and the choice of the mailbox it
 * visits (pop3_pick.c, over engine/reader_pick.h, the IMAP readers' too). Internal to the POP3 client: other code uses
 * engine/pop3.h. */
#ifndef MS_ENGINE_POP3_PICK_H
#define MS_ENGINE_POP3_PICK_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "engine/msg.h"
#include "engine/reader_pick.h"
#include "engine/session.h"
#include "lib/conn.h"

enum ps {
    PS_IDLE, PS_CONNECT, PS_BANNER, PS_USER, PS_PASS, PS_STAT, PS_LIST, PS_LIST_BODY,
    PS_RETR, PS_RETR_BODY, PS_DELE, PS_QUIT, PS_TLS, PS_STLS, PS_APOP, PS_AUTH,
    PS_UIDL, PS_UIDL_BODY,           /* the listing, by UIDL when the mailbox holds known foreign mail */
    PS_UIDL1,                        /* "UIDL n": the UID of a foreign message just found */
    PS_TOP, PS_TOP_BODY,             /* "TOP n k": the fill's verification (headers), a preview */
    PS_EXPIRE,                       /* pop3.leave: DELE of a message kept keep_polls checks */
};

struct listed {
    unsigned id;                     /* message number */
    uint64_t uid;                    /* foreign_key() of its UIDL; 0 when listed by LIST */
};

/* A message found ours: its entry by seq, not by pointer, for the session outlives
 * a turn of the loop and the ledger may compact the entry's chunk meanwhile. */
struct got {
    uint64_t seq;                    /* the entry's own seq */
    unsigned rcpt, ours;             /* its index among the recipients; 0 = none */
    uint64_t t;                      /* retrieved, monotonic ns */
    uint64_t uid;                    /* foreign_key() of its UIDL, 0 = not listed by UIDL */
};

struct pop3_session {
    struct conn c;
    struct session_env *env;
    struct timer backoff;
    enum ps state;
    /* the mailbox visited (user, sweep, pass), pop3.exclusive's hold, the sweep's
     * claim, the empty back-off, and the session's random numbers */
    struct reader_pick pick;
    int listed;                      /* LIST ended, or STAT said 0 */
    int partial;                     /* a listed message was not retrieved */
    int refused;                     /* a command was refused: the visit failed */
    int login_refused;               /* and it was the login, not for a lock: a longer backoff */
    unsigned fails;
    uint64_t t_sent;
    struct listed *ids;              /* messages to retrieve */
    size_t nids, capids, cur;
    size_t limit;
    unsigned stat_n;                 /* messages STAT counted: the listing may not hold more */
    unsigned nlisted;                /* listing lines seen */
    struct got *got;                 /* ours, retrieved and deleted (DELE acknowledged) */
    struct got dele;                 /* ours, waiting for the answer to its DELE */
    size_t ngot, capgot;
    struct msg_check chk;
    EVP_MD_CTX *md;                  /* a RETR's digest runs across many reads: one per session */
    const struct target *target;
    char banner[160];                /* for APOP's timestamp */
    uint64_t t_tls;
    /* pop3.poll_interval: this visit is a mail client's check, due at poll_due;
     * when its listing ended */
    int polling;
    uint64_t poll_due, t_list;
    int previewed;                   /* pop3.preview: the current message's TOP is done */
    /* pop3.leave: messages kept keep_polls checks, to delete; those deleted */
    struct listed *exp;
    size_t nexp, capexp, curexp;
    uint64_t *gone;
    size_t ngone, capgone;
};

/* The state changes here alone, so its name is always known. */
static inline void set_state(struct pop3_session *s, enum ps st)
{
    s->state = st;
}

static inline const struct config *cfg_of(const struct pop3_session *s)
{
    return s->env->run->cfg;
}

/* pop3.c: the next session at when_ns, or ms from now (none once stopping). */
void pop3_again_at(struct pop3_session *s, uint64_t when_ns);
void pop3_again_in(struct pop3_session *s, uint64_t ms);

/* pop3_pick.c */
/* The mail client's next check, one interval after this one was due. */
void pop3_requeue_poll(struct pop3_session *s);
/* The mailbox of the next session into s->pick (reader_pick.h): 1, or 0 when none
 * (s->pick.hold_next: the first held-back mailbox's time). The fill's readers only
 * verify, in the sweep. */
int pop3_pick_user(struct pop3_session *s);
/* pop3.poll_interval: the next due check (1), or 0 with the session rescheduled. */
int pop3_poll_pick(struct pop3_session *s);

#endif
