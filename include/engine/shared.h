/* shared: the run's state that every worker thread shares — the frozen settings,
 * the users, the targets, the ledger, the message pool — and the few atomics the
 * controller and the workers meet on (the phase, the send budget, the sweep). Fixed
 * before the workers start but for the atomics; nothing here takes a lock. */
#ifndef MS_ENGINE_SHARED_H
#define MS_ENGINE_SHARED_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include "engine/foreign.h"
#include "engine/known.h"
#include "engine/ladder.h"
#include "engine/ledger.h"
#include "engine/msg.h"
#include "engine/pacer.h"
#include "engine/sizes.h"
#include "lib/users.h"
#include "settings/config.h"

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
    struct target *smtp, *pop3, *imap;          /* imap: readers.protocol = imap */
    unsigned nsmtp, npop3, nimap;
    /* imap.models: each model's users (the first of users idle, then poll, then
     * webmail; drain the rest), and those with a client of their own, a session each */
    size_t imap_users[IMAP_MODELS];
    unsigned imap_own;
    struct target *smtp_bind, *pop3_bind;      /* local source addresses, may be none */
    unsigned nsmtp_bind, npop3_bind;
    struct size_model sizes;
    unsigned nworkers;
    _Atomic int phase;
    struct stage_clock stages;       /* smtp.profile as it runs: a stage may end early */
    _Atomic int64_t send_budget;     /* messages left to send when messages = N */
    _Atomic uint64_t accepted;
    _Atomic int64_t retry_pending;   /* deferred messages in the workers' queues: the drain waits for them */
    /* The sweep goes in passes over the mailboxes that still owe (the controller
     * starts each pass: full or not, pass number, then the cursor back to 0); gains counts the
     * messages of ours a sweep session retrieved for the first time, the sign that
     * the server is still delivering. A full pass also visits the mailboxes that
     * owe nothing but were sent mail (ledger.mailed): a copy delivered again lands
     * there (verdict/sweep.h). */
    _Atomic int sweep_full;
    _Atomic uint32_t sweep_pass;
    _Atomic uint64_t sweep_cursor;   /* next user index of this pass */
    _Atomic int64_t sweep_active;    /* sweep sessions holding a user */
    _Atomic uint64_t sweep_gains;
    /* Per user: one of our readers has the mailbox open. Dovecot, for one, lets two
     * POP3 sessions share a maildrop, and two of our readers retrieving the same
     * message would look like a duplicate the server never made. */
    _Atomic uint8_t *mailbox_busy;
    struct foreign foreign;          /* mail in the mailboxes that is not ours */
    /* fill.messages. The fill is a run of its own (fill_mode): its senders take
     * the plan (a mailbox per message) by the cursor, its readers only verify, by
     * UIDL and TOP, learning the UIDLs into known. The soak after it shares known
     * (its readers skip those messages) and leaves any other message of the fill's
     * run id where it is. */
    int fill_mode;
    const uint32_t *fill_plan;
    uint64_t fill_total;
    _Atomic uint64_t fill_next;
    char fill_run_id[MSG_RUNID_LEN + 1];
    struct known *known;             /* NULL without a fill */
    struct known seen;               /* pop3.leave: what each mailbox's client retrieved */
    struct corpus corpus;            /* smtp.content = corpus: the messages to replay */
    /* smtp.rcpts_weights: the cumulative shares of 1, 2, ... recipients (0 = rcpts) */
    double rcpt_cdf[MAX_RCPTS];
    unsigned nrcpt_w;
    /* pop3.poll_interval and pop3.empty_backoff (both delay a retrieval): per
     * user, when its last complete visit's listing ended
     * (ms since the start, 0 = never): a message accepted before it and not in it
     * was the server's delay */
    _Atomic uint32_t *list_ms;
    /* pop3.empty_backoff: per user, when a reader that goes only where mail is owed
     * may visit the mailbox again (monotonic ns, low bits cleared: 0 = at once), and
     * in its low 4 bits how many visits in a row found none of the mail it owes.
     * One word, so a reader reads both with one load; only a mailbox in back-off is
     * ever written. */
    _Atomic uint64_t *empty_hold;
    /* smtp.size_dist = ladder: each sender takes the ladder's next message by the
     * cursor; the rungs follow from the SIZE its EHLO named (the same for every
     * session of one server). What a rung's messages became is in the ledger; what
     * the server said to those it refused, here. */
    int ladder;
    _Atomic uint64_t ladder_next;
    _Atomic uint64_t ladder_total;   /* messages of the whole ladder, once an EHLO told; 0 before */
    _Atomic uint64_t ladder_limit;   /* the SIZE advertised, + 1 (1: none); 0 before an EHLO */
    struct ladder_seen {
        _Atomic uint64_t tried, refused; /* bodies sent; refused at the end of data */
        _Atomic int said;            /* 0, 1 being written, 2 reply set */
        char reply[160];             /* the first refusal, printable */
    } ladder_seen[LADDER_RUNGS_MAX];
};

/* A mailbox check due (pop3.poll_interval). */
struct poll_item {
    uint64_t due;                    /* monotonic ns */
    uint32_t user;
};

/* Milliseconds since the run's start: the ledger's unit of time. */
static inline uint32_t run_ms(const struct run *r, uint64_t now_ns)
{
    return (uint32_t)((now_ns - r->t0) / 1000000ull);
}

#endif
