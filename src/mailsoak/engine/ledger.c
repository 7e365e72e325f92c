/* ledger: the bookkeeping that turns "sent" and "read" into delivered, lost,
 * duplicated, corrupted and pending. The per-user owed counter is adjusted by
 * whichever of sender (accept) and reader (first read) comes second, so a message
 * read before its 250 was processed is never counted as owed. The outcome rule
 * lives here too, so the counts, the examples and the CSV cannot disagree. */
#include "engine/ledger.h"

#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

int ledger_init(struct ledger *l, unsigned nshards, size_t nusers)
{
    memset(l, 0, sizeof *l);
    l->nshards = nshards;
    l->nusers = nusers;
    l->shards = xcalloc(nshards, sizeof *l->shards);
    l->owed = xcalloc(nusers, sizeof *l->owed);
    l->mailed = xcalloc(nusers, sizeof *l->mailed);
    l->visit_pass = xcalloc(nusers, sizeof *l->visit_pass);
    l->visit_ms = xcalloc(nusers, sizeof *l->visit_ms);
    return 0;
}

void ledger_free(struct ledger *l)
{
    for (unsigned s = 0; l->shards && s < l->nshards; s++) {
        for (unsigned c = 0; c < LEDGER_MAX_CHUNKS; c++) {
            free(atomic_load_explicit(&l->shards[s].chunks[c], memory_order_relaxed));
            free(l->shards[s].qid_off[c]);
        }
        free(l->shards[s].qids);
        free(l->shards[s].notes);
    }
    free(l->shards);
    free((void *)l->owed);
    free((void *)l->mailed);
    free((void *)l->visit_pass);
    free((void *)l->visit_ms);
    memset(l, 0, sizeof *l);
}

const char *const pending_reason_names[PR_COUNT] = { "queued", "peeked", "unswept", "unsettled" };
const char *const outcome_names[OUTCOME_NONE + 1] = {
    "delivered", "duplicated", "corrupted", "lost", "pending", "rejected", "unconfirmed", "deferred", "none",
};

uint64_t ledger_add(struct ledger *l, unsigned shard, uint32_t user, uint32_t size, uint64_t digest8, unsigned rcpt)
{
    struct ledger_shard *s = &l->shards[shard];
    uint64_t idx = atomic_load_explicit(&s->n, memory_order_relaxed);
    uint64_t c = idx >> LEDGER_CHUNK_BITS;
    if (c >= LEDGER_MAX_CHUNKS)
        abort();                     /* 134M messages from one thread: out of design range */
    struct ledger_entry *chunk = atomic_load_explicit(&s->chunks[c], memory_order_relaxed);
    if (!chunk) {
        chunk = xcalloc(LEDGER_CHUNK, sizeof *chunk);
        atomic_store_explicit(&s->chunks[c], chunk, memory_order_release);
    }
    struct ledger_entry *e = &chunk[idx & (LEDGER_CHUNK - 1)];
    e->digest8 = digest8;
    e->user = user;
    e->size = size;
    atomic_store_explicit(&e->state, (uint32_t)rcpt << LS_RCPT_SHIFT, memory_order_relaxed);
    /* Publishing n with release makes the entry's fields visible to readers that
     * find its id in a mailbox. */
    atomic_store_explicit(&s->n, idx + 1, memory_order_release);
    return idx;
}

struct ledger_entry *ledger_get(const struct ledger *l, uint64_t seq)
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
    /* read first: once set, the byte's cache line stays shared among the senders */
    if (!atomic_load_explicit(&l->mailed[e->user], memory_order_relaxed))
        atomic_store_explicit(&l->mailed[e->user], 1, memory_order_relaxed);
    if (!(old & LS_READS)) {
        atomic_fetch_add_explicit(&l->owed[e->user], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&l->owed_total, 1, memory_order_relaxed);
    }
}

void ledger_set_qid(struct ledger *l, uint64_t seq, const char *qid, size_t n)
{
    uint64_t shard = seq >> LEDGER_SEQ_SHIFT, idx = seq & ((1ull << LEDGER_SEQ_SHIFT) - 1);
    if (!n || shard >= l->nshards || idx >> LEDGER_CHUNK_BITS >= LEDGER_MAX_CHUNKS)
        return;
    struct ledger_shard *s = &l->shards[shard];
    uint32_t off = s->qid_last;
    if (!off || strncmp(s->qids + off, qid, n) || s->qids[off + n]) {
        if (s->qids_len + n + 1 > UINT32_MAX)
            return;                  /* 4 GiB of ids: the rest go without */
        if (!s->qids_len)
            s->qids_len = 1;         /* offset 0 means none */
        if (s->qids_len + n + 1 > s->qids_cap) {
            s->qids_cap = s->qids_cap ? 2 * s->qids_cap : 4096;
            while (s->qids_len + n + 1 > s->qids_cap)
                s->qids_cap *= 2;
            s->qids = xrealloc(s->qids, s->qids_cap);
        }
        off = (uint32_t)s->qids_len;
        memcpy(s->qids + off, qid, n);
        s->qids[off + n] = 0;
        s->qids_len += n + 1;
        s->qid_last = off;
    }
    uint32_t **chunk = &s->qid_off[idx >> LEDGER_CHUNK_BITS];
    if (!*chunk)
        *chunk = xcalloc(LEDGER_CHUNK, sizeof **chunk);
    (*chunk)[idx & (LEDGER_CHUNK - 1)] = off;
}

