/* Unit tests of the ledger: every outcome (delivered, duplicated, corrupted, lost,
 * pending, rejected, unconfirmed), the reasons a message is pending rather than
 * lost, the queue's marks, the owed counters whichever of accept and read comes
 * first, concurrent readers on several threads (and a sender adding while they
 * read), ids that are forged, and compaction: what it drops, what it keeps, when
 * it frees, and a settled message found again. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine/ledger.h"

static struct ledger_entry *add(struct ledger *l, unsigned shard, uint32_t user)
{
    uint64_t idx = ledger_add(l, shard, user, 100, 0xabcdull, 0);
    return ledger_get(l, ledger_seq(shard, idx));
}

static void outcomes(void **st)
{
    struct ledger l;
    struct ledger_outcome o;
    assert_int_equal(ledger_init(&l, 2, 4), 0);
    struct ledger_entry *delivered = add(&l, 0, 0), *dup = add(&l, 0, 0), *corrupt = add(&l, 1, 1);
    struct ledger_entry *lost = add(&l, 1, 2), *pending = add(&l, 0, 3), *rejected = add(&l, 1, 3);
    struct ledger_entry *unconfirmed = add(&l, 0, 3);
    ledger_accept(&l, delivered, 10);
    ledger_accept(&l, dup, 11);
    ledger_accept(&l, corrupt, 12);
    ledger_accept(&l, lost, 13);
    ledger_accept(&l, pending, 14);
    ledger_reject(rejected);
    ledger_reject(unconfirmed);
    assert_int_equal(atomic_load(&l.owed_total), 5);
    assert_int_equal(ledger_read(&l, delivered, 0), 0);
    assert_int_equal(ledger_read(&l, dup, 0), 0);
    assert_int_equal(ledger_read(&l, dup, 0), 1);
    ledger_corrupt(corrupt);
    ledger_read(&l, corrupt, 0);
    ledger_read(&l, unconfirmed, 0);
    ledger_visited(&l, 2, 3, 500);              /* user 2 read in full in pass 3 ... */
    ledger_visited(&l, 3, 2, 400);              /* ... user 3 only in pass 2 */
    l.swept = 1;
    l.proof_pass = 3;                           /* pass 3 began after the server settled */
    assert_int_equal(atomic_load(&l.owed_total), 2);
    assert_int_equal(atomic_load(&l.owed[2]), 1);
    assert_int_equal(atomic_load(&l.owed[3]), 1);
    ledger_outcome(&l, &o);
    assert_int_equal(o.accepted, 5);
    assert_int_equal(o.delivered, 1);
    assert_int_equal(o.duplicated, 1);
    assert_int_equal(o.corrupted, 1);
    assert_int_equal(o.lost, 1);
    assert_int_equal(o.pending, 1);
    assert_int_equal(o.pending_by[PR_UNSWEPT], 1);
    assert_int_equal(o.delivered + o.duplicated + o.corrupted + o.lost + o.pending, o.accepted);
    assert_int_equal(o.rejected, 1);
    assert_int_equal(o.unconfirmed, 1);
    assert_int_equal(o.reads, 5);
    assert_null(ledger_get(&l, ledger_seq(0, 99)));
    assert_null(ledger_get(&l, ledger_seq(7, 0)));
    ledger_free(&l);
}

/* A reader may commit a message before its sender has processed the 250: the
 * message must not stay owed. */
static void read_before_accept(void **st)
{
    struct ledger l;
    struct ledger_outcome o;
    ledger_init(&l, 1, 1);
    struct ledger_entry *e = add(&l, 0, 0);
    ledger_read(&l, e, 0);
    ledger_accept(&l, e, 5);
    assert_int_equal(atomic_load(&l.owed_total), 0);
    ledger_outcome(&l, &o);
    assert_int_equal(o.delivered, 1);
    ledger_free(&l);
}

struct reader_arg {
    struct ledger *l;
    unsigned n, start, step;
};

static void *reader(void *p)
{
    struct reader_arg *a = p;
    for (unsigned i = a->start; i < a->n; i += a->step)
        ledger_read(a->l, ledger_get(a->l, ledger_seq(0, i)), 0);
    return NULL;
}

