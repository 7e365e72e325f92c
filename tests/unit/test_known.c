/* Unit tests of known, the per-mailbox sets of UIDLs readers leave in place (the
 * filled messages): adding, finding, refusing duplicates, kept apart per mailbox. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/foreign.h"
#include "engine/known.h"

static void sets_per_mailbox(void **st)
{
    (void)st;
    struct known k;
    assert_int_equal(known_init(&k, 3), 0);
    assert_false(known_any(&k, 1));
    for (uint64_t i = 1000; i > 0; i--)              /* descending: every insert at the front */
        assert_int_equal(known_add(&k, 1, i * 7919), 1);
    assert_int_equal(known_add(&k, 1, 7919), 0);     /* already known */
    assert_true(known_any(&k, 1));
    assert_false(known_any(&k, 0));
    for (uint64_t i = 1; i <= 1000; i++)
        assert_true(known_has(&k, 1, i * 7919));
    assert_false(known_has(&k, 1, 7918));
    assert_false(known_has(&k, 2, 7919));            /* another mailbox */
    assert_false(known_has(&k, 7, 7919));            /* no such mailbox */
    assert_int_equal(known_add(&k, 7, 1), 0);
    assert_true(k.total == 1000);
    uint64_t uid = foreign_key("1764620000.M12P34", 17);
    assert_int_equal(known_add(&k, 2, uid), 1);
    assert_true(known_has(&k, 2, uid));
    known_free(&k);
    assert_false(known_any(&k, 1));
    assert_false(known_any(NULL, 1));                /* a soak without a fill */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sets_per_mailbox),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
