/* Unit tests of the verdict's table (result/verdict_output.c): a share short of 100 %
 * or above 0 % never prints as 100.0 % or 0.0 % (one message in a million unproven
 * shows in the proven line, the unproven line and its reasons). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "result/verdict_output.h"
#include "result/run_result.h"

static char *table_of(const struct run_result *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    struct verdict_view vv = run_verdict_view(r);
    verdict_table(f, &vv);
    fclose(f);
    return text;
}

static void one_in_a_million_shows(void **st)
{
    static struct run_result r;
    memset(&r, 0, sizeof r);
    r.lo = (struct ledger_outcome){ .accepted = 1000000, .delivered = 999999, .pending = 1,
                                    .pending_by = { [PR_UNSETTLED] = 1 } };
    r.verdict.accepted = 1000000;
    r.verdict.proven = 999999;
    r.verdict.proven_share = 0.999999;
    r.verdict.unproven_share = 0.000001;
    r.verdict.pending_share[PR_UNSETTLED] = 0.000001;
    snprintf(r.verdict.headline, sizeof r.verdict.headline, "UNPROVEN");
    char *t = table_of(&r);
    assert_non_null(strstr(t, "999999 of 1000000 accepted delivered exactly once (99.99 %)"));
    assert_non_null(strstr(t, "unproven   1 (<0.01 %): unsettled 1 (<0.01 %)"));
    assert_null(strstr(t, "100.0 %"));
    assert_null(strstr(t, "(0.0 %)"));
    free(t);
    /* all of it proven reads 100.0 % */
    r.lo = (struct ledger_outcome){ .accepted = 1000000, .delivered = 1000000 };
    r.verdict.proven = 1000000;
    r.verdict.proven_share = 1;
    t = table_of(&r);
    assert_non_null(strstr(t, "1000000 of 1000000 accepted delivered exactly once (100.0 %)"));
    free(t);
}

/* A run judged once its backlog had filled says from when. */
static void kept_up_says_from_when(void **st)
{
    static struct run_result r;
    memset(&r, 0, sizeof r);
    r.verdict.accepted_rate = 185;
    r.verdict.read_rate = 184;
    r.verdict.kept = (struct keptup_result){ .outcome = KEPTUP_YES, .why = "the backlog grew -0.72 msg/s (bound 9.26)",
                                             .filled_s = 74 };
    char *t = table_of(&r);
    assert_non_null(strstr(t, "kept up    yes: the backlog grew -0.72 msg/s (bound 9.26); accepted 185 msg/s, read "
                              "184 msg/s in the send window; judged from 74 s, once the backlog had filled\n"));
    free(t);
    r.verdict.kept.filled_s = 0;
    t = table_of(&r);
    assert_null(strstr(t, "judged from"));
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_in_a_million_shows),
        cmocka_unit_test(kept_up_says_from_when),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
