/* trail: the server's own evidence on a message that was not delivered exactly once.
 * For each message asked about, the log lines that name it — its queue id (from the
 * end-of-data reply), its Message-ID, and the ids those lines lead to (the LMTP
 * session Postfix names in "status=sent (250 2.0.0 <rcpt> ID Saved)", which is how
 * Dovecot's lines of that delivery are named; the next hop's queue id of a relay) —
 * kept within a bound, and the cause they show: bounced, expired, removed from the
 * queue, duplicated after a timeout (or a lost connection) at the end of data,
 * delivered then gone, deferred, lost in a crash,
 * or never logged at all. Fed every line of the run's logs once, at the end (the
 * second pass: logwatch_rescan); one multi-key search per line, so a long soak's
 * logs are read in seconds. */
#ifndef MS_VERDICT_TRAIL_H
#define MS_VERDICT_TRAIL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/ledger.h"

#define TRAIL_HEAD 6            /* the first lines that name the message, */
#define TRAIL_TAIL 10           /* and the last: a message retried 100 times keeps 16 */
#define TRAIL_LINE_MAX 400      /* bytes kept of a line, made printable */
#define TRAIL_KEYS 4            /* queue id, Message-ID, and ids learnt from the lines */
#define TRAIL_KEY_MAX 96

enum trail_cause {
    TC_NONE,                    /* nothing to explain (a late delivery without a deferral) */
    TC_BOUNCED,                 /* the server refused it for good after accepting it */
    TC_EXPIRED,                 /* it stayed in the queue past the server's lifetime */
    TC_REMOVED,                 /* removed from the queue (postsuper -d, exim -Mrm) */
    TC_DUP_TIMEOUT,             /* delivered again after a delivery that timed out */
    TC_DUP_CONN,                /* delivered again after one whose connection was lost at its end */
    TC_DUP_SERVER,              /* the server logged two deliveries, no timeout */
    TC_DUP_STORE,               /* one delivery logged: the copy was made in the store */
    TC_DELIVERED_GONE,          /* the server logged its delivery; the mailbox had not it */
    TC_DEFERRED,                /* deferred: still retried when last seen (or delivered late) */
    TC_CRASH,                   /* no delivery logged, and the server crashed meanwhile */
    TC_NEVER_LOGGED,            /* no log line names it at all */
    TC_UNEXPLAINED,             /* lines name it, none says why */
    TC_COUNT
};
extern const char *const trail_cause_names[TC_COUNT];

struct trail {
    uint64_t seq;                       /* the ledger entry */
    enum outcome outcome;               /* delivered, lost, ... (engine/ledger.h) */
    int late;                           /* delivered, but only the sweep read it */
    char keys[TRAIL_KEYS][TRAIL_KEY_MAX];
    unsigned nkeys;
    char *head[TRAIL_HEAD], *tail[TRAIL_TAIL];
    unsigned nhead;
    uint64_t nlines;                    /* lines that named it; those past head+tail are counted only */
    enum trail_cause cause;
    char *cause_line;                   /* the line that shows the cause (or the crash's), or NULL */
    const char *last_queue;             /* the queue the logs last put it in: "active", "deferred",
                                           "hold", or "" */
    const char *left;                   /* then: "left" (the server was done with it), "deleted"
                                           (postsuper -d, exim -Mrm), or "" (still queued) */
    /* what the lines showed, for the cause */
    unsigned sent, stored, bounced, expired, removed, deferred, timeouts;
    uint64_t timeout_at, last_sent_at;  /* line numbers of the pass (0 = none) */
    int timeout_conn;                   /* the first was a connection lost, not a timeout */
    char *bounce_line, *expire_line, *remove_line, *defer_line, *timeout_line;
};

struct trails;

struct trails *trails_new(void);
void trails_free(struct trails *t);
/* A message to explain: its ledger entry, outcome, the server's queue id ("" when
 * none) and its Message-ID (with or without the angle brackets). */
void trails_want(struct trails *t, uint64_t seq, enum outcome v, int late, const char *qid, const char *msgid);
/* One log line (the whole pass, in the order the logs were read). */
void trails_line(struct trails *t, const char *line, size_t len);
/* A crash the run saw (a log line of the fatal class, a process that died): the
 * evidence for a message that vanished without a delivery. */
void trails_crash(struct trails *t, const char *what);
/* After the last line: the causes. */
void trails_done(struct trails *t);

size_t trails_count(const struct trails *t);
const struct trail *trails_get(const struct trails *t, size_t i);
/* The trail of ledger entry seq, or NULL. */
const struct trail *trails_find(const struct trails *t, uint64_t seq);
/* The lines kept, in order (head then tail), and how many were left out between. */
size_t trail_lines(const struct trail *tr, const char **out, size_t max, uint64_t *skipped);

#endif
