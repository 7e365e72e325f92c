/* Unit tests of printable() and utf8_cut(): a server's text reaches the table, the
 * JSON and the terminal only through them (issue 13 item 2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "lib/printable.h"

/* printable() into outlen bytes of a larger buffer, whose bytes past outlen must
 * stay untouched: a write past the bound fails here, not only under ASan. */
static void check(const char *in, size_t n, size_t outlen, const char *want)
{
    char out[512];
    assert_true(outlen < sizeof out);
    memset(out, 'Z', sizeof out);
    size_t len = printable(out, outlen, in, n);
    for (size_t i = outlen; i < sizeof out; i++)
        if (out[i] != 'Z')
            fail_msg("printable() wrote byte %zu of a %zu-byte buffer", i, outlen);
    assert_string_equal(out, want);
    assert_int_equal(len, strlen(want));
}

static void keeps_text(void **st)
{
    const char *ok = "250 2.0.0 Ok: queued as 4Xyz", *utf8 = "554 \xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
    check(ok, strlen(ok), 100, ok);
    check(utf8, strlen(utf8), 100, utf8);
    check("a\\b", 3, 100, "a\\b");
}

static void escapes_controls(void **st)
{
    check("451 \x1b[2J\r\n", 10, 100, "451 \\x1b[2J\\x0d\\x0a");
    check("a\0b\x7f\t", 5, 100, "a\\x00b\\x7f\\x09");
    check("C1 \xc2\x9b" "2J", 7, 100, "C1 \\xc2\\x9b2J");    /* U+009B, CSI in 8 bits */
    check("\xc2\xa0", 2, 100, "\xc2\xa0");                     /* U+00A0 is printable */
}

static void escapes_malformed(void **st)
{
    check("451 \xff\xfe\x80", 7, 100, "451 \\xff\\xfe\\x80");
    check("\xc0\xaf", 2, 100, "\\xc0\\xaf");                   /* overlong '/' */
    check("\xe0\x80\xaf", 3, 100, "\\xe0\\x80\\xaf");          /* overlong */
    check("\xed\xa0\x80", 3, 100, "\\xed\\xa0\\x80");          /* a surrogate */
    check("\xf4\x90\x80\x80", 4, 100, "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
    check("\xc3" "A", 2, 100, "\\xc3A");                       /* the next byte is kept */
    check("x\xe2\x82", 3, 100, "x\\xe2\\x82");                 /* truncated at the end */
}

static void cuts_between_characters(void **st)
{
    /* 100 x e-acute in 160 bytes: 79 characters, not 79 and a half */
    char in[200], out[160];
    for (int i = 0; i < 100; i++)
        memcpy(in + 2 * i, "\xc3\xa9", 2);
    size_t n = printable(out, sizeof out, in, 200);
    assert_int_equal(n, 158);
    json_t *j = json_string(out);              /* jansson refuses malformed UTF-8 */
    assert_non_null(j);
    json_decref(j);
    check("ab\x1b", 3, 5, "ab");                /* no half escape */
    check("abcdef", 6, 4, "abc");
    check("abc", 3, 1, "");
}

/* At the bound: what fits exactly with its NUL is kept, one byte less cuts it
 * (a character, an escape), for each width. */
static void the_bound_at_its_edge(void **st)
{
    check("abc", 3, 4, "abc");
    check("abc", 3, 3, "ab");
    check("a\xc3\xa9", 3, 4, "a\xc3\xa9");
    check("a\xc3\xa9", 3, 3, "a");
    check("a\xf0\x9f\x98\x80", 5, 6, "a\xf0\x9f\x98\x80");
    check("a\xf0\x9f\x98\x80", 5, 5, "a");
    check("ab\x1b", 3, 7, "ab\\x1b");
    check("ab\x1b", 3, 6, "ab");
    check("\x1b", 1, 5, "\\x1b");
    check("\x1b", 1, 4, "");
    check("a", 1, 2, "a");
    check("a", 1, 1, "");
}

static void idempotent(void **st)
{
    static const char nasty[] = "451 \xff\x1b[2J \xc3\xa9\0\\x1b \xe2\x82";
    char once[200], twice[200];
    size_t n = printable(once, sizeof once, nasty, sizeof nasty - 1);
    assert_int_equal(printable(twice, sizeof twice, once, n), n);
    assert_string_equal(once, twice);
}

static void cut(void **st)
{
    const char *s = "ab\xc3\xa9" "cd";      /* a b e-acute c d */
    assert_int_equal(utf8_cut(s, 6, 10), 6);
    assert_int_equal(utf8_cut(s, 6, 4), 4);
    assert_int_equal(utf8_cut(s, 6, 3), 2);   /* not inside e-acute */
    assert_int_equal(utf8_cut(s, 6, 2), 2);
    const char *e = "a\xf0\x9f\x98\x80";
    assert_int_equal(utf8_cut(e, 5, 4), 1);
    assert_int_equal(utf8_cut(e, 5, 2), 1);
    assert_int_equal(utf8_cut("a\xff\xff\xff", 4, 2), 2);   /* garbage is cut anywhere */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keeps_text), cmocka_unit_test(escapes_controls), cmocka_unit_test(escapes_malformed),
        cmocka_unit_test(cuts_between_characters), cmocka_unit_test(the_bound_at_its_edge),
        cmocka_unit_test(idempotent), cmocka_unit_test(cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
