/* Unit tests of smtp.retry's queue and ledger notes: the back-off doubles from its
 * minimum up to its maximum, the heap gives items back in the order they fall due
 * and only once due, a full queue refuses, and a message's attempts are found by
 * its ledger id. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine/ledger.h"
#include "engine/retry.h"

#define S 1000000000ull

static void backoff_doubles_up_to_its_maximum(void **st)
{
    (void)st;
    assert_true(retry_backoff(300 * S, 4000 * S, 1) == 300 * S);   /* Postfix's defaults */
    assert_true(retry_backoff(300 * S, 4000 * S, 2) == 600 * S);
    assert_true(retry_backoff(300 * S, 4000 * S, 4) == 2400 * S);
    assert_true(retry_backoff(300 * S, 4000 * S, 5) == 4000 * S);
    assert_true(retry_backoff(300 * S, 4000 * S, 1000) == 4000 * S);
    assert_true(retry_backoff(1 * S, 1 * S, 3) == 1 * S);
}

static void heap_gives_items_back_when_due_in_order(void **st)
{
    (void)st;
    struct retryq q = { 0 };
    static const uint64_t due[] = { 50, 10, 40, 30, 20, 60, 5 };
    for (unsigned i = 0; i < sizeof due / sizeof due[0]; i++) {
        struct retry_item it = { .due = due[i], .n = 1, .users = { i } };
        assert_int_equal(retryq_push(&q, &it), 0);
    }
    assert_true(retryq_next_due(&q) == 5);
    struct retry_item out;
    assert_int_equal(retryq_pop_due(&q, 4, &out), 0);   /* not due yet */
    uint64_t last = 0;
    unsigned got = 0;
    while (retryq_pop_due(&q, 35, &out)) {
        assert_true(out.due >= last && out.due <= 35);
        assert_true(due[out.users[0]] == out.due);        /* the item's own payload */
        last = out.due;
        got++;
    }
    assert_int_equal(got, 4);                              /* 5 10 20 30 */
    assert_true(retryq_next_due(&q) == 40);
    while (retryq_pop_due(&q, 1000, &out))
        got++;
    assert_int_equal(got, 7);
    assert_true(retryq_next_due(&q) == 0);
    retryq_free(&q);
}

static void a_full_queue_refuses(void **st)
{
    (void)st;
    struct retryq q = { 0 };
    struct retry_item it = { .due = 1, .n = 1 };
    for (unsigned i = 0; i < RETRY_MAX_ITEMS; i++)
        assert_int_equal(retryq_push(&q, &it), 0);
    assert_int_equal(retryq_push(&q, &it), -1);
    retryq_free(&q);
}

static void notes_are_found_by_id(void **st)
{
    (void)st;
    struct ledger l;
    assert_int_equal(ledger_init(&l, 2, 4), 0);
    for (unsigned i = 0; i < 10; i++)
        ledger_add(&l, 1, i % 4, 100, 0, 0);
    ledger_note(&l, 1, 3, 2, 1000);
    ledger_note(&l, 1, 7, 4, 2000);
    const struct ledger_note *n = ledger_note_of(&l, ledger_seq(1, 7));
    assert_non_null(n);
    assert_int_equal(n->tries, 4);
    assert_int_equal(n->first_ms, 2000);
    assert_non_null(ledger_note_of(&l, ledger_seq(1, 3)));
    assert_null(ledger_note_of(&l, ledger_seq(1, 4)));    /* a first try */
    assert_null(ledger_note_of(&l, ledger_seq(0, 3)));    /* another shard's entry */
    assert_null(ledger_note_of(&l, ledger_seq(5, 3)));    /* no such shard */

    /* a deferred attempt is its own verdict; the delivered retry counts its tries */
    struct ledger_entry *e = ledger_get(&l, ledger_seq(1, 2));
    ledger_defer(e);
    enum pending_reason why;
    assert_int_equal(ledger_entry_outcome(&l, e, &why), OUTCOME_DEFERRED);
    struct ledger_entry *r = ledger_get(&l, ledger_seq(1, 7));
    ledger_accept(&l, r, 2500);
    ledger_read(&l, r, 0);
    l.final = 1;
    struct ledger_outcome o;
    ledger_outcome(&l, &o);
    assert_int_equal(o.deferred, 1);
    assert_int_equal(o.retried, 1);
    assert_int_equal(o.retried_tries, 4);
    assert_int_equal(o.retried_max_ms, 500);
    ledger_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(backoff_doubles_up_to_its_maximum),
        cmocka_unit_test(heap_gives_items_back_when_due_in_order),
        cmocka_unit_test(a_full_queue_refuses),
        cmocka_unit_test(notes_are_found_by_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
