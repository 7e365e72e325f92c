/* Unit tests of the ledger: every outcome (delivered, duplicated, corrupted, lost,
 * pending, rejected, unconfirmed), the owed counters whichever of accept and read
 * comes first, and concurrent readers on several threads. */
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
    uint64_t idx = ledger_add(l, shard, user, 100, 0xabcdull);
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
    assert_int_equal(ledger_read(&l, delivered), 0);
    assert_int_equal(ledger_read(&l, dup), 0);
    assert_int_equal(ledger_read(&l, dup), 1);
    ledger_corrupt(corrupt);
    ledger_read(&l, corrupt);
    ledger_read(&l, unconfirmed);
    atomic_store(&l.swept[2], 1);               /* the sweep emptied user 2: its unread mail is lost */
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
    ledger_read(&l, e);
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
        ledger_read(a->l, ledger_get(a->l, ledger_seq(0, i)));
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(outcomes), cmocka_unit_test(read_before_accept), cmocka_unit_test(concurrent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
