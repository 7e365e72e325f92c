/* session: what a protocol session sees of the worker that runs it — a narrow
 * environment (its loop, the shared run, where to count, the worker's message
 * generator, pacers, TLS contexts and round robin) — and the table of operations
 * each protocol gives the worker, which walks the tables without knowing SMTP from
 * POP3. Sessions never see the worker: smtp.c and pop3.c include this header only,
 * so a unit test can run them in an environment of its own. */
#ifndef MS_ENGINE_SESSION_H
#define MS_ENGINE_SESSION_H

#include <stdint.h>

#include "engine/pacer.h"
#include "engine/retry.h"
#include "engine/shared.h"
#include "engine/stats.h"
#include "lib/loop.h"

struct conn;
struct tls_ctx;

struct session_env {
    struct loop *loop;
    struct run *run;                 /* shared: fixed but for its atomics */
    struct wstats *st;               /* this worker's counters and histograms */
    struct msg_gen *gen;             /* this worker's message generator */
    unsigned shard;                  /* this worker's part of the ledger */
    struct pacer msg_pacer, conn_pacer;   /* this worker's share of the rates */
    struct retryq retry;             /* this worker's deferred messages (smtp.retry) */
    /* pop3.poll_interval: this worker's users' next checks (struct poll_item),
     * users index mod workers = this worker's, and the draws of their jitter */
    struct dueheap polls;
    struct rng poll_rng;
    struct tls_ctx *smtp_tls, *pop3_tls, *imap_tls;   /* per worker: no lock on the session cache */
    unsigned rr, rr_bind;            /* round robin over targets and source addresses */
    /* Opens c to t (from bind, when not NULL): CONN_UP or CONN_CLOSED follows from
     * the loop. session_dial (TCP) unless a test puts its own peer here. 0, or -1
     * with c->err set. */
    int (*dial)(struct session_env *env, struct conn *c, const struct target *t, const struct target *bind);
    void *dial_ctx;                  /* for the test's dial */
};

/* One protocol's sessions, as the worker drives them: each protocol gives one
 * table, and the worker walks its sessions through it. */
struct session_ops {
    const char *name;                /* "smtp", "pop3" */
    size_t size;                     /* of one session */
    /* id numbers the session across workers (its random seed). */
    void (*init)(void *s, struct session_env *env, unsigned id);
    void (*start)(void *s);
    void (*phase)(void *s, int phase);         /* the run entered phase */
    int (*is_open)(const void *s);             /* holds a connection */
    void (*free)(void *s);                     /* closes it; frees what it holds */
};

/* n sessions of one protocol, numbered from base. */
struct session_set {
    const struct session_ops *ops;
    unsigned n;
    char *v;                         /* n sessions of ops->size bytes */
};

void session_set_init(struct session_set *set, const struct session_ops *ops, struct session_env *env,
                      unsigned n, unsigned base);
void session_set_start(struct session_set *set);
void session_set_phase(struct session_set *set, int phase);
unsigned session_set_open(const struct session_set *set);
void session_set_free(struct session_set *set);

int session_dial(struct session_env *env, struct conn *c, const struct target *t, const struct target *bind);

/* Milliseconds to wait before the next connection after `fails` failures in a
 * row: doubling from 100 ms, up to 1 s after transport failures and up to 10 s
 * when the server turned the session away (a refused login must not become a
 * password-guessing flood). */
uint64_t backoff_ms(unsigned fails, int refused);

/* The next local address to bind a connection to, or NULL. */
const struct target *next_bind(struct session_env *env, const struct target *v, unsigned n);

/* Error class "<proto>_<stage>_<kind>" from a failed connection. */
void count_conn_error(struct session_env *env, const char *proto, const char *stage, const struct conn *c);
/* At the stop: a session still waiting for the server (its greeting, a reply, data)
 * from which it heard nothing for UNANSWERED_NS since it asked counts
 * "<proto>_<stage>_unanswered", so a server that never answers (an HTTP server
 * given as the target) is not a clean "sent 0, errors 0"; one asked just before the
 * stop, or one still trickling its answer, is not charged. timeout is the
 * protocol's, with which conn_deadline was set when it asked. */
#define UNANSWERED_NS (1000 * NS_PER_MS)
void count_unanswered(struct session_env *env, const char *proto, const char *stage, const struct conn *c,
                      uint64_t timeout);
/* "<proto>_<stage>_timeout" when the phase's deadline passed, with what was awaited
 * and for how long as its example ("no reply to RETR within 30s; 1234 bytes of it
 * had come"), as other classes keep the server's words. */
void count_timeout(struct session_env *env, const char *proto, const char *stage, const struct conn *c,
                   uint64_t timeout);
/* "<proto>_<stage>_protocol" for input already buffered when a command went out:
 * sent before the server saw the command, it answers nothing (issue 13). Its
 * first line is the example. */
void count_unasked(struct session_env *env, const char *proto, const char *stage, const struct conn *c);
/* A reader's retrieved message of ours (chk ended with v) against its ledger entry e
 * in the mailbox of user: corrupted (with an example saying what differed, and the
 * entry it is of), or intact; an empty body served as one empty line is counted
 * apart and intact unless run.strict_bodies. */
void session_judge_body(struct session_env *env, const struct msg_check *chk, enum msg_result v,
                        struct ledger_entry *e, uint32_t user);

#endif