static void concurrent(void **st)
{
    enum { N = 200000 };
    struct ledger l;
    struct ledger_outcome o;
    ledger_init(&l, 1, 16);
    for (unsigned i = 0; i < N; i++)
        ledger_accept(&l, add(&l, 0, i % 16), 1);
    /* four threads, each message read by exactly two of them */
    pthread_t t[4];
    struct reader_arg a[4] = { { &l, N, 0, 2 }, { &l, N, 1, 2 }, { &l, N, 0, 1 }, { &l, N, 0, 1 } };
    a[3].start = N;                             /* the fourth reads nothing */
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, reader, &a[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    ledger_outcome(&l, &o);
    assert_int_equal(o.duplicated, N);
    assert_int_equal(o.reads, 2 * N);
    assert_int_equal(atomic_load(&l.owed_total), 0);
    ledger_free(&l);
}

/* A sender appends while readers on other threads find entries as they are
 * published (release/acquire on the shard's count) and mark them: each reader
 * sees the entry's fields the sender wrote. Run under `make tsan` too. */
struct follower_arg {
    struct ledger *l;
    unsigned n, bad;
};

static void *writer(void *p)
{
    struct follower_arg *a = p;
    for (unsigned i = 0; i < a->n; i++)
        ledger_accept(a->l, add(a->l, 0, i % 16), 1);
    return NULL;
}

static void *follower(void *p)
{
    struct follower_arg *a = p;
    for (unsigned i = 0; i < a->n;) {
        struct ledger_entry *e = ledger_get(a->l, ledger_seq(0, i));
        if (!e)
            continue;                           /* not published yet */
        a->bad += e->user != i % 16 || e->size != 100;
        ledger_read(a->l, e, 0);
        i++;
    }
    return NULL;
}

static void concurrent_add_read(void **st)
{
    enum { N = 100000 };
    struct ledger l;
    struct ledger_outcome o;
    ledger_init(&l, 1, 16);
    pthread_t t[3];
    struct follower_arg a[3] = { { &l, N, 0 }, { &l, N, 0 }, { &l, N, 0 } };
    pthread_create(&t[0], NULL, writer, &a[0]);
    pthread_create(&t[1], NULL, follower, &a[1]);
    pthread_create(&t[2], NULL, follower, &a[2]);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(a[1].bad + a[2].bad, 0);
    ledger_outcome(&l, &o);
    assert_int_equal(o.duplicated, N);          /* each read by both followers */
    assert_int_equal(atomic_load(&l.owed_total), 0);
    ledger_free(&l);
}

/* An id read from a mailbox may be forged: a range that would leave its shard
 * (or wrap, as "ffffffffffffffff/64" did onto worker 0's first entries) finds
 * nothing (issue 13). */
static void find_forged(void **st)
{
    struct ledger l;
    assert_int_equal(ledger_init(&l, 2, 4), 0);
    struct ledger_entry *a = add(&l, 0, 1), *b = add(&l, 0, 2), *c = add(&l, 1, 1);
    assert_ptr_equal(ledger_find(&l, ledger_seq(0, 0), 2, 2), b);
    assert_ptr_equal(ledger_find(&l, ledger_seq(0, 0), 1, 1), a);
    assert_ptr_equal(ledger_find(&l, ledger_seq(1, 0), 1, 1), c);
    assert_null(ledger_find(&l, ledger_seq(0, 0), 1, 2));        /* not its recipient */
    assert_null(ledger_find(&l, UINT64_MAX, 64, 1));              /* wraps to seq 0 */
    assert_null(ledger_find(&l, ledger_seq(1, 0) - 1, 2, 1));     /* runs into shard 1 */
    assert_null(ledger_find(&l, ledger_seq(2, 0), 1, 1));         /* no such shard */
    ledger_free(&l);
}

static enum outcome outcome_of(const struct ledger *l, const struct ledger_entry *e, enum pending_reason *why)
{
    *why = PR_COUNT;
    return ledger_entry_outcome(l, e, why);
}

/* An unread message is lost only when its mailbox was read in full in the pass
 * that proves; each shortfall has its own reason, in order of strength. */
static void pending_reasons(void **st)
{
    struct ledger l;
    enum pending_reason why;
    ledger_init(&l, 1, 4);
    struct ledger_entry *queued = add(&l, 0, 0), *peeked = add(&l, 0, 0), *gone = add(&l, 0, 1);
    struct ledger_entry *unswept = add(&l, 0, 2);
    for (struct ledger_entry *e = queued; e <= unswept; e++)
        ledger_accept(&l, e, 1);
    /* no sweep at all: everything unread is unswept */
    assert_int_equal(outcome_of(&l, gone, &why), OUTCOME_PENDING);
    assert_int_equal(why, PR_UNSWEPT);
    /* a sweep that never settled, though it read mailbox 1 in full */
    l.swept = 1;
    ledger_visited(&l, 1, 1, 100);
    assert_int_equal(outcome_of(&l, gone, &why), OUTCOME_PENDING);
    assert_int_equal(why, PR_UNSETTLED);
    /* settled in pass 2: mailbox 1 read in full in pass 1 only proves nothing */
    l.proof_pass = 2;
    assert_int_equal(outcome_of(&l, gone, &why), OUTCOME_PENDING);
    assert_int_equal(why, PR_UNSWEPT);
    ledger_visited(&l, 0, 2, 200);
    ledger_visited(&l, 1, 2, 200);
    assert_int_equal(outcome_of(&l, gone, &why), OUTCOME_LOST);
    assert_int_equal(outcome_of(&l, unswept, &why), OUTCOME_PENDING);
    assert_int_equal(why, PR_UNSWEPT);
    /* in mailbox 0, read in full too: the queue's mark and a sighting each keep
     * their message from being lost */
    assert_int_equal(ledger_mark_queued(&l, ledger_seq(0, 0), 1), 1);
    assert_int_equal(ledger_seen(peeked), 1);
    assert_int_equal(ledger_seen(peeked), 0);
    assert_int_equal(outcome_of(&l, queued, &why), OUTCOME_PENDING);
    assert_int_equal(why, PR_QUEUED);
    assert_int_equal(outcome_of(&l, peeked, &why), OUTCOME_PENDING);
    assert_int_equal(why, PR_PEEKED);
    /* a later reading of the queue without it: lost */
    ledger_queued_clear(&l);
    assert_int_equal(outcome_of(&l, queued, &why), OUTCOME_LOST);
    /* read after all, by the sweep: delivered, and late */
    ledger_read(&l, gone, 1);
    struct ledger_outcome o;
    ledger_outcome(&l, &o);
    assert_int_equal(o.delivered, 1);
    assert_int_equal(o.late, 1);
    assert_int_equal(o.lost, 1);
    assert_int_equal(o.pending, 2);
    assert_int_equal(o.pending_by[PR_PEEKED], 1);
    assert_int_equal(o.pending_by[PR_UNSWEPT], 1);
    ledger_free(&l);
}

/* The queue's ids come from files on the server: a message's entries are marked
 * only while they really are its recipients, and only owed ones count. */
static void queue_marks(void **st)
{
    struct ledger l;
    ledger_init(&l, 1, 8);
    uint64_t a = ledger_add(&l, 0, 1, 10, 1, 0);     /* message A: two recipients */
    ledger_add(&l, 0, 2, 10, 1, 1);
    uint64_t b = ledger_add(&l, 0, 3, 10, 2, 0);     /* message B: one */
    ledger_accept(&l, ledger_get(&l, ledger_seq(0, a)), 1);
    ledger_accept(&l, ledger_get(&l, ledger_seq(0, a + 1)), 1);
    ledger_accept(&l, ledger_get(&l, ledger_seq(0, b)), 1);
    ledger_read(&l, ledger_get(&l, ledger_seq(0, a + 1)), 0);
    /* A claims 5 recipients: only its 2 are marked, 1 of them still owed */
    assert_int_equal(ledger_mark_queued(&l, ledger_seq(0, a), 5), 1);
    assert_false(atomic_load(&ledger_get(&l, ledger_seq(0, b))->state) & LS_QUEUED);
    /* an id that starts inside a message, or beyond the ledger, marks nothing */
    assert_int_equal(ledger_mark_queued(&l, ledger_seq(0, a + 1), 1), 0);
    assert_int_equal(ledger_mark_queued(&l, ledger_seq(0, 99), 1), 0);
    assert_int_equal(ledger_mark_queued(&l, ledger_seq(5, 0), 1), 0);
    /* the entry of A's second recipient knows its message's id */
    struct ledger_entry *second = ledger_get(&l, ledger_seq(0, a + 1));
    assert_int_equal(ledger_msg_seq(ledger_seq(0, a + 1), second), ledger_seq(0, a));
    ledger_free(&l);
}

/* The server's queue ids: per entry, shared by one message's recipients, none
 * for entries never given one, across a chunk boundary and in another shard. */
static void queue_ids(void **st)
{
    (void)st;
    struct ledger l;
    assert_int_equal(ledger_init(&l, 2, 4), 0);
    for (unsigned i = 0; i < LEDGER_CHUNK + 3; i++)
        ledger_add(&l, 0, i % 4, 10, i, 0);
    ledger_add(&l, 1, 0, 10, 0, 0);
    assert_string_equal(ledger_qid(&l, ledger_seq(0, 0)), "");
    ledger_set_qid(&l, ledger_seq(0, 0), "4XyZ1abc", 8);
    ledger_set_qid(&l, ledger_seq(0, 1), "4XyZ1abc", 8);
    ledger_set_qid(&l, ledger_seq(0, 2), "4XyZ1", 5);          /* a prefix of the last: its own */
    ledger_set_qid(&l, ledger_seq(0, LEDGER_CHUNK + 1), "B2", 2);
    ledger_set_qid(&l, ledger_seq(1, 0), "C3", 2);
    ledger_set_qid(&l, ledger_seq(0, 3), "", 0);                /* none given */
    assert_string_equal(ledger_qid(&l, ledger_seq(0, 0)), "4XyZ1abc");
    assert_ptr_equal(ledger_qid(&l, ledger_seq(0, 0)), ledger_qid(&l, ledger_seq(0, 1)));
    assert_string_equal(ledger_qid(&l, ledger_seq(0, 2)), "4XyZ1");
    assert_string_equal(ledger_qid(&l, ledger_seq(0, 3)), "");
    assert_string_equal(ledger_qid(&l, ledger_seq(0, LEDGER_CHUNK)), "");
    assert_string_equal(ledger_qid(&l, ledger_seq(0, LEDGER_CHUNK + 1)), "B2");
    assert_string_equal(ledger_qid(&l, ledger_seq(1, 0)), "C3");
    assert_string_equal(ledger_qid(&l, ledger_seq(5, 0)), "");  /* no such shard */
    ledger_free(&l);
}

/* n entries of shard 0 (users i % 4), each accepted and read once. */
static void delivered(struct ledger *l, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        struct ledger_entry *e = add(l, 0, i % 4);
        ledger_accept(l, e, i);
        ledger_read(l, e, 0);
    }
}

