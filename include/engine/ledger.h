/* ledger: every message of the run, from the moment its DATA is sent until the end.
 * Senders append to their own worker's array; readers of any worker mark entries
 * with atomic operations. No lock on the hot path: 24 bytes per message (and 4 more
 * plus the id, when the server names its queue id in its reply) until the message
 * is settled; a chunk whose messages were all delivered exactly once is compacted
 * to a count (ledger_compact). It also owns the rule that turns what was seen into
 * an outcome: a message is lost only when a complete visit of its mailbox after the
 * server settled did not find it. */
#ifndef MS_LEDGER_H
#define MS_LEDGER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define LEDGER_CHUNK_BITS 12
#define LEDGER_CHUNK (1u << LEDGER_CHUNK_BITS)
#define LEDGER_MAX_CHUNKS 32768         /* 134M messages per worker */
#define LEDGER_SEQ_SHIFT 40             /* seq = worker << 40 | local index */

/* state: low byte = times read (saturating at 255), then flags, then (bits 24-31)
 * the entry's index among its message's recipients: entry seq - index is the id in
 * the message's headers. */
#define LS_READS     0xffu
#define LS_ACCEPTED  0x100u
#define LS_REJECTED  0x200u
#define LS_CORRUPT   0x400u
#define LS_QUEUED    0x800u             /* in the server's queue at its last reading */
#define LS_SEEN      0x1000u            /* retrieved, ours, intact or not; not necessarily deleted */
#define LS_LATE      0x2000u            /* first read after the drain, by the sweep */
#define LS_DEFERRED  0x4000u            /* 4xx (or no answer) at the end of data: sent again under a new id */
#define LS_NOTED     0x8000u            /* has a note (a retried message): never compacted */
#define LS_REVIVED   0x10000u           /* a compacted message read again: its size, digest, time and id are gone */
#define LS_RCPT_SHIFT 24

struct ledger_entry {
    uint64_t digest8;                   /* first 8 bytes of the body's SHA-256 */
    uint32_t user;
    uint32_t size;
    uint32_t accepted_ms;               /* since the run's start */
    _Atomic uint32_t state;
};

/* A message sent again after deferrals (smtp.retry): its attempts, kept apart
 * from the entries (few messages have one), in the order of their entries. */
struct ledger_note {
    uint64_t idx;                       /* the entry's local index in its shard */
    uint32_t tries;                     /* attempts, this one included */
    uint32_t first_ms;                  /* the first attempt, ms since the start */
};

/* The server's ids of one chunk's entries: per entry an offset into the chunk's
 * arena of NUL-terminated ids (0 = none), so a compacted chunk frees its ids too. */
struct ledger_qids {
    uint32_t *off;
    char *text;
    size_t len, cap;
    uint32_t last;                      /* the last id stored: its message's other recipients share it */
};

struct ledger_shard {
    _Atomic(struct ledger_entry *) chunks[LEDGER_MAX_CHUNKS];
    /* Chunk c was compacted: every entry delivered exactly once, counted in
     * settled and dropped. Set before its pointer is cleared. */
    _Atomic uint8_t compacted[LEDGER_MAX_CHUNKS];
    _Atomic uint64_t n;                 /* entries published */
    /* The server's id of each accepted message (its queue id), beside the entries
     * so that a server giving none costs nothing. Written by the owner only, read
     * once every thread stopped (and freed by ledger_compact once the chunk's
     * entries are all accepted: the owner writes a chunk's ids before it accepts). */
    struct ledger_qids qids[LEDGER_MAX_CHUNKS];
    /* The owner's quiescent count: it passed a point holding no entry pointer
     * (ledger_quiescent); LEDGER_OFFLINE once it stopped. */
    _Atomic uint64_t quiet;
    struct ledger_note *notes;          /* owner thread only; read after it stopped */
    size_t nnotes, capnotes;
};

