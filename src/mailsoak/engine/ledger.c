/* ledger: the bookkeeping that turns "sent" and "read" into delivered, lost,
 * duplicated and corrupted. The per-user owed counter is adjusted by whichever of
 * sender (accept) and reader (first read) comes second, so a message read before
 * its 250 was processed is never counted as owed. */
#include "engine/ledger.h"

#include <stdlib.h>
#include <string.h>

int ledger_init(struct ledger *l, unsigned nshards, size_t nusers)
{
    memset(l, 0, sizeof *l);
    l->nshards = nshards;
    l->nusers = nusers;
    l->shards = calloc(nshards, sizeof *l->shards);
    l->owed = calloc(nusers, sizeof *l->owed);
    l->swept = calloc(nusers, sizeof *l->swept);
    return l->shards && l->owed && l->swept ? 0 : -1;
}

void ledger_free(struct ledger *l)
{
    for (unsigned s = 0; l->shards && s < l->nshards; s++)
        for (unsigned c = 0; c < LEDGER_MAX_CHUNKS; c++)
            free(atomic_load_explicit(&l->shards[s].chunks[c], memory_order_relaxed));
    free(l->shards);
    free((void *)l->owed);
    free((void *)l->swept);
    memset(l, 0, sizeof *l);
}

uint64_t ledger_add(struct ledger *l, unsigned shard, uint32_t user, uint32_t size, uint64_t digest8)
{
    struct ledger_shard *s = &l->shards[shard];
    uint64_t idx = atomic_load_explicit(&s->n, memory_order_relaxed);
    uint64_t c = idx >> LEDGER_CHUNK_BITS;
    if (c >= LEDGER_MAX_CHUNKS)
        abort();                     /* 134M messages from one thread: out of design range */
    struct ledger_entry *chunk = atomic_load_explicit(&s->chunks[c], memory_order_relaxed);
    if (!chunk) {
        chunk = calloc(LEDGER_CHUNK, sizeof *chunk);
        if (!chunk)
            abort();
        atomic_store_explicit(&s->chunks[c], chunk, memory_order_release);
    }
    struct ledger_entry *e = &chunk[idx & (LEDGER_CHUNK - 1)];
    e->digest8 = digest8;
    e->user = user;
    e->size = size;
    atomic_store_explicit(&e->state, 0, memory_order_relaxed);
    /* Publishing n with release makes the entry's fields visible to readers that
     * find its id in a mailbox. */
    atomic_store_explicit(&s->n, idx + 1, memory_order_release);
    return idx;
}

struct ledger_entry *ledger_get(struct ledger *l, uint64_t seq)
{
    uint64_t shard = seq >> LEDGER_SEQ_SHIFT, idx = seq & ((1ull << LEDGER_SEQ_SHIFT) - 1);
    if (shard >= l->nshards)
        return NULL;
    struct ledger_shard *s = &l->shards[shard];
    if (idx >= atomic_load_explicit(&s->n, memory_order_acquire))
        return NULL;
    struct ledger_entry *chunk = atomic_load_explicit(&s->chunks[idx >> LEDGER_CHUNK_BITS], memory_order_acquire);
    return chunk ? &chunk[idx & (LEDGER_CHUNK - 1)] : NULL;
}

void ledger_accept(struct ledger *l, struct ledger_entry *e, uint32_t now_ms)
{
    e->accepted_ms = now_ms;
    uint32_t old = atomic_fetch_or_explicit(&e->state, LS_ACCEPTED, memory_order_acq_rel);
    if (!(old & LS_READS)) {
        atomic_fetch_add_explicit(&l->owed[e->user], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&l->owed_total, 1, memory_order_relaxed);
    }
}

void ledger_reject(struct ledger_entry *e)
{
    atomic_fetch_or_explicit(&e->state, LS_REJECTED, memory_order_relaxed);
}

unsigned ledger_read(struct ledger *l, struct ledger_entry *e)
{
    uint32_t old = atomic_load_explicit(&e->state, memory_order_relaxed), nw;
    do {
        nw = (old & LS_READS) == LS_READS ? old : old + 1;
    } while (!atomic_compare_exchange_weak_explicit(&e->state, &old, nw, memory_order_acq_rel,
                                                    memory_order_relaxed));
    if ((old & LS_ACCEPTED) && !(old & LS_READS)) {
        atomic_fetch_sub_explicit(&l->owed[e->user], 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&l->owed_total, 1, memory_order_relaxed);
    }
    return old & LS_READS;
}

void ledger_corrupt(struct ledger_entry *e)
{
    atomic_fetch_or_explicit(&e->state, LS_CORRUPT, memory_order_relaxed);
}

void ledger_outcome(const struct ledger *l, struct ledger_outcome *o)
{
    memset(o, 0, sizeof *o);
    for (unsigned s = 0; s < l->nshards; s++) {
        uint64_t n = atomic_load(&l->shards[s].n);
        for (uint64_t i = 0; i < n; i++) {
            struct ledger_entry *chunk = atomic_load(&l->shards[s].chunks[i >> LEDGER_CHUNK_BITS]);
            const struct ledger_entry *e = &chunk[i & (LEDGER_CHUNK - 1)];
            uint32_t st = atomic_load(&e->state), reads = st & LS_READS;
            o->reads += reads;
            if (!(st & LS_ACCEPTED)) {
                if (reads)
                    o->unconfirmed++;
                else if (st & LS_REJECTED)
                    o->rejected++;
                continue;
            }
            o->accepted++;
            if (st & LS_CORRUPT)
                o->corrupted++;
            else if (reads > 1)
                o->duplicated++;
            else if (reads == 1)
                o->delivered++;
            else if (atomic_load(&l->swept[e->user]))
                o->lost++;
            else
                o->pending++;
        }
    }
}