static void count_each(void *arg, uint64_t seq, const struct ledger_entry *e)
{
    (void)seq;
    (void)e;
    ++*(unsigned *)arg;
}

static int chunk_gone(const struct ledger *l, unsigned shard, unsigned c)
{
    return atomic_load(&l->shards[shard].chunks[c]) == NULL && atomic_load(&l->shards[shard].compacted[c]);
}

/* A full chunk delivered exactly once is dropped, and stays counted; the part of a
 * chunk still filling is not. Its memory goes only once every owner passed a
 * quiescent point after the drop (one that stopped counts as passed). */
static void compact_settled(void **st)
{
    struct ledger l;
    struct ledger_outcome before, after;
    ledger_init(&l, 2, 4);
    delivered(&l, LEDGER_CHUNK + 10);
    ledger_set_qid(&l, ledger_seq(0, 5), "Q5", 2);
    ledger_outcome(&l, &before);
    assert_int_equal(ledger_held(&l), LEDGER_CHUNK + 10);
    assert_int_equal(ledger_compact(&l), LEDGER_CHUNK);
    assert_true(chunk_gone(&l, 0, 0));
    assert_non_null(atomic_load(&l.shards[0].chunks[1]));
    assert_int_equal(ledger_held(&l), 10);
    assert_int_equal(l.settled, LEDGER_CHUNK);
    assert_null(ledger_get(&l, ledger_seq(0, 3)));
    assert_non_null(ledger_get(&l, ledger_seq(0, LEDGER_CHUNK)));
    assert_string_equal(ledger_qid(&l, ledger_seq(0, 5)), "");
    ledger_outcome(&l, &after);
    assert_memory_equal(&before, &after, sizeof before);
    assert_int_equal(after.delivered, LEDGER_CHUNK + 10);
    assert_int_equal(ledger_compact(&l), 0);    /* nothing new; the dropped chunk still waits */
    assert_int_equal(l.nretired, 1);
    ledger_quiescent(&l, 0);
    ledger_compact(&l);
    assert_int_equal(l.nretired, 1);            /* shard 1's owner has not passed one yet */
    ledger_offline(&l, 1);
    ledger_compact(&l);
    assert_int_equal(l.nretired, 0);
    ledger_free(&l);
}