struct ledger {
    unsigned nshards;
    struct ledger_shard *shards;
    size_t nusers;
    _Atomic int32_t *owed;              /* per user: accepted, not yet read */
    /* Per user: some message to it was accepted. A copy the server delivers again
     * lands in such a mailbox after it owes nothing: the sweep's closing pass, and
     * each pass that can prove, visit these too (verdict/sweep.h). */
    _Atomic uint8_t *mailed;
    _Atomic int64_t owed_total;
    /* Per user: the sweep pass (from 1) of the last complete visit (listed in
     * full, every message retrieved, QUIT acknowledged), and when any complete
     * visit last ended (ms since the start, 0 = never). */
    _Atomic uint32_t *visit_pass;
    _Atomic uint32_t *visit_ms;
    /* Set by the controller once every thread stopped: the pass that ran after the
     * server settled (0 = it never settled), and whether a sweep was attempted. */
    uint32_t proof_pass;
    int swept;
    int final;                          /* every thread stopped: the notes may be read */
    /* Compaction (ledger_compact, on one thread): the entries dropped, all delivered
     * exactly once; the chunks dropped but not yet freed, waiting for every owner
     * to pass a quiescent point. */
    uint64_t settled, settled_chunks;
    struct ledger_retired *retired;
    size_t nretired, capretired;
    /* Entries of compacted chunks read again (a duplicate of a settled message):
     * made anew under revive_lock (rare: never the hot path), sorted by seq, each
     * allocated alone so that pointers to them stay valid until ledger_free. */
    pthread_mutex_t revive_lock;
    struct ledger_revived **revived;
    size_t nrevived, caprevived;
};

#define LEDGER_OFFLINE UINT64_MAX

/* Why an unread message is pending rather than lost. */
enum pending_reason {
    PR_QUEUED,                          /* the server's queue held it at its last reading */
    PR_PEEKED,                          /* retrieved, but its deletion was never committed */
    PR_UNSWEPT,                         /* its mailbox was not read in full after the server settled */
    PR_UNSETTLED,                       /* mail was still arriving when the sweep's time ran out */
    PR_COUNT
};
extern const char *const pending_reason_names[PR_COUNT];

/* A message's outcome (one recipient's entry): what the ledger proved of it. The
 * run's verdict is another thing (verdict/verdict.h). */
enum outcome {
    OUTCOME_DELIVERED, OUTCOME_DUPLICATED, OUTCOME_CORRUPTED, OUTCOME_LOST, OUTCOME_PENDING, /* accepted: sum to sent */
    OUTCOME_REJECTED, OUTCOME_UNCONFIRMED, OUTCOME_DEFERRED,                                 /* not accepted */
    OUTCOME_NONE,                                                                            /* not accepted, never seen */
};
extern const char *const outcome_names[OUTCOME_NONE + 1];

struct ledger_outcome {
    uint64_t accepted, delivered, duplicated, corrupted, lost, pending;
    uint64_t pending_by[PR_COUNT];
    uint64_t late;                      /* delivered or duplicated, first read by the sweep */
    uint64_t rejected, unconfirmed;     /* refused or unanswered, yet found in a mailbox */
    uint64_t reads;                     /* retrievals of this run's messages */
    uint64_t deferred;                  /* attempts deferred at the end of data, sent again */
    uint64_t retried, retried_tries;    /* delivered after more than one try; their tries */
    uint32_t retried_max_tries, retried_max_ms;   /* the most tries, the longest first try to acceptance */
};

/* 0 (an allocation failure aborts: lib/alloc.h). */
int ledger_init(struct ledger *l, unsigned nshards, size_t nusers);
void ledger_free(struct ledger *l);

static inline uint64_t ledger_seq(unsigned shard, uint64_t idx)
{
    return (uint64_t)shard << LEDGER_SEQ_SHIFT | idx;
}

/* Owner thread of the shard only; rcpt is the entry's index among its message's
 * recipients. Returns the entry's local index. */
uint64_t ledger_add(struct ledger *l, unsigned shard, uint32_t user, uint32_t size, uint64_t digest8, unsigned rcpt);
struct ledger_entry *ledger_get(const struct ledger *l, uint64_t seq);
/* Owner: the server answered the end of data. */
void ledger_accept(struct ledger *l, struct ledger_entry *e, uint32_t now_ms);
void ledger_reject(struct ledger_entry *e);
/* Owner: the server's id of entry seq (n bytes, no NUL; smtp_queue_id's). Entries
 * given the same id one after the other (one message's recipients) share one copy. */
void ledger_set_qid(struct ledger *l, uint64_t seq, const char *qid, size_t n);
/* Once every thread stopped: the server's id of entry seq, "" when it gave none. */
const char *ledger_qid(const struct ledger *l, uint64_t seq);
/* Owner: a 4xx (or no answer) at the end of data; the message goes out again. */
void ledger_defer(struct ledger_entry *e);
/* Owner: the entry at local index idx is attempt `tries` of a message first tried
 * at first_ms. Notes are added in index order. */
