/* Unit tests of the error table's examples: they hold a server's words, and must
 * reach the table and the JSON as printable, valid UTF-8 (issue 13 item 2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "engine/reply.h"
#include "engine/stats.h"

static struct wstats *fresh(void)
{
    struct wstats *s = malloc(sizeof *s);   /* too big for the stack */
    assert_non_null(s);
    stats_init(s, 5);
    return s;
}

/* The example is valid UTF-8 (jansson takes it) and holds no control byte. */
static void assert_safe(const char *ex)
{
    json_t *j = json_string(ex);
    assert_non_null(j);
    json_decref(j);
    for (const unsigned char *p = (const unsigned char *)ex; *p; p++)
        assert_true(*p >= 0x20 && *p != 0x7f);
}

static void hostile_reply(void **st)
{
    struct wstats *s = fresh();
    static const char line[] = "451 \xff\xfe\x1b[2J\0after";
    stats_error_text(s, "smtp_rcpt_451", line, sizeof line - 1);
    assert_int_equal(s->ex[0].n, 1);
    assert_string_equal(s->ex[0].text[0], "451 \\xff\\xfe\\x1b[2J\\x00after");
    assert_safe(s->ex[0].text[0]);
    free(s);
}

/* "554 " and 100 e-acute: the reply keeps 159 bytes, cut between characters. */
static void long_utf8_reply(void **st)
{
    struct wstats *s = fresh();
    char line[300] = "554 ";
    for (int i = 0; i < 100; i++)
        strcat(line, "\xc3\xa9");
    struct smtp_reply r;
    smtp_reply_reset(&r);
    assert_int_equal(smtp_reply_feed(&r, line, strlen(line)), 1);
    assert_int_equal(r.len, 158);
    stats_error_text(s, "smtp_eod_554", r.text, r.len);
    assert_int_equal(strlen(s->ex[0].text[0]), 158);
    assert_safe(s->ex[0].text[0]);
    free(s);
}

static void formatted_examples(void **st)
{
    struct wstats *s = fresh();
    stats_example(&s->corrupt, 5, "%s-%x for %s", "\x1b]0;pwned\x07", 7, "u@x");
    assert_string_equal(s->corrupt.text[0], "\\x1b]0;pwned\\x07-7 for u@x");
    /* merged again by the controller: not escaped twice */
    struct err_examples merged = { 0 };
    stats_example(&merged, 5, "%s", s->corrupt.text[0]);
    assert_string_equal(merged.text[0], s->corrupt.text[0]);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hostile_reply), cmocka_unit_test(long_utf8_reply), cmocka_unit_test(formatted_examples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