/* A chunk holding one message whose fate is not "delivered exactly once", or
 * that has more to show (late: an example; retried: its tries), is kept whole. */
static void compact_keeps(void **st)
{
    enum { UNREAD, DUPLICATED, CORRUPT, LATE, NOTED, REJECTED, UNACCEPTED_READ, KINDS };
    for (int k = 0; k < KINDS; k++) {
        struct ledger l;
        struct ledger_outcome before, after;
        ledger_init(&l, 1, 4);
        for (unsigned i = 0; i < LEDGER_CHUNK; i++) {
            struct ledger_entry *e = add(&l, 0, i % 4);
            int odd = i == 1234;
            if (odd && k == NOTED)
                ledger_note(&l, 0, i, 2, 0);
            if (!odd || (k != REJECTED && k != UNACCEPTED_READ))
                ledger_accept(&l, e, i);
            if (odd && k == REJECTED)
                ledger_reject(e);
            if (odd && k == CORRUPT)
                ledger_corrupt(e);
            if (!odd || k != UNREAD)
                ledger_read(&l, e, odd && k == LATE);
            if (odd && k == DUPLICATED)
                ledger_read(&l, e, 0);
        }
        l.final = 1;
        ledger_outcome(&l, &before);
        assert_int_equal(ledger_compact(&l), 0);
        assert_non_null(atomic_load(&l.shards[0].chunks[0]));
        ledger_outcome(&l, &after);
        assert_memory_equal(&before, &after, sizeof before);
        ledger_free(&l);
    }
}

