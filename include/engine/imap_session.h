/* imap_session: one IMAP reader session as its three files share it: imap.c (the
 * connection, the login, the responses and their tags), imap_sync.c (a
 * mailbox's listing, its bodies fetched and judged, deleted and expunged, the
 * reads committed) and imap_idle.c (the idle model: IDLE, the EXISTS it pushes,
 * its renewal, and push latency). Nothing outside these three includes it. */
#ifndef MS_ENGINE_IMAP_SESSION_H
#define MS_ENGINE_IMAP_SESSION_H

#include <stdint.h>

#include "engine/imap_parse.h"
#include "engine/msg.h"
#include "engine/reader_pick.h"
#include "engine/session.h"
#include "lib/conn.h"

/* The state is the stage word of the error classes (imap_STAGE_KIND). */
enum is {
    IS_IDLE, IS_CONNECT, IS_TLS, IS_BANNER, IS_CAPA, IS_STARTTLS, IS_LOGIN, IS_SELECT, IS_LIST, IS_FETCH,
    IS_STORE, IS_EXPUNGE, IS_LOGOUT,
    IS_IDLE_CMD,                     /* IDLE sent, its "+" awaited */
    IS_IDLING,                       /* in IDLE: waiting for the server's EXISTS */
    IS_DONE,                         /* DONE sent, the IDLE's tagged reply awaited */
    IS_NOOP,                         /* a renewal's NOOP: the news a server shows only when asked */
    IS_HEADERS,                      /* webmail: the newest 50's headers */
    IS_OPEN,                         /* webmail: the newest one's body */
    IS_STATES
};
extern const char *const imap_stage[IS_STATES];

/* A visit fetches at most this many messages, so the UID sets of its FETCH,
 * STORE and EXPUNGE stay within IMAP_SET_MAX bytes (ten digits and a comma each). */
#define IMAP_VISIT_MAX 500
#define IMAP_SET_MAX 6000

/* A listed message: to fetch, fetched and to delete (imap.delete = never or a
 * DURATION: to flag seen), left alone, or read and left earlier and now older
 * than imap.delete's DURATION: to delete. */
enum mstate { M_LISTED, M_DELETE, M_KEEP, M_AGED };

struct umsg {
    uint64_t uid;
    uint64_t lseq;                   /* its message number, moved down by each untagged EXPUNGE below
                                      * it (0: gone, or never given) */
    int gone;                        /* an untagged EXPUNGE named it: the server says it removed it */
    uint64_t seq;                    /* ours (M_DELETE): read once expunged; by seq, not pointer: */
    unsigned rcpt, ours;             /* the ledger may compact the entry's chunk meanwhile */
    uint64_t t;                      /* fetched, monotonic ns */
    enum mstate st;
};

/* The FETCH response being read: its items may come before or after the body. */
struct fetch_resp {
    int on;                          /* a "* n FETCH" response is open */
    uint64_t seq;                    /* its n */
    uint64_t uid, size;
    int have_uid, have_size, in_body, body_done;
    enum msg_result v;
};

/* The commands sent and not yet answered, oldest first (imap.pipelining): their
 * tagged replies must come in this order, as the pipelined commands depend each
 * on the one before (RFC 3501 5.5). One the session no longer wants (the
 * command before it failed) is dropped: its reply is read and counts for
 * nothing. */
#define IMAP_PIPE_MAX 5
struct inflight {
    unsigned tag;
    enum is st;
    int drop;
    uint64_t sent;                   /* when it went out, monotonic ns */
};

struct imap_session {
    struct conn c;
    struct session_env *env;
    struct timer backoff;            /* between sessions; the IDLE's renewal while idling */
    struct reader_pick pick;
    enum is state;
    int idle_user;                   /* the user whose own client this session is (-1: a drain reader) */
    enum imap_model model;           /* that client's model (idle, poll, webmail) */
    int idle_client;                 /* this connection is an idle client's (not a sweep visit) */
    int own_client;                  /* this connection is the user's own client's, of any model */
    uint64_t next_due;               /* poll and webmail: the next login, monotonic ns (0: not yet drawn) */
    uint64_t web_top;                /* webmail: the newest UID of the headers fetched */
    int keep;                        /* imap.delete = never or DURATION: ours flagged seen and left, not expunged */
    uint64_t delete_after;           /* imap.delete = DURATION, in ms: what was read and left is deleted this
                                      * long after its acceptance (0: now or never) */
    int purging;                     /* the STORE or EXPUNGE in flight is of the aged (M_AGED) */
    int store_refused;               /* the STORE of \Deleted was refused, its UID EXPUNGE already sent */
    int listed, partial, refused, login_refused;
    unsigned fails;
    uint64_t t_sent, t_tls, t_list;  /* t_sent: where the awaited command's time starts (imap_began) */
    uint64_t rtt;                    /* the connection's round trip: its TCP connect's time */
    uint64_t t_answer;               /* the last tagged reply's arrival */
    const struct target *target;
    struct imap_rd rd;
    unsigned tag;                    /* the last tag sent, "a<tag>" */
    struct inflight fl[IMAP_PIPE_MAX];
    unsigned nfl;                    /* fl[0]'s reply comes next */
    unsigned cur_tag;                /* the command the state awaits */
    size_t pre;                      /* input buffered before it went out: answers nothing */
    uint64_t untagged, max_untagged;
    int caps, cap_plain, cap_uidplus, cap_sasl_ir;
    int auth_wait;                   /* AUTHENTICATE PLAIN sent, its "+" awaited */
    int bye;
    uint64_t exists, uidvalidity;
    uint64_t next_uid;               /* the idle model: UIDs below were listed by an earlier sync */
    struct umsg *m;
    size_t nm, capm, hint;
    size_t limit;
    struct fetch_resp fr;
    struct msg_check chk;
    EVP_MD_CTX *md;
    /* the idle model: what started this sync (an EXISTS seen in IDLE at t_exists,
     * one seen while busy, the renewal, the login's), and why IDLE ends */
    enum { SYNC_LOGIN, SYNC_PUSH, SYNC_BUSY, SYNC_RENEW } why_sync;
    uint64_t t_exists, t_idle;
    int busy_news;                   /* an EXISTS came while a sync ran: sync again before idling */
    int leaving;                     /* the sweep or the stop: DONE, then LOGOUT */
};

