/* ledger: every message of the run, from the moment its DATA is sent until the end.
 * Senders append to their own worker's array; readers of any worker mark entries
 * with atomic operations. No lock anywhere: 24 bytes per message. */
#ifndef MS_LEDGER_H
#define MS_LEDGER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define LEDGER_CHUNK_BITS 16
#define LEDGER_CHUNK (1u << LEDGER_CHUNK_BITS)
#define LEDGER_MAX_CHUNKS 2048          /* 134M messages per worker */
#define LEDGER_SEQ_SHIFT 40             /* seq = worker << 40 | local index */

/* state: low byte = times read (saturating at 255), then flags */
#define LS_ACCEPTED  0x100u
#define LS_REJECTED  0x200u
#define LS_CORRUPT   0x400u
#define LS_READS     0xffu

struct ledger_entry {
    uint64_t digest8;                   /* first 8 bytes of the body's SHA-256 */
    uint32_t user;
    uint32_t size;
    uint32_t accepted_ms;               /* since the run's start */
    _Atomic uint32_t state;
};

struct ledger_shard {
    _Atomic(struct ledger_entry *) chunks[LEDGER_MAX_CHUNKS];
    _Atomic uint64_t n;                 /* entries published */
};

struct ledger {
    unsigned nshards;
    struct ledger_shard *shards;
    size_t nusers;
    _Atomic int32_t *owed;              /* per user: accepted, not yet read */
    _Atomic int64_t owed_total;
    _Atomic uint8_t *swept;             /* per user: a final sweep emptied it */
};

struct ledger_outcome {
    uint64_t accepted, delivered, duplicated, corrupted, lost, pending;
    uint64_t rejected, unconfirmed;     /* refused or unanswered, yet found in a mailbox */
    uint64_t reads;                     /* retrievals of this run's messages */
};

int ledger_init(struct ledger *l, unsigned nshards, size_t nusers);
void ledger_free(struct ledger *l);

static inline uint64_t ledger_seq(unsigned shard, uint64_t idx)
{
    return (uint64_t)shard << LEDGER_SEQ_SHIFT | idx;
}

/* Owner thread of the shard only. Returns the entry's local index. */
uint64_t ledger_add(struct ledger *l, unsigned shard, uint32_t user, uint32_t size, uint64_t digest8);
struct ledger_entry *ledger_get(struct ledger *l, uint64_t seq);
/* Owner: the server answered the end of data. */
void ledger_accept(struct ledger *l, struct ledger_entry *e, uint32_t now_ms);
void ledger_reject(struct ledger_entry *e);
/* Reader, once a deletion is committed: returns the reads before this one. */
unsigned ledger_read(struct ledger *l, struct ledger_entry *e);
void ledger_corrupt(struct ledger_entry *e);

/* After every thread stopped: the outcome of each message. */
void ledger_outcome(const struct ledger *l, struct ledger_outcome *o);

#endif
