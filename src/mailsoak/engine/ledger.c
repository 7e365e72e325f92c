/* ledger: the bookkeeping that turns "sent" and "read" into delivered, lost,
 * duplicated, corrupted and pending. The per-user owed counter is adjusted by
 * whichever of sender (accept) and reader (first read) comes second, so a message
 * read before its 250 was processed is never counted as owed. The outcome rule
 * lives here too, so the counts, the examples and the CSV cannot disagree. */
#include "engine/ledger.h"

#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

/* A chunk of entries, or of id offsets: mapped, so a compacted one gives its pages back. */
#define CHUNK_BYTES (LEDGER_CHUNK * sizeof(struct ledger_entry))
#define OFF_BYTES (LEDGER_CHUNK * sizeof(uint32_t))

struct ledger_retired {
    struct ledger_entry *chunk;
    uint64_t seq0;                      /* its first entry */
    struct ledger_qids qids;
    uint64_t *quiet;                    /* each owner's quiescent count when it was dropped */
};

struct ledger_revived {
    uint64_t seq;
    struct ledger_entry e;
};

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
    pthread_mutex_init(&l->revive_lock, NULL);
    return 0;
}

static void qids_free(struct ledger_qids *q)
{
    xpages_free(q->off, OFF_BYTES);
    free(q->text);
    memset(q, 0, sizeof *q);
}

