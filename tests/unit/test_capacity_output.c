/* test_capacity_output: the capacity search's HTML page (capacity/output.c) as a
 * reader meets it: named by its label, or by itself without one (never "Capacity:
 * capacity"), and a step's verdict with its reason in a cell that wraps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "capacity/output.h"

static const struct search_rules rules = { .start = 10, .factor = 2, .max_rate = 100, .precision = 0.05, .confirm = 1,
                                           .confirm_rounds = 3 };

static char *page(const char *label)
{
    struct step_record st = { .n = 1, .phase = "coarse", .rate = 10 };
    st.j.verdict = STEP_INVALID;
    st.j.first_failed = -1;
    snprintf(st.j.why, sizeof st.j.why, "the tester held back 12 %% of the messages due: a longer reason than a cell holds");
    struct capacity_record c = { .label = label, .steps = &st, .nsteps = 1 };
    search_init(&c.s, &rules);
    char *html;
    size_t n;
    FILE *f = open_memstream(&html, &n);
    assert_non_null(f);
    capacity_html(f, &c);
    fclose(f);
    return html;
}

static void named_by_label_or_by_itself(void **s)
{
    (void)s;
    char *html = page("capacity");
    assert_non_null(strstr(html, "<h1>Capacity</h1>"));
    assert_non_null(strstr(html, "<title>mailsoak capacity</title>"));
    assert_null(strstr(html, "Capacity: capacity"));
    free(html);
    html = page("");
    assert_non_null(strstr(html, "<h1>Capacity</h1>"));
    free(html);
    html = page("maildir <x>");
    assert_non_null(strstr(html, "<h1>Capacity: maildir &lt;x&gt;</h1>"));
    free(html);
}

static void verdict_cell_wraps(void **s)
{
    (void)s;
    char *html = page("");
    assert_non_null(strstr(html, "td.why{white-space:normal"));
    assert_non_null(strstr(html, "<td class='l why invalid'>invalid the tester held back 12 % of the messages due"));
    free(html);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(named_by_label_or_by_itself),
        cmocka_unit_test(verdict_cell_wraps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