const char *ledger_qid(const struct ledger *l, uint64_t seq)
{
    uint64_t shard = seq >> LEDGER_SEQ_SHIFT, idx = seq & ((1ull << LEDGER_SEQ_SHIFT) - 1);
    if (shard >= l->nshards || idx >> LEDGER_CHUNK_BITS >= LEDGER_MAX_CHUNKS)
        return "";
    const struct ledger_shard *s = &l->shards[shard];
    const uint32_t *chunk = s->qid_off[idx >> LEDGER_CHUNK_BITS];
    uint32_t off = chunk ? chunk[idx & (LEDGER_CHUNK - 1)] : 0;
    return off ? s->qids + off : "";
}

void ledger_reject(struct ledger_entry *e)
{
    atomic_fetch_or_explicit(&e->state, LS_REJECTED, memory_order_relaxed);
}

void ledger_defer(struct ledger_entry *e)
{
    atomic_fetch_or_explicit(&e->state, LS_DEFERRED, memory_order_relaxed);
}

void ledger_note(struct ledger *l, unsigned shard, uint64_t idx, uint32_t tries, uint32_t first_ms)
{
    struct ledger_shard *s = &l->shards[shard];
    s->notes = grow(s->notes, &s->capnotes, s->nnotes, 1, sizeof *s->notes);
    s->notes[s->nnotes++] = (struct ledger_note){ idx, tries, first_ms };
}

