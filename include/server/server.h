/* server: the running reference server (listeners, signals, sessions) and what
 * the SMTP, POP3 and IMAP session code shares: the session base, closing after the last
 * reply left, and applying a command fault. */
#ifndef MS_SERVER_SERVER_H
#define MS_SERVER_SERVER_H

#include <pthread.h>
#include <stdint.h>

#include "lib/conn.h"
#include "lib/loop.h"
#include "server/config.h"
#include "server/fault.h"
#include "server/store/store.h"
#include "server/util.h"

struct srv_sess;
struct srv;
struct srv_rate;

struct srv_listener {
    struct io_handler io;
    struct srv *srv;
    enum srv_proto proto;
    int tls;                         /* IMAPS: implicit TLS */
};

/* The listeners: one per protocol, and IMAP's over implicit TLS. */
enum { SRV_LSN_SMTP, SRV_LSN_POP3, SRV_LSN_IMAP, SRV_LSN_IMAPS, SRV_LSN_COUNT };

struct imap_box;
struct tls_ctx;

struct srv {
    const struct srv_config *cfg;
    struct loop *loop;
    struct users users;
    struct srv_book book;
    struct srv_store *store;
    struct srv_fault_state fst;
    struct srv_listener lsn[SRV_LSN_COUNT];
    pthread_t sig_thread;            /* takes SIGTERM and SIGINT, watches the stop */
    int sig_started;
    char addr[SRV_LSN_COUNT][80];    /* where each listener ended up, "127.0.0.1:PORT" */
    struct imap_box **imap_boxes;    /* per user, made on first use (imap_box.c) */
    struct tls_ctx *imap_tls;        /* server.tls_cert: IMAPS and STARTTLS; NULL = none */
    uint32_t imap_uidvalidity;
    struct srv_sess *sessions;       /* every live session, for shutdown */
    struct srv_rate *rate;           /* [fault.rate], or NULL */
    uint64_t nconns, seq[SRV_PROTO_COUNT], next_qid, start_wall;
    uint64_t max_conns;              /* server.max_conns, or fewer when the descriptor limit
                                        cannot hold that many (srv_init says so in the log) */
    int spare_fd;                    /* kept open to refuse a client when none is left */
    int stopping;                    /* set by the signal thread (atomic) */
    uint64_t signal_ns;              /* when it took the signal (atomic; 0: none) */
};

enum srv_timer_mode { TM_IDLE, TM_DELAY, TM_LINGER, TM_NONE };

/* What both protocols keep per connection. conn is first: the session is freed
 * through loop_defer_free as one block. */
struct srv_sess {
    struct conn c;
    struct srv *srv;
    struct srv_sess *prev, *next;
    enum srv_proto proto;
    uint64_t id;                     /* per-protocol connection number (RNG stream) */
    struct srv_rng rng;
    enum srv_timer_mode tmode;
    int waiting;                     /* a store request is out, or a delay runs */
    int dead;                        /* connection gone; free when nothing is out */
    int closing;                     /* closes once the output is flushed */
    int stalled;                     /* a stall fault: read and drop everything */
    int linger_tries;
    int delayed_what;                /* the protocol's tag for what a delay holds back */
    char peer[64];                   /* "localhost[127.0.0.1]" for log lines */
    char *delayed;                   /* a command postponed by a delay fault */
    /* Misbehaviours that write on a schedule of their own (fault kinds trickle,
     * endless, overlong), driven by the spew timer. */
    struct timer spew;
    struct buf drip;                 /* trickle: output held back, let out a byte per tick */
    uint64_t drip_ns;                /* trickle: the pause between bytes; 0 = off */
    uint64_t spew_left;              /* endless (UINT64_MAX) or overlong: bytes still to make */
    uint64_t spew_lines;             /* endless: lines made */
    const struct srv_cmd_fault *extra;   /* kind = extra: its text follows this command's reply */
    void (*on_timer)(struct srv_sess *s);   /* TM_DELAY fired */
    void (*on_free)(struct srv_sess *s);    /* protocol cleanup before free */
};

int srv_init(struct srv *s, const struct srv_config *cfg, char *err, size_t errlen);
/* Runs until SIGTERM/SIGINT; returns the exit status. */
int srv_run(struct srv *s);
void srv_fini(struct srv *s);

/* Session plumbing shared by smtp.c, pop3.c and imap.c. */
void srv_sess_start(struct srv *srv, struct srv_sess *s, enum srv_proto proto, int fd, conn_cb cb);
/* Sends what the protocol wrote (a byte at a time under a trickle fault). */
void srv_sess_flush(struct srv_sess *s);
/* Flushes, then closes once the output left (or after a short grace). */
void srv_sess_close_after_flush(struct srv_sess *s);
/* Closes now and frees when no request is out. */
void srv_sess_drop(struct srv_sess *s);
/* Frees if dead and idle; returns 1 when freed (the caller must not touch s). */
int srv_sess_reap(struct srv_sess *s);
/* The idle deadline again (after a command, a delay or a store reply). */
void srv_sess_idle(struct srv_sess *s);
/* Handles the conn events both protocols treat alike (timers, close); returns 1
 * when the event was consumed. */
int srv_sess_event(struct srv_sess *s, enum conn_event ev);
/* Runs the protocol over the buffered input, in order, until it waits for the
 * store or a delay, closes, or needs more; then flushes once. raw, when set, sees
 * the input first (SMTP's DATA): 1 = consumed some, go on; 0 = needs more; -1 = not
 * in raw mode, read a line. */
void srv_sess_pump(struct srv_sess *s, int (*raw)(struct srv_sess *s),
                   void (*line)(struct srv_sess *s, char *l, size_t n), const char *too_long);
/* The idle deadline passed: say bye and close (silently when stalled). */
void srv_sess_idle_timeout(struct srv_sess *s, const char *bye);
/* Postpones line (copied) by a delay fault; on_timer runs it later. */
void srv_sess_delay(struct srv_sess *s, int what, const char *line, size_t len, uint64_t ns);

/* Picks the fault for a stage of this session (NULL when none strikes). */
const struct srv_cmd_fault *srv_sess_fault(struct srv_sess *s, enum srv_stage stage);
/* Writes the fault's log line: its own log= text or the default given. */
void srv_fault_log(const struct srv_sess *s, const struct srv_cmd_fault *f, const char *dflt);
/* Applies a fault that struck, in the protocol's words: reply (temp/perm) and its
 * log line rlog, bye (421), where ("RCPT from localhost[...]") for the other log
 * lines. close_after_reply: a temp/perm reply ends the session (banner). rst: a
 * disconnect resets instead of closing. Returns 1 when the command must not run. */
int srv_sess_apply_fault(struct srv_sess *s, const struct srv_cmd_fault *f, int dly_tag,
                         const char *line, size_t len, const char *reply, const char *rlog,
                         const char *bye, const char *where, int close_after_reply, int rst);
/* Ends the connection as an abrupt drop: RST when rst, else FIN. */
void srv_sess_abort(struct srv_sess *s, int rst);

/* The user index for an address and password, or -1. */
long srv_check_login(const struct srv *srv, const char *user, size_t ulen, const char *pass, size_t plen);

#endif
