/* reconcile: the server's queue, read per message, against the ledger. Each message
 * of this run the queue holds (its X-Mailsoak-Id) marks its ledger entries
 * pending_queued: an entry the queue held may reach its mailbox after the sweep
 * read it, so it cannot be lost. When the queue says which recipients it still holds
 * and they are ours by address, only those are marked; else (not known, or rewritten
 * addresses) all of the message's recipients. */
#ifndef MS_VERDICT_RECONCILE_H
#define MS_VERDICT_RECONCILE_H

#include "engine/ledger.h"
#include "lib/users.h"
#include "probe/queue.h"

struct spool;
struct run;

struct reconcile {
    struct ledger *l;
    const struct users *users;       /* the ledger's users: entry->user indexes them */
    const char *run_id;              /* this run's: other runs' mail in the queue is not ours */
    unsigned owed;                   /* out: owed entries the queue holds */
};

/* One queued message (a queue_msg_fn, ctx a struct reconcile). */
void reconcile_queued(void *ctx, const struct queue_msg *qm);

/* The whole queue q against r's ledger. fresh (a sweep pass starts) clears the
 * previous marks first; later readings add theirs, so an entry the queue held at any
 * reading since the proving pass began stays pending. Returns the owed entries the
 * queue holds; RECONCILE_NO_QUEUE when q is NULL (the spool, if any, is a probe's,
 * counted on its host); RECONCILE_UNREADABLE when a queued message could not be read
 * (it may be one of ours: the queue holds mail now, seen by this very scan, so no
 * verdict may count it out). Opens every queued message: for the sweep's passes and
 * the end, never per sample. */
enum { RECONCILE_NO_QUEUE = -1, RECONCILE_UNREADABLE = -2 };
int reconcile_queue(struct spool *q, struct run *r, int fresh);

#endif
