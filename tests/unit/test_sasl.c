/* Unit tests of the AUTH and APOP exchanges against the RFCs' own examples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/sasl.h"

static void plain(void **st)
{
    char out[128];
    assert_int_equal(sasl_plain("tim", "tanstaaftanstaaf", out, sizeof out), 0);
    assert_string_equal(out, "AHRpbQB0YW5zdGFhZnRhbnN0YWFm");    /* base64("\0tim\0tanstaaftanstaaf") */
    assert_int_equal(sasl_plain("tim", "x", out, 4), -1);
}

static void cram_md5(void **st)
{
    /* RFC 2195 section 2 */
    char chal[128], out[256];
    const char *c = "<1896.697170952@postoffice.reston.mci.net>";
    sasl_b64(c, strlen(c), chal);
    assert_string_equal(chal, "PDE4OTYuNjk3MTcwOTUyQHBvc3RvZmZpY2UucmVzdG9uLm1jaS5uZXQ+");
    assert_int_equal(sasl_cram_md5("tim", "tanstaaftanstaaf", chal, out, sizeof out), 0);
    assert_string_equal(out, "dGltIGI5MTNhNjAyYzdlZGE3YTQ5NWI0ZTZlNzMzNGQzODkw");
    assert_int_equal(sasl_cram_md5("tim", "x", "not base64!", out, sizeof out), -1);
}

/* A hostile server's challenge: base64 has at most two '=' of padding. "====" once
 * made the decoded length -1 and HMAC read the stack (issue 13). */
static void cram_md5_padding(void **st)
{
    char out[256];
    assert_int_equal(sasl_cram_md5("tim", "x", "====", out, sizeof out), -1);
    assert_int_equal(sasl_cram_md5("tim", "x", "A===", out, sizeof out), -1);
    assert_int_equal(sasl_cram_md5("tim", "x", "QUJD====", out, sizeof out), -1);
    assert_int_equal(sasl_cram_md5("tim", "x", "QQ=A", out, sizeof out), -1);   /* padding inside */
    /* one and two '=' are padding: "AB" and "A" are challenges like any other */
    assert_int_equal(sasl_cram_md5("tim", "x", "QUI=", out, sizeof out), 0);
    assert_int_equal(sasl_cram_md5("tim", "x", "QQ==", out, sizeof out), 0);
}

static void apop(void **st)
{
    /* RFC 1939 section 7 */
    char hex[33];
    assert_int_equal(pop3_apop("POP3 server ready <1896.697170952@dbc.mtview.ca.us>", "tanstaaf", hex), 0);
    assert_string_equal(hex, "c4c9334bac560ecc979e58001b3e22fb");
    assert_int_equal(pop3_apop("Dovecot ready.", "tanstaaf", hex), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain), cmocka_unit_test(cram_md5), cmocka_unit_test(cram_md5_padding),
        cmocka_unit_test(apop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