const struct ledger_note *ledger_note_of(const struct ledger *l, uint64_t seq)
{
    uint64_t shard = seq >> LEDGER_SEQ_SHIFT, idx = seq & ((1ull << LEDGER_SEQ_SHIFT) - 1);
    if (shard >= l->nshards)
        return NULL;
    const struct ledger_shard *s = &l->shards[shard];
    size_t lo = 0, hi = s->nnotes;
    while (lo < hi) {                /* notes are in index order */
        size_t mid = lo + (hi - lo) / 2;
        if (s->notes[mid].idx < idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->nnotes && s->notes[lo].idx == idx ? &s->notes[lo] : NULL;
}

unsigned ledger_read(struct ledger *l, struct ledger_entry *e, int late)
{
    uint32_t old = atomic_load_explicit(&e->state, memory_order_relaxed), nw;
    do {
        nw = (old & LS_READS) == LS_READS ? old : old + 1;
        if (late && !(old & LS_READS))
            nw |= LS_LATE;
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

struct ledger_entry *ledger_find(struct ledger *l, uint64_t seq, unsigned nrcpt, uint32_t user)
{
    uint64_t idx = seq & ((1ull << LEDGER_SEQ_SHIFT) - 1);
    if (seq >> LEDGER_SEQ_SHIFT >= l->nshards || nrcpt > (1ull << LEDGER_SEQ_SHIFT) - idx)
        return NULL;                 /* the range would leave its shard (or wrap) */
    for (unsigned i = 0; i < nrcpt; i++) {
        struct ledger_entry *e = ledger_get(l, seq + i);
        if (e && e->user == user)
            return e;
    }
    return NULL;
}

int ledger_seen(struct ledger_entry *e)
{
    return !(atomic_fetch_or_explicit(&e->state, LS_SEEN, memory_order_relaxed) & LS_SEEN);
}

void ledger_visited(struct ledger *l, uint32_t user, uint32_t pass, uint32_t now_ms)
{
    atomic_store_explicit(&l->visit_ms[user], now_ms ? now_ms : 1, memory_order_relaxed);
    if (pass)
        atomic_store_explicit(&l->visit_pass[user], pass, memory_order_release);
}

static struct ledger_entry *entry_at(const struct ledger *l, unsigned s, uint64_t i)
{
    struct ledger_entry *chunk = atomic_load_explicit(&l->shards[s].chunks[i >> LEDGER_CHUNK_BITS], memory_order_acquire);
    return &chunk[i & (LEDGER_CHUNK - 1)];
}

void ledger_each(const struct ledger *l, void (*fn)(void *arg, uint64_t seq, const struct ledger_entry *e), void *arg)
{
    for (unsigned s = 0; s < l->nshards; s++) {
        uint64_t n = atomic_load_explicit(&l->shards[s].n, memory_order_acquire);
        for (uint64_t i = 0; i < n; i++)
            fn(arg, ledger_seq(s, i), entry_at(l, s, i));
    }
}

void ledger_queued_clear(struct ledger *l)
{
    for (unsigned s = 0; s < l->nshards; s++) {
        uint64_t n = atomic_load_explicit(&l->shards[s].n, memory_order_acquire);
        for (uint64_t i = 0; i < n; i++)
            atomic_fetch_and_explicit(&entry_at(l, s, i)->state, ~LS_QUEUED, memory_order_relaxed);
    }
}

int ledger_mark_queued_rcpt(struct ledger *l, uint64_t seq, unsigned i)
{
    /* the id comes from a file on the server: only an entry that really is this
     * message's recipient i (its index says so) is marked */
    struct ledger_entry *e = ledger_get(l, seq + i);
    if (!e || i >= 256 || atomic_load_explicit(&e->state, memory_order_relaxed) >> LS_RCPT_SHIFT != i)
        return -1;
    uint32_t st = atomic_fetch_or_explicit(&e->state, LS_QUEUED, memory_order_relaxed);
    return (st & LS_ACCEPTED) && !(st & LS_READS);
}

unsigned ledger_mark_queued(struct ledger *l, uint64_t seq, unsigned nrcpt)
{
    unsigned owed = 0;
    for (unsigned i = 0; i < nrcpt; i++) {
        int r = ledger_mark_queued_rcpt(l, seq, i);
        if (r < 0)
            break;
        owed += (unsigned)r;
    }
    return owed;
}

enum outcome ledger_entry_outcome(const struct ledger *l, const struct ledger_entry *e, enum pending_reason *why)
{
    uint32_t st = atomic_load_explicit(&e->state, memory_order_acquire), reads = st & LS_READS;
    if (!(st & LS_ACCEPTED))
        return reads ? OUTCOME_UNCONFIRMED : st & LS_REJECTED ? OUTCOME_REJECTED : st & LS_DEFERRED ? OUTCOME_DEFERRED : OUTCOME_NONE;
    if (st & LS_CORRUPT)
        return OUTCOME_CORRUPTED;
    if (reads)
        return reads > 1 ? OUTCOME_DUPLICATED : OUTCOME_DELIVERED;
    /* Unread. Lost needs proof: its mailbox read in full in the pass that ran after
     * the server settled. Anything short of that is pending, with the reason. */
    if (st & LS_QUEUED)
        *why = PR_QUEUED;
    else if (st & LS_SEEN)
        *why = PR_PEEKED;
    else if (l->proof_pass && atomic_load_explicit(&l->visit_pass[e->user], memory_order_acquire) == l->proof_pass)
        return OUTCOME_LOST;
    else
        *why = l->proof_pass || !l->swept ? PR_UNSWEPT : PR_UNSETTLED;
    return OUTCOME_PENDING;
}

struct tally {
    const struct ledger *l;
    struct ledger_outcome *o;
};

static void tally_one(void *arg, uint64_t seq, const struct ledger_entry *e)
{
    struct tally *t = arg;
    struct ledger_outcome *o = t->o;
    enum pending_reason why = PR_UNSWEPT;
    uint32_t st = atomic_load_explicit(&e->state, memory_order_acquire);
    o->reads += st & LS_READS;
    enum outcome v = ledger_entry_outcome(t->l, e, &why);
    o->accepted += v <= OUTCOME_PENDING;
    switch (v) {
    case OUTCOME_DELIVERED: o->delivered++; break;
    case OUTCOME_DUPLICATED: o->duplicated++; break;
    case OUTCOME_CORRUPTED: o->corrupted++; break;
    case OUTCOME_LOST: o->lost++; break;
    case OUTCOME_PENDING: o->pending++; o->pending_by[why]++; break;
    case OUTCOME_REJECTED: o->rejected++; break;
    case OUTCOME_UNCONFIRMED: o->unconfirmed++; break;
    case OUTCOME_DEFERRED: o->deferred++; break;
    case OUTCOME_NONE: break;
    }
    const struct ledger_note *n =
        t->l->final && (v == OUTCOME_DELIVERED || v == OUTCOME_DUPLICATED) ? ledger_note_of(t->l, seq) : NULL;
    if (n) {
        uint32_t took = e->accepted_ms > n->first_ms ? e->accepted_ms - n->first_ms : 0;
        o->retried++;
        o->retried_tries += n->tries;
        if (n->tries > o->retried_max_tries)
            o->retried_max_tries = n->tries;
        if (took > o->retried_max_ms)
            o->retried_max_ms = took;
    }
    o->late += (v == OUTCOME_DELIVERED || v == OUTCOME_DUPLICATED) && (st & LS_LATE);

}

void ledger_outcome(const struct ledger *l, struct ledger_outcome *o)
{
    memset(o, 0, sizeof *o);
    struct tally t = { l, o };
    ledger_each(l, tally_one, &t);
}