/* imap.c */
/* Sends "a<N> command" and awaits its reply in state st; when the command
 * already went out, pipelined behind the last one answered, it is adopted
 * (nothing written), and those queued before it are dropped. */
void imap_send(struct imap_session *s, enum is st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* With imap.pipelining, sends "a<N> command" behind those in flight, to be
 * adopted by the imap_send() of the same state once they are answered; without
 * it, or with IMAP_PIPE_MAX in flight, nothing (imap_send() sends it then). */
void imap_queue(struct imap_session *s, enum is st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void imap_logout(struct imap_session *s);
/* Where a command's time starts: its send, or the arrival of the answer before
 * it less a round trip, whichever is later. The server runs pipelined commands
 * in order, each once it answered the one before; the later bound is when a
 * command sent alone would have left to reach it then. So a command sent alone
 * is timed from its send, and a pipelined one reads as it would without
 * pipelining: a round trip and the server's own time, never more than the wait
 * from its send. */
uint64_t imap_began(uint64_t sent, uint64_t prev_answer, uint64_t rtt);
/* 1 when a command of state st is in flight and still wanted (pipelined). */
int imap_in_flight(const struct imap_session *s, enum is st);
void imap_finish(struct imap_session *s, int failed);
void imap_count(struct imap_session *s, const char *kind, const char *example);
const struct config *imap_cfg(const struct imap_session *s);

/* imap_sync.c: the listing of UIDs from next_uid (1 at first), then the bodies,
 * their deletion and the reads' commit; then imap_sync_done(). */
void imap_sync_start(struct imap_session *s);
/* A FETCH response's text (its items) and its end; -1 on a hostile one (counted). */
int imap_fetch_text(struct imap_session *s, const char *p, size_t n, const struct imap_piece *pc);
int imap_fetch_done(struct imap_session *s);
/* An untagged EXPUNGE of message number n: the listed message of that number is
 * gone, those above it move down a number. */
void imap_expunged(struct imap_session *s, uint64_t n);
/* The tagged reply to the listing, the FETCH, the STORE or the EXPUNGE. */
void imap_sync_tagged(struct imap_session *s, int ok);
/* The visit's end for the ledger (a drain reader's LOGOUT answered). */
void imap_visit_done(struct imap_session *s);
/* A visit for kept-up (counters.empty_visits, full_visits): one whose listing
 * was complete found none of the mail its mailbox is owed (got 0), or retrieved
 * mail that waited in the mailbox for its reader (got and waited). */
void imap_visit_said(struct imap_session *s, int got, int waited);
/* 1 when the visit's messages include one of ours, fetched and judged. */
int imap_got_ours(const struct imap_session *s);
/* The webmail model after EXAMINE: the newest 50's headers, the newest body,
 * LOGOUT; and the tagged replies to those two. */
void imap_webmail_start(struct imap_session *s);
void imap_webmail_tagged(struct imap_session *s, int ok);

/* imap_idle.c */
/* After a sync: IDLE again (idle model, still sending or draining) or LOGOUT. */
void imap_sync_done(struct imap_session *s);
/* An untagged EXISTS of n messages. */
void imap_idle_exists(struct imap_session *s, uint64_t n);
/* The "+" to IDLE; the tagged reply to IDLE (after DONE). */
void imap_idle_continued(struct imap_session *s);
void imap_idle_tagged(struct imap_session *s, int ok);
/* The run's phase changed: an idle session leaves its IDLE for the sweep or the stop. */
void imap_idle_phase(struct imap_session *s, int phase);
/* The renewal's timer fired while idling. */
void imap_idle_renew(struct imap_session *s);
/* One of ours fetched by an idle session and committed: its push latencies. */
void imap_idle_read(struct imap_session *s, const struct ledger_entry *e, uint64_t fetched);

#endif