/* A settled, compacted message found again is a duplicate: revived as an entry
 * read once, so its next read makes it duplicated, and the counts still add up.
 * A message's recipients are revived one by one, each with its index; a copy
 * beyond them, or in another mailbox of a one-recipient message already revived
 * there, is no recipient's. */
static void compact_revive(void **st)
{
    struct ledger l;
    struct ledger_outcome o;
    ledger_init(&l, 1, 4);
    /* entries 0 and 1: one message to users 2 and 3; then single ones */
    struct ledger_entry *a = ledger_get(&l, ledger_seq(0, ledger_add(&l, 0, 2, 100, 1, 0)));
    struct ledger_entry *b = ledger_get(&l, ledger_seq(0, ledger_add(&l, 0, 3, 100, 1, 1)));
    ledger_accept(&l, a, 1);
    ledger_accept(&l, b, 1);
    ledger_read(&l, a, 0);
    ledger_read(&l, b, 0);
    delivered(&l, LEDGER_CHUNK - 2);
    assert_int_equal(ledger_compact(&l), LEDGER_CHUNK);
    uint64_t m = ledger_seq(0, 0), single = ledger_seq(0, 7), eseq = 99;

    struct ledger_entry *r = ledger_find_seq(&l, single, 1, 1, &eseq);
    assert_non_null(r);
    assert_int_equal(eseq, single);
    uint32_t s = atomic_load(&r->state);
    assert_true(s & LS_REVIVED);
    assert_int_equal(s & LS_READS, 1);
    assert_int_equal(r->user, 1);
    assert_ptr_equal(ledger_find(&l, single, 1, 1), r);   /* the same entry again */
    assert_null(ledger_find(&l, single, 1, 2));             /* its one recipient is taken */
    assert_ptr_equal(ledger_get(&l, single), r);
    ledger_outcome(&l, &o);
    assert_int_equal(o.delivered, LEDGER_CHUNK);           /* found, not yet read again */
    assert_int_equal(ledger_held(&l), 1);
    assert_int_equal(ledger_read(&l, r, 0), 1);
    ledger_outcome(&l, &o);
    assert_int_equal(o.accepted, LEDGER_CHUNK);
    assert_int_equal(o.delivered, LEDGER_CHUNK - 1);
    assert_int_equal(o.duplicated, 1);
    assert_int_equal(o.reads, LEDGER_CHUNK + 1);

    struct ledger_entry *r0 = ledger_find_seq(&l, m, 2, 3, &eseq);
    assert_int_equal(eseq, m);
    struct ledger_entry *r1 = ledger_find_seq(&l, m, 2, 2, &eseq);
    assert_int_equal(eseq, m + 1);
    assert_non_null(r0);
    assert_non_null(r1);
    assert_int_equal(ledger_msg_seq(m + 1, r1), m);        /* its index kept: the message's id */
    assert_null(ledger_find(&l, m, 2, 1));                  /* both recipients taken */
    /* a reader that found entry 9 before the compaction and commits after it */
    struct ledger_entry *h = ledger_hold(&l, ledger_seq(0, 9), 0, 1);
    assert_true(atomic_load(&h->state) & LS_REVIVED);
    assert_ptr_equal(ledger_hold(&l, ledger_seq(0, LEDGER_CHUNK + 5), 0, 0), NULL);   /* none of the run's */
    unsigned seen = 0;
    ledger_each(&l, count_each, &seen);
    assert_int_equal(seen, 4);                              /* the revived entries, in order */
    ledger_queued_clear(&l);                                /* walks what is left */
    ledger_outcome(&l, &o);
    assert_int_equal(o.accepted, LEDGER_CHUNK);
    assert_int_equal(o.delivered + o.duplicated, LEDGER_CHUNK);
    ledger_free(&l);
}

