/* reader_pick: which mailbox a reader visits next, and the claims a visit holds:
 * any mailbox while sending, one owed mail while draining (or with pop3.visit =
 * owed), the next owing one in the sweep's pass; pop3.exclusive's lock, the
 * back-off of an owed mailbox found empty (pop3.empty_backoff), the sweep's count
 * of visits in flight. Rules of pop3.c's readers, kept here for the IMAP readers
 * (reader_pick.c). */
#ifndef MS_ENGINE_READER_PICK_H
#define MS_ENGINE_READER_PICK_H

#include <stdint.h>

#include "engine/session.h"
#include "lib/rng.h"

struct reader_pick {
    uint32_t user;                   /* the mailbox picked */
    int sweep;                       /* a visit of the final sweep, counted in sweep_active */
    uint32_t pass;                   /* its pass */
    int owed_only;                   /* picked as owed mail: its visit sets the back-off */
    int holds_mailbox;               /* holds mailbox_busy[user] */
    int retry_user;                  /* the next visit: the same mailbox (a failed sweep visit) */
    unsigned sweep_tries;
    uint64_t hold_next;              /* no pick: when the first held-back mailbox may be visited */
    struct rng rng;
};

/* Picks the next mailbox (1), or 0 with nothing to visit now (hold_next set when
 * an owed mailbox waits for its back-off). skip(ud, u) = 1 leaves mailbox u out
 * while sending and draining (NULL: none). */
int reader_pick(struct reader_pick *p, struct session_env *env, int (*skip)(void *ud, uint32_t u), void *ud);
/* pop3.exclusive: takes mailbox u's lock (1), or 0 when another reader has it. */
int reader_hold(struct reader_pick *p, struct session_env *env, uint32_t u);
void reader_release(struct reader_pick *p, struct session_env *env);
/* The visit ended: the lock and, unless a failed sweep visit tries the mailbox
 * again (a few times), the sweep's claim are released. */
void reader_visit_end(struct reader_pick *p, struct session_env *env, int failed);
/* Ends the sweep's claim at once (the run stops). */
void reader_end_sweep(struct reader_pick *p, struct session_env *env);
/* A visit of a mailbox picked as owed ended: one that retrieved none of its mail
 * (got = 0) while it still owes holds it back longer; else the back-off ends. */
void reader_empty_visited(struct reader_pick *p, struct session_env *env, int got);

#endif