void ledger_note(struct ledger *l, unsigned shard, uint64_t idx, uint32_t tries, uint32_t first_ms);
/* After the owners stopped: the note of entry seq, or NULL (a first try). */
const struct ledger_note *ledger_note_of(const struct ledger *l, uint64_t seq);
/* The entry of seq (rcpt: its index among its message's recipients) for a reader
 * in user's mailbox that found it earlier: the live entry, or, when its chunk was
 * compacted since, the entry revived for it. NULL when seq is none of this run's. */
struct ledger_entry *ledger_hold(struct ledger *l, uint64_t seq, unsigned rcpt, uint32_t user);
/* Reader, once a DELE was acknowledged and the QUIT committed it: returns the reads
 * before this one. late: the sweep read it. */
unsigned ledger_read(struct ledger *l, struct ledger_entry *e, int late);
void ledger_corrupt(struct ledger_entry *e);
/* Reader: retrieved (whether or not it will be deleted). Returns 1 the first time. */
int ledger_seen(struct ledger_entry *e);
/* Reader: a complete visit of user's mailbox, in sweep pass `pass` (0: not a sweep). */
void ledger_visited(struct ledger *l, uint32_t user, uint32_t pass, uint32_t now_ms);

/* Of the message with id seq and nrcpt recipients (entries seq .. seq+nrcpt-1),
 * the entry for user; NULL when none is, or when the range is not one of this
 * run's: an id read from a mailbox may be forged, and "ffffffffffffffff/64" must
 * not wrap onto worker 0's first entries (issue 13). */
struct ledger_entry *ledger_find(struct ledger *l, uint64_t seq, unsigned nrcpt, uint32_t user);
/* The same, also giving the entry's own seq (eseq may be NULL). A message of a
 * compacted chunk found again is revived: the first of its entries not yet revived
 * becomes user's, read once already (so the next read is its duplicate). */
struct ledger_entry *ledger_find_seq(struct ledger *l, uint64_t seq, unsigned nrcpt, uint32_t user, uint64_t *eseq);

/* The owner of shard (a worker's thread) holds no entry pointer now: between two
 * turns of its loop. ledger_offline: it stopped for good. */
void ledger_quiescent(struct ledger *l, unsigned shard);
void ledger_offline(struct ledger *l, unsigned shard);
/* One thread (the controller), while the run goes on: frees the chunks dropped
 * earlier that every owner has since passed a quiescent point for, then drops each
 * full chunk whose entries were all delivered exactly once (accepted, read once,
 * intact, not late, never retried), counting them in settled. Their outcomes stay
 * counted; their entries are gone from ledger_each, so what needs every entry
 * (the fill's bytes, the ladder's rungs, a profile's stages) must not compact.
 * A reader that found an entry before its chunk was dropped may mark it after:
 * what it marked is kept (in a revived entry) when the chunk is freed, so once
 * every owner stopped, one more call makes the counts final. Returns the entries
 * dropped. */
uint64_t ledger_compact(struct ledger *l);
/* The compacting thread: the entries held in full (every entry added, less those
 * compacted, plus those revived). */
uint64_t ledger_held(const struct ledger *l);

/* The server's queue, read per message (a message id from its X-Mailsoak-Id and
 * its recipient count): clear the previous reading, then mark each message found.
 * ledger_mark_queued returns how many of its entries are still owed. */
void ledger_queued_clear(struct ledger *l);
unsigned ledger_mark_queued(struct ledger *l, uint64_t seq, unsigned nrcpt);
/* Only recipient i of message seq (the queue says which recipients it still holds):
 * 1 if that entry is owed, 0 if not, -1 if the message has no such recipient. */
int ledger_mark_queued_rcpt(struct ledger *l, uint64_t seq, unsigned i);

/* After every thread stopped (proof_pass and swept set): the outcome of an entry,
 * and the reason when it is pending. */
enum outcome ledger_entry_outcome(const struct ledger *l, const struct ledger_entry *e, enum pending_reason *why);
void ledger_outcome(const struct ledger *l, struct ledger_outcome *o);
/* Every entry in order, with its seq (for the CSV and the lost examples). */
void ledger_each(const struct ledger *l, void (*fn)(void *arg, uint64_t seq, const struct ledger_entry *e),
                 void *arg);
/* The id in the message's X-Mailsoak-Id header: the seq of its first recipient. */
static inline uint64_t ledger_msg_seq(uint64_t seq, const struct ledger_entry *e)
{
    return seq - (atomic_load_explicit(&e->state, memory_order_relaxed) >> LS_RCPT_SHIFT);
}

#endif