/* A reader that found an entry before its chunk was dropped marks it after (the
 * pointer stays valid until it passes a quiescent point): the marks are kept when
 * the chunk is freed, in the entry revived for it or in a whole copy. */
static void compact_late_marks(void **st)
{
    struct ledger l;
    struct ledger_outcome o;
    ledger_init(&l, 1, 4);
    delivered(&l, LEDGER_CHUNK);
    struct ledger_entry *e5 = ledger_get(&l, ledger_seq(0, 5)), *e6 = ledger_get(&l, ledger_seq(0, 6));
    struct ledger_entry *e7 = ledger_get(&l, ledger_seq(0, 7));
    assert_int_equal(ledger_compact(&l), LEDGER_CHUNK);
    ledger_read(&l, e5, 0);                                 /* found before, read again after */
    ledger_corrupt(e6);
    ledger_read(&l, e7, 0);
    ledger_read(&l, ledger_find(&l, ledger_seq(0, 7), 1, 7 % 4), 0);   /* and a copy found after */
    ledger_quiescent(&l, 0);
    ledger_compact(&l);
    assert_int_equal(l.nretired, 0);
    ledger_outcome(&l, &o);
    assert_int_equal(o.accepted, LEDGER_CHUNK);
    assert_int_equal(o.duplicated, 2);
    assert_int_equal(o.corrupted, 1);
    assert_int_equal(o.delivered, LEDGER_CHUNK - 3);
    assert_int_equal(o.reads, LEDGER_CHUNK + 3);
    const struct ledger_entry *w = ledger_get(&l, ledger_seq(0, 5));
    assert_non_null(w);                                     /* a whole copy: what was sent is kept */
    assert_int_equal(w->size, 100);
    assert_int_equal(w->user, 5 % 4);
    assert_int_equal(atomic_load(&ledger_get(&l, ledger_seq(0, 7))->state) & LS_READS, 3);
    ledger_free(&l);
}