void ledger_free(struct ledger *l)
{
    for (unsigned s = 0; l->shards && s < l->nshards; s++) {
        for (unsigned c = 0; c < LEDGER_MAX_CHUNKS; c++) {
            xpages_free(atomic_load_explicit(&l->shards[s].chunks[c], memory_order_relaxed), CHUNK_BYTES);
            qids_free(&l->shards[s].qids[c]);
        }
        free(l->shards[s].notes);
    }
    for (size_t i = 0; i < l->nretired; i++) {
        xpages_free(l->retired[i].chunk, CHUNK_BYTES);
        qids_free(&l->retired[i].qids);
        free(l->retired[i].quiet);
    }
    free(l->retired);
    for (size_t i = 0; i < l->nrevived; i++)
        free(l->revived[i]);
    free(l->revived);
    if (l->shards)
        pthread_mutex_destroy(&l->revive_lock);
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
        chunk = xpages(CHUNK_BYTES);     /* zeroed */
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

static int split(const struct ledger *l, uint64_t seq, uint64_t *idx)
{
    *idx = seq & ((1ull << LEDGER_SEQ_SHIFT) - 1);
    return seq >> LEDGER_SEQ_SHIFT < l->nshards && *idx >> LEDGER_CHUNK_BITS < LEDGER_MAX_CHUNKS ? (int)(seq >> LEDGER_SEQ_SHIFT) : -1;
}

/* Under revive_lock: the index of the first revived entry at or after seq. */
static size_t revived_at(const struct ledger *l, uint64_t seq)
{
    size_t lo = 0, hi = l->nrevived;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->revived[mid]->seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The revived entry of seq, or NULL. */
static struct ledger_entry *revived_get(struct ledger *l, uint64_t seq)
{
    pthread_mutex_lock(&l->revive_lock);
    size_t i = revived_at(l, seq);
    struct ledger_entry *e = i < l->nrevived && l->revived[i]->seq == seq ? &l->revived[i]->e : NULL;
    pthread_mutex_unlock(&l->revive_lock);
    return e;
}

/* Whether seq is an entry of a compacted chunk. */
static int compacted(const struct ledger *l, uint64_t seq)
{
    uint64_t idx;
    int s = split(l, seq, &idx);
    return s >= 0 && idx < atomic_load_explicit(&l->shards[s].n, memory_order_acquire) &&
           atomic_load_explicit(&l->shards[s].compacted[idx >> LEDGER_CHUNK_BITS], memory_order_acquire);
}

struct ledger_entry *ledger_get(const struct ledger *l, uint64_t seq)
{
    uint64_t idx;
    int shard = split(l, seq, &idx);
    if (shard < 0)
        return NULL;
    struct ledger_shard *s = &l->shards[shard];
    if (idx >= atomic_load_explicit(&s->n, memory_order_acquire))
        return NULL;
    struct ledger_entry *chunk = atomic_load_explicit(&s->chunks[idx >> LEDGER_CHUNK_BITS], memory_order_acquire);
    if (chunk)
        return &chunk[idx & (LEDGER_CHUNK - 1)];
    /* compacted (the flag is set before the pointer is cleared): only a revived entry is left */
    return atomic_load_explicit(&s->compacted[idx >> LEDGER_CHUNK_BITS], memory_order_acquire)
               ? revived_get((struct ledger *)l, seq) : NULL;
}

/* Revives entry seq of a compacted chunk for a reader in user's mailbox: delivered
 * once already, its recipient index kept. Returns the entry revived earlier if any. */
static struct ledger_entry *revive(struct ledger *l, uint64_t seq, unsigned rcpt, uint32_t user)
{
    pthread_mutex_lock(&l->revive_lock);
    size_t i = revived_at(l, seq);
    struct ledger_entry *e;
    if (i < l->nrevived && l->revived[i]->seq == seq) {
        e = &l->revived[i]->e;
    } else {
        struct ledger_revived *v = xcalloc(1, sizeof *v);
        v->seq = seq;
        v->e.user = user;
        atomic_store_explicit(&v->e.state, (uint32_t)rcpt << LS_RCPT_SHIFT | LS_ACCEPTED | LS_SEEN | LS_REVIVED | 1u,
                              memory_order_relaxed);
        l->revived = grow(l->revived, &l->caprevived, l->nrevived, 1, sizeof *l->revived);
        memmove(l->revived + i + 1, l->revived + i, (l->nrevived - i) * sizeof *l->revived);
        l->revived[i] = v;
        l->nrevived++;
        e = &v->e;
    }
    pthread_mutex_unlock(&l->revive_lock);
    return e;
}

struct ledger_entry *ledger_hold(struct ledger *l, uint64_t seq, unsigned rcpt, uint32_t user)
{
    struct ledger_entry *e = ledger_get(l, seq);
    if (e || !compacted(l, seq))
        return e;
    /* its chunk was compacted after this reader found it: the reader has a copy of
     * a message delivered once already */
    return revive(l, seq, rcpt, user);
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
    uint64_t idx;
    int shard = split(l, seq, &idx);
    if (!n || shard < 0)
        return;
    struct ledger_qids *q = &l->shards[shard].qids[idx >> LEDGER_CHUNK_BITS];
    uint32_t off = q->last;
    if (!off || strncmp(q->text + off, qid, n) || q->text[off + n]) {
        if (q->len + n + 1 > UINT32_MAX)
            return;                  /* 4 GiB of ids: the rest go without */
        if (!q->len)
            q->len = 1;              /* offset 0 means none */
        if (q->len + n + 1 > q->cap) {
            q->cap = q->cap ? 2 * q->cap : 4096;
            while (q->len + n + 1 > q->cap)
                q->cap *= 2;
            q->text = xrealloc(q->text, q->cap);
        }
        off = (uint32_t)q->len;
        memcpy(q->text + off, qid, n);
        q->text[off + n] = 0;
        q->len += n + 1;
        q->last = off;
    }
    if (!q->off)
        q->off = xpages(OFF_BYTES);
    q->off[idx & (LEDGER_CHUNK - 1)] = off;
}

const char *ledger_qid(const struct ledger *l, uint64_t seq)
{
    uint64_t idx;
    int shard = split(l, seq, &idx);
    if (shard < 0)
        return "";
    const struct ledger_qids *q = &l->shards[shard].qids[idx >> LEDGER_CHUNK_BITS];
    uint32_t off = q->off ? q->off[idx & (LEDGER_CHUNK - 1)] : 0;
    return off ? q->text + off : "";
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
    struct ledger_entry *e = ledger_get(l, ledger_seq(shard, idx));
    if (e)                           /* a retried message keeps its entry: its tries are shown */
        atomic_fetch_or_explicit(&e->state, LS_NOTED, memory_order_relaxed);
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

struct ledger_entry *ledger_find_seq(struct ledger *l, uint64_t seq, unsigned nrcpt, uint32_t user, uint64_t *eseq)
{
    uint64_t idx = seq & ((1ull << LEDGER_SEQ_SHIFT) - 1);
    if (seq >> LEDGER_SEQ_SHIFT >= l->nshards || nrcpt > (1ull << LEDGER_SEQ_SHIFT) - idx)
        return NULL;                 /* the range would leave its shard (or wrap) */
    unsigned fresh = nrcpt;          /* the first compacted entry not revived yet */
    for (unsigned i = 0; i < nrcpt; i++) {
        struct ledger_entry *e = ledger_get(l, seq + i);
        if (e && e->user == user) {
            if (eseq)
                *eseq = seq + i;
            return e;
        }
        if (!e && fresh == nrcpt && compacted(l, seq + i))
            fresh = i;
    }
    if (fresh == nrcpt)
        return NULL;
    /* A message settled and compacted, found again: a duplicate. Its recipients'
     * mailboxes went with the chunk, so the copy counts as the next recipient's
     * duplicate, whatever mailbox it is in. */
    if (eseq)
        *eseq = seq + fresh;
    return revive(l, seq + fresh, fresh, user);
}

struct ledger_entry *ledger_find(struct ledger *l, uint64_t seq, unsigned nrcpt, uint32_t user)
{
    return ledger_find_seq(l, seq, nrcpt, user, NULL);
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

void ledger_each(const struct ledger *l, void (*fn)(void *arg, uint64_t seq, const struct ledger_entry *e), void *arg)
{
    struct ledger *w = (struct ledger *)l;  /* the lock only */
    for (unsigned s = 0; s < l->nshards; s++) {
        const struct ledger_shard *sh = &l->shards[s];
        uint64_t n = atomic_load_explicit(&sh->n, memory_order_acquire);
        for (uint64_t c = 0; c << LEDGER_CHUNK_BITS < n; c++) {
            uint64_t from = c << LEDGER_CHUNK_BITS, to = from + LEDGER_CHUNK < n ? from + LEDGER_CHUNK : n;
            struct ledger_entry *chunk = atomic_load_explicit(&sh->chunks[c], memory_order_acquire);
            if (chunk) {
                for (uint64_t i = from; i < to; i++)
                    fn(arg, ledger_seq(s, i), &chunk[i - from]);
                continue;
            }
            /* compacted: only its revived entries are left. The lock is not held
             * around fn (a revived entry is never freed before the ledger). */
            for (uint64_t seq = ledger_seq(s, from);;) {
                pthread_mutex_lock(&w->revive_lock);
                size_t k = revived_at(l, seq);
                struct ledger_revived *v = k < l->nrevived && l->revived[k]->seq < ledger_seq(s, to) ? l->revived[k] : NULL;
                pthread_mutex_unlock(&w->revive_lock);
                if (!v)
                    break;
                fn(arg, v->seq, &v->e);
                seq = v->seq + 1;
            }
        }
    }
}

uint64_t ledger_held(const struct ledger *l)
{
    uint64_t n = 0;
    for (unsigned s = 0; s < l->nshards; s++)
        n += atomic_load_explicit(&l->shards[s].n, memory_order_acquire);
    pthread_mutex_lock((pthread_mutex_t *)&l->revive_lock);
    n += l->nrevived;
    pthread_mutex_unlock((pthread_mutex_t *)&l->revive_lock);
    return n - l->settled;
}

void ledger_queued_clear(struct ledger *l)
{
    for (unsigned s = 0; s < l->nshards; s++) {
        uint64_t n = atomic_load_explicit(&l->shards[s].n, memory_order_acquire);
        for (uint64_t i = 0; i < n; i++) {
            struct ledger_entry *e = ledger_get(l, ledger_seq(s, i));
            if (e)
                atomic_fetch_and_explicit(&e->state, ~LS_QUEUED, memory_order_relaxed);
            else                     /* a compacted chunk without revived entries */
                i |= LEDGER_CHUNK - 1;
        }
    }
}

void ledger_quiescent(struct ledger *l, unsigned shard)
{
    atomic_fetch_add_explicit(&l->shards[shard].quiet, 1, memory_order_release);
}

void ledger_offline(struct ledger *l, unsigned shard)
{
    atomic_store_explicit(&l->shards[shard].quiet, LEDGER_OFFLINE, memory_order_release);
}

/* Every owner passed a quiescent point since r was dropped (or stopped): no
 * thread can hold a pointer into it. */
static int retired_free(const struct ledger *l, const struct ledger_retired *r)
{
    for (unsigned s = 0; s < l->nshards; s++) {
        uint64_t q = atomic_load_explicit(&l->shards[s].quiet, memory_order_acquire);
        if (q == r->quiet[s] && q != LEDGER_OFFLINE)
            return 0;
    }
    return 1;
}

/* Whether every entry of a full chunk was delivered exactly once and nothing more
 * can be shown of it: not late (an example), not retried (its tries are shown). */
static int chunk_settled(const struct ledger_entry *chunk)
{
    for (size_t i = 0; i < LEDGER_CHUNK; i++) {
        uint32_t st = atomic_load_explicit(&chunk[i].state, memory_order_acquire);
        if ((st & (LS_ACCEPTED | LS_CORRUPT | LS_LATE | LS_NOTED | LS_REVIVED | LS_READS)) != (LS_ACCEPTED | 1u))
            return 0;
    }
    return 1;
}

/* A reader that found an entry before its chunk was dropped may have marked it
 * since (read it again, found it corrupt): once no thread can hold the chunk, what
 * it marked is kept, in the entry revived for it (made now, whole, if none was). */
static void retired_merge(struct ledger *l, const struct ledger_retired *r)
{
    const uint32_t marks = LS_CORRUPT | LS_LATE;
    for (size_t i = 0; i < LEDGER_CHUNK; i++) {
        const struct ledger_entry *old = &r->chunk[i];
        uint32_t st = atomic_load_explicit(&old->state, memory_order_acquire);
        if ((st & LS_READS) == 1 && !(st & marks))
            continue;
        pthread_mutex_lock(&l->revive_lock);
        size_t k = revived_at(l, r->seq0 + i);
        if (k < l->nrevived && l->revived[k]->seq == r->seq0 + i) {
            struct ledger_entry *e = &l->revived[k]->e;
            uint32_t cur = atomic_load_explicit(&e->state, memory_order_relaxed), nw;
            do {                     /* its reads beyond the one compacted, and its marks */
                uint32_t reads = (cur & LS_READS) + (st & LS_READS) - 1;
                nw = (cur & ~LS_READS) | (reads > LS_READS ? LS_READS : reads) | (st & marks);
            } while (!atomic_compare_exchange_weak_explicit(&e->state, &cur, nw, memory_order_acq_rel,
                                                            memory_order_relaxed));
        } else {
            struct ledger_revived *v = xcalloc(1, sizeof *v);
            v->seq = r->seq0 + i;
            v->e.digest8 = old->digest8;
            v->e.user = old->user;
            v->e.size = old->size;
            v->e.accepted_ms = old->accepted_ms;
            atomic_store_explicit(&v->e.state, st, memory_order_relaxed);
            l->revived = grow(l->revived, &l->caprevived, l->nrevived, 1, sizeof *l->revived);
            memmove(l->revived + k + 1, l->revived + k, (l->nrevived - k) * sizeof *l->revived);
            l->revived[k] = v;
            l->nrevived++;
        }
        pthread_mutex_unlock(&l->revive_lock);
    }
}

uint64_t ledger_compact(struct ledger *l)
{
    uint64_t dropped = 0;
    for (unsigned s = 0; s < l->nshards; s++) {
        struct ledger_shard *sh = &l->shards[s];
        uint64_t full = atomic_load_explicit(&sh->n, memory_order_acquire) >> LEDGER_CHUNK_BITS;
        for (uint64_t c = 0; c < full; c++) {
            struct ledger_entry *chunk = atomic_load_explicit(&sh->chunks[c], memory_order_acquire);
            if (!chunk || !chunk_settled(chunk))
                continue;
            /* the acquire loads above saw every entry accepted: the owner wrote the
             * chunk's ids before, and writes them no more */
            l->retired = grow(l->retired, &l->capretired, l->nretired, 1, sizeof *l->retired);
            struct ledger_retired *r = &l->retired[l->nretired++];
            r->chunk = chunk;
            r->seq0 = ledger_seq(s, c << LEDGER_CHUNK_BITS);
            r->qids = sh->qids[c];
            memset(&sh->qids[c], 0, sizeof sh->qids[c]);
            r->quiet = xcalloc(l->nshards, sizeof *r->quiet);
            atomic_store_explicit(&sh->compacted[c], 1, memory_order_release);
            atomic_store_explicit(&sh->chunks[c], NULL, memory_order_release);
            /* read after the pointer is gone: an owner passing its next quiescent
             * point after this cannot hold the chunk */
            for (unsigned o = 0; o < l->nshards; o++)
                r->quiet[o] = atomic_load_explicit(&l->shards[o].quiet, memory_order_acquire);
            l->settled += LEDGER_CHUNK;
            l->settled_chunks++;
            dropped += LEDGER_CHUNK;
        }
    }
    /* then what can go: dropped earlier, or now when every owner stopped */
    size_t k = 0;
    for (size_t i = 0; i < l->nretired; i++) {
        struct ledger_retired *r = &l->retired[i];
        if (retired_free(l, r)) {
            retired_merge(l, r);
            xpages_free(r->chunk, CHUNK_BYTES);
            qids_free(&r->qids);
            free(r->quiet);
        } else {
            l->retired[k++] = *r;
        }
    }
    l->nretired = k;
    return dropped;
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
    /* The compacted entries: each delivered exactly once, read once. One revived
     * since (read again) was tallied above in its own right. */
    pthread_mutex_lock((pthread_mutex_t *)&l->revive_lock);
    uint64_t settled = l->settled - l->nrevived;
    pthread_mutex_unlock((pthread_mutex_t *)&l->revive_lock);
    o->accepted += settled;
    o->delivered += settled;
    o->reads += settled;
}
