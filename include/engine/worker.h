/* worker: the run's shared context and one worker thread with its event loop, its
 * sessions and its statistics. Protocol sessions (smtp.c, pop3.c) only see their
 * worker; the controller (run.c) talks to workers through atomics. */
#ifndef MS_WORKER_H
#define MS_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include "run/config.h"
#include "engine/foreign.h"
#include "engine/ledger.h"
#include "lib/loop.h"
#include "engine/msg.h"
#include "engine/sizes.h"
#include "engine/stats.h"
#include "lib/users.h"

enum phase { PH_SEND, PH_DRAIN, PH_SWEEP, PH_STOP };

struct target {
    struct sockaddr_storage sa;
    socklen_t len;
    char name[128];
    char host[256];                  /* for TLS: SNI and the name the certificate must carry */
};

/* Shared by all threads; fixed before the workers start, but for the atomics. */
struct run {
    const struct config *cfg;
    struct users users;              /* this run's users: with run.shard K/N, those of index mod N = K */
    size_t users_total;              /* before sharding: the workload's user count */
    struct ledger ledger;
    char run_id[MSG_RUNID_LEN + 1];
    uint64_t seed;
    uint64_t t0;                     /* monotonic ns */
    uint64_t t0_unix_ms;
    char *pool;
    size_t poolsize;
    struct target *smtp, *pop3;
    unsigned nsmtp, npop3;
    struct target *smtp_bind, *pop3_bind;      /* local source addresses, may be none */
    unsigned nsmtp_bind, npop3_bind;
    struct size_model sizes;
    unsigned nworkers;
    _Atomic int phase;
    _Atomic int64_t send_budget;     /* messages left to send when messages = N */
    _Atomic uint64_t accepted;
    /* The sweep goes in passes over the mailboxes that still owe (the controller
     * starts each pass: pass number, then the cursor back to 0); gains counts the
     * messages of ours a sweep session retrieved for the first time, the sign that
     * the server is still delivering. */
    _Atomic uint32_t sweep_pass;
    _Atomic uint64_t sweep_cursor;   /* next user index of this pass */
    _Atomic int64_t sweep_active;    /* sweep sessions holding a user */
    _Atomic uint64_t sweep_gains;
    /* Per user: one of our readers has the mailbox open. Dovecot, for one, lets two
     * POP3 sessions share a maildrop, and two of our readers retrieving the same
     * message would look like a duplicate the server never made. */
    _Atomic uint8_t *mailbox_busy;
    struct foreign foreign;          /* mail in the mailboxes that is not ours */
};

struct worker;
struct conn;
struct tls_ctx;

/* A schedule of events at a target rate with a linear ramp: event n is due at
 * sqrt(2 ramp n / rate) while ramping, ramp/2 + n/rate after. */
struct pacer {
    double rate;                     /* per second; 0 = unpaced */
    double ramp;                     /* seconds */
    uint64_t t0, n;
};

struct smtp_session;
struct pop3_session;

struct worker {
    unsigned idx;
    pthread_t thread;
    struct loop *loop;
    struct run *run;
    struct wstats st;
    struct msg_gen gen;
    struct smtp_session *smtp;
    unsigned nsmtp;
    struct pop3_session *pop3;
    unsigned npop3;
    int phase_seen;
    unsigned rr, rr_bind;            /* round robin over targets and source addresses */
    struct pacer msg_pacer, conn_pacer;
    struct tls_ctx *smtp_tls, *pop3_tls;   /* per worker: no lock on the session cache */
    /* Interval hand-off: the controller raises want, the worker fills snap and
     * sets done = want. */
    _Atomic unsigned snap_want, snap_done;
    struct wsnap snap;
    _Atomic unsigned smtp_open;      /* kept up to date once the senders wind down */
};

int worker_init(struct worker *w, unsigned idx, struct run *run, unsigned nsmtp, unsigned npop3,
                unsigned smtp_base, unsigned pop3_base);
void *worker_main(void *arg);
void worker_free(struct worker *w);

static inline uint32_t run_ms(const struct run *r, uint64_t now_ns)
{
    return (uint32_t)((now_ns - r->t0) / 1000000ull);
}

/* Session entry points, called by the worker. */
struct smtp_session *smtp_sessions_new(struct worker *w, unsigned n, unsigned base);
void smtp_sessions_start(struct worker *w);
void smtp_sessions_phase(struct worker *w, int phase);
void smtp_sessions_free(struct worker *w);
unsigned smtp_sessions_open(const struct worker *w);

struct pop3_session *pop3_sessions_new(struct worker *w, unsigned n, unsigned base);
void pop3_sessions_start(struct worker *w);
void pop3_sessions_phase(struct worker *w, int phase);
void pop3_sessions_free(struct worker *w);
unsigned pop3_sessions_open(const struct worker *w);

void pacer_init(struct pacer *p, double rate, uint64_t ramp_ns, uint64_t t0);
uint64_t pacer_due(const struct pacer *p);   /* monotonic ns */
static inline void pacer_take(struct pacer *p) { p->n++; }
static inline int pacer_on(const struct pacer *p) { return p->rate > 0; }

/* Milliseconds to wait before the next connection after `fails` failures in a
 * row: doubling from 100 ms, up to 1 s after transport failures and up to 10 s
 * when the server turned the session away (a refused login must not become a
 * password-guessing flood). */
uint64_t backoff_ms(unsigned fails, int refused);

/* The next local address to bind a connection to, or NULL. */
const struct target *next_bind(struct worker *w, const struct target *v, unsigned n);

/* Error class "<proto>_<stage>_<kind>" from a failed connection. */
void count_conn_error(struct worker *w, const char *proto, const char *stage, const struct conn *c);
/* "<proto>_<stage>_protocol" for input already buffered when a command went out:
 * sent before the server saw the command, it answers nothing (issue 13). Its
 * first line is the example. */
void count_unasked(struct worker *w, const char *proto, const char *stage, const struct conn *c);

#endif