/* A sender adds and accepts, a reader on another thread reads each message once
 * and passes a quiescent point between messages, while this thread compacts. The
 * reader also reads copies of older messages (duplicates): once the first chunk
 * is sure to be compacted, every 100th of it (revived), then every 100th message
 * two chunks back (compacted or not, by the interleaving). Under `make tsan`, no
 * race; the counts come out whatever the interleaving. */
struct compactor_arg {
    struct ledger *l;
    unsigned n;
    int first;                                  /* the first chunk was compacted before its copies were read */
    _Atomic int done;
};

static void *sender(void *p)
{
    struct compactor_arg *a = p;
    for (unsigned i = 0; i < a->n; i++)
        ledger_accept(a->l, add(a->l, 0, i % 4), 1);
    ledger_offline(a->l, 0);
    return NULL;
}

static void read_copy(struct ledger *l, unsigned i)
{
    ledger_read(l, ledger_find(l, ledger_seq(0, i), 1, i % 4), 0);
    ledger_quiescent(l, 1);
}

static void *quiet_reader(void *p)
{
    struct compactor_arg *a = p;
    for (unsigned i = 0; i < a->n;) {
        struct ledger_entry *e = ledger_find(a->l, ledger_seq(0, i), 1, i % 4);
        if (!e || !(atomic_load(&e->state) & LS_ACCEPTED)) {
            ledger_quiescent(a->l, 1);
            continue;                           /* not published or not accepted yet */
        }
        ledger_read(a->l, e, 0);
        ledger_quiescent(a->l, 1);
        if (i == 2 * LEDGER_CHUNK) {
            /* bounded: a compactor that never drops the chunk fails the test, not hangs it */
            for (long w = 0; w < 100000000 && !atomic_load(&a->l->shards[0].compacted[0]); w++)
                ledger_quiescent(a->l, 1);
            a->first = atomic_load(&a->l->shards[0].compacted[0]);
            for (unsigned j = 0; j < LEDGER_CHUNK; j += 100)
                read_copy(a->l, j);
        } else if (i > 3 * LEDGER_CHUNK && i % 100 == 0) {
            read_copy(a->l, i - 2 * LEDGER_CHUNK);
        }
        i++;
    }
    ledger_offline(a->l, 1);
    atomic_store(&a->done, 1);
    return NULL;
}

static void compact_concurrent(void **st)
{
    enum { N = 60000 };
    struct ledger l;
    struct ledger_outcome o;
    ledger_init(&l, 2, 4);
    struct compactor_arg a = { &l, N, 0, 0 };
    pthread_t t[2];
    pthread_create(&t[0], NULL, sender, &a);
    pthread_create(&t[1], NULL, quiet_reader, &a);
    uint64_t dropped = 0;
    while (!atomic_load(&a.done))
        dropped += ledger_compact(&l);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    dropped += ledger_compact(&l);
    ledger_outcome(&l, &o);
    unsigned dups = 0;
    for (unsigned j = 0; j < LEDGER_CHUNK; j += 100)
        dups++;
    for (unsigned i = 3 * LEDGER_CHUNK + 1; i < N; i++)
        dups += i % 100 == 0;
    assert_int_equal(o.accepted, N);
    assert_int_equal(o.duplicated, dups);
    assert_int_equal(o.delivered, N - dups);
    assert_int_equal(atomic_load(&l.owed_total), 0);
    assert_int_equal(l.nretired, 0);            /* both owners offline: all freed */
    assert_true(dropped > 0);
    assert_true(a.first);
    ledger_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(outcomes), cmocka_unit_test(read_before_accept), cmocka_unit_test(concurrent),
        cmocka_unit_test(concurrent_add_read), cmocka_unit_test(find_forged),
        cmocka_unit_test(pending_reasons), cmocka_unit_test(queue_marks), cmocka_unit_test(queue_ids),
        cmocka_unit_test(compact_settled), cmocka_unit_test(compact_keeps), cmocka_unit_test(compact_revive),
        cmocka_unit_test(compact_late_marks), cmocka_unit_test(compact_concurrent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
