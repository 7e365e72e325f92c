/* Unit tests of the queue-to-ledger reconciliation (verdict/reconcile.c): a queued
 * message of this run marks its recipients pending_queued and counts those still
 * owed; another run's mail, a foreign id and a missing id mark nothing; when the
 * queue names the recipients it still holds and they are ours, only those are
 * marked; when it names addresses we do not know (rewritten by the server), or
 * cannot tell, all of the message's recipients are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "engine/ledger.h"
#include "verdict/reconcile.h"

static char *addrs[] = { "u0@test.local", "u1@test.local", "u2@test.local", "u3@test.local" };
static struct user userv[4];

struct fixture {
    struct ledger l;
    struct users users;
    struct reconcile rc;
    uint64_t m1, m2;                 /* m1: users 1, 2, 3 (entries m1..m1+2); m2: user 0 */
    char id1[64], id2[64];
};

static struct fixture *setup(void)
{
    static struct fixture f;
    memset(&f, 0, sizeof f);
    for (int i = 0; i < 4; i++)
        userv[i] = (struct user){ addrs[i], "pw" };
    f.users = (struct users){ userv, 4 };
    assert_int_equal(ledger_init(&f.l, 1, 4), 0);
    f.m1 = ledger_seq(0, ledger_add(&f.l, 0, 1, 10, 7, 0));
    ledger_add(&f.l, 0, 2, 10, 7, 1);
    ledger_add(&f.l, 0, 3, 10, 7, 2);
    f.m2 = ledger_seq(0, ledger_add(&f.l, 0, 0, 10, 8, 0));
    for (uint64_t s = f.m1; s <= f.m2; s++)
        ledger_accept(&f.l, ledger_get(&f.l, s), 1);
    snprintf(f.id1, sizeof f.id1, "0123abcd-%llx/3", (unsigned long long)f.m1);
    snprintf(f.id2, sizeof f.id2, "0123abcd-%llx", (unsigned long long)f.m2);
    f.rc = (struct reconcile){ &f.l, &f.users, "0123abcd", 0 };
    return &f;
}

static int queued(struct fixture *f, uint64_t seq)
{
    enum pending_reason why = PR_COUNT;
    return ledger_entry_outcome(&f->l, ledger_get(&f->l, seq), &why) == OUTCOME_PENDING && why == PR_QUEUED;
}

static void queue_holds(struct fixture *f, const char *id, const char *const *rcpts, size_t n, int known)
{
    reconcile_queued(&f->rc, &(struct queue_msg){ id, id ? strlen(id) : 0, rcpts, n, known });
}

static void every_recipient_when_the_queue_cannot_tell(void **st)
{
    struct fixture *f = setup();
    ledger_read(&f->l, ledger_get(&f->l, f->m1 + 1), 0);      /* user 2 has read its copy */
    queue_holds(f, f->id1, NULL, 0, 0);
    assert_int_equal(f->rc.owed, 2);                           /* users 1 and 3 still owed */
    assert_true(queued(f, f->m1));
    assert_true(queued(f, f->m1 + 2));
    assert_false(queued(f, f->m2));
    ledger_free(&f->l);
}

static void not_ours_marks_nothing(void **st)
{
    struct fixture *f = setup();
    queue_holds(f, "99999999-0/3", NULL, 0, 0);                 /* another run's */
    queue_holds(f, "not an id", NULL, 0, 0);
    queue_holds(f, NULL, NULL, 0, 0);                           /* unreadable, or no header */
    char far[64];
    snprintf(far, sizeof far, "0123abcd-%llx/2", (unsigned long long)ledger_seq(3, 0));
    queue_holds(f, far, NULL, 0, 0);                            /* beyond the ledger */
    assert_int_equal(f->rc.owed, 0);
    for (uint64_t s = f->m1; s <= f->m2; s++)
        assert_false(queued(f, s));
    ledger_free(&f->l);
}

static void only_the_recipients_it_still_holds(void **st)
{
    struct fixture *f = setup();
    /* addresses compare without case; user 2 has read its copy: not owed */
    const char *left[] = { "U3@Test.Local", "u2@test.local" };
    ledger_read(&f->l, ledger_get(&f->l, f->m1 + 1), 0);
    queue_holds(f, f->id1, left, 2, 1);
    assert_int_equal(f->rc.owed, 1);
    assert_false(queued(f, f->m1));
    assert_false(queued(f, f->m1 + 1));
    assert_true(queued(f, f->m1 + 2));
    ledger_free(&f->l);
}

static void all_of_them_when_the_addresses_are_not_ours(void **st)
{
    struct fixture *f = setup();
    const char *rewritten[] = { "u3@test.local", "someone@else.example" };
    queue_holds(f, f->id1, rewritten, 2, 1);
    assert_int_equal(f->rc.owed, 3);
    for (uint64_t s = f->m1; s < f->m2; s++)
        assert_true(queued(f, s));
    assert_false(queued(f, f->m2));
    ledger_free(&f->l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_recipient_when_the_queue_cannot_tell),
        cmocka_unit_test(not_ours_marks_nothing),
        cmocka_unit_test(only_the_recipients_it_still_holds),
        cmocka_unit_test(all_of_them_when_the_addresses_are_not_ours),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
