/* worker: one thread with its event loop, its statistics and its share of the
 * sessions of every protocol, which it drives through their session_ops tables
 * (engine/session.h). The controller (run.c) talks to workers through atomics. */
#ifndef MS_WORKER_H
#define MS_WORKER_H

#include <pthread.h>
#include <stdatomic.h>

#include "engine/msg.h"
#include "engine/session.h"
#include "engine/shared.h"
#include "engine/stats.h"
#include "lib/loop.h"

/* SESSIONS_POP3: the readers, whichever protocol they speak (readers.protocol) */
enum { SESSIONS_SMTP, SESSIONS_POP3, SESSION_KINDS };

struct worker {
    unsigned idx;
    pthread_t thread;
    struct loop *loop;
    struct run *run;
    struct wstats st;
    struct msg_gen gen;
    struct session_env env;          /* what its sessions see of it */
    struct session_set sessions[SESSION_KINDS];   /* walked through their protocols' tables */
    int phase_seen;
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

#endif
