/* Unit tests of the reference server's pure protocol code: DATA dot-unstuffing fed
 * in every possible split, RETR/TOP dot-stuffing, SMTP and POP3 command parsing,
 * MAIL parameters, base64 and SASL PLAIN. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "server/proto.h"
#include "server/store/store.h"

/* Feeds in (n bytes) split at `cut`; returns the bytes consumed in total. */
static size_t feed_split(struct srv_data *d, const char *in, size_t n, size_t cut, struct buf *out)
{
    size_t used = srv_data_feed(d, in, cut, out);
    if (d->done || used < cut)
        return used;
    return used + srv_data_feed(d, in + cut, n - cut, out);
}

static void check_unstuff(const char *in, const char *want, size_t want_consumed)
{
    size_t n = strlen(in);
    for (size_t cut = 0; cut <= n; cut++) {
        struct srv_data d;
        struct buf out = { 0 };
        srv_data_init(&d, 0);
        size_t used = feed_split(&d, in, n, cut, &out);
        assert_true(d.done);
        assert_int_equal(used, want_consumed);
        assert_int_equal(out.len, strlen(want));
        assert_memory_equal(out.p ? out.p : "", want, out.len);
        buf_free(&out);
    }
}

static void test_unstuff(void **state)
{
    (void)state;
    check_unstuff("a\r\nb\r\n.\r\n", "a\r\nb\r\n", 9);
    check_unstuff(".\r\n", "", 3);
    check_unstuff("..\r\n.\r\n", ".\r\n", 7);
    check_unstuff("..x\r\n.y\r\n.\r\nNEXT", ".x\r\ny\r\n", 12);   /* stops at the terminator */
    check_unstuff("bare lf\n.\n", "bare lf\n", 10);                /* LF-only client */
    check_unstuff(".\rx\r\n.\r\n", "\rx\r\n", 8);
    check_unstuff("a.\r\n. \r\n.\r\n", "a.\r\n \r\n", 11);          /* dots not at line start stay */
}

static void test_unstuff_overflow(void **state)
{
    (void)state;
    struct srv_data d;
    struct buf out = { 0 };
    const char *in = "0123456789\r\n0123456789\r\n.\r\n";
    srv_data_init(&d, 15);
    size_t used = srv_data_feed(&d, in, strlen(in), &out);
    assert_true(d.done);
    assert_true(d.overflow);
    assert_int_equal(used, strlen(in));       /* the whole message is still consumed */
    assert_true(out.len <= 15);
    buf_free(&out);
}

static void check_stuff(const char *msg, long lines, const char *want)
{
    struct buf out = { 0 };
    srv_pop3_stuff(&out, msg, strlen(msg), lines);
    assert_int_equal(out.len, strlen(want));
    assert_memory_equal(out.p, want, out.len);
    buf_free(&out);
}

static void test_stuff(void **state)
{
    (void)state;
    check_stuff("", -1, ".\r\n");
    check_stuff("a\r\n.b\r\n", -1, "a\r\n..b\r\n.\r\n");
    check_stuff("a\nb", -1, "a\r\nb\r\n.\r\n");              /* LF stored (mbox) goes out CRLF */
    check_stuff("H: 1\r\n\r\nl1\r\n.l2\r\nl3\r\n", 0, "H: 1\r\n\r\n.\r\n");
    check_stuff("H: 1\r\n\r\nl1\r\n.l2\r\nl3\r\n", 2, "H: 1\r\n\r\nl1\r\n..l2\r\n.\r\n");
    check_stuff("H: 1\r\n\r\nl1\r\n", 10, "H: 1\r\n\r\nl1\r\n.\r\n");
}

static void test_crlf_size(void **state)
{
    (void)state;
    assert_int_equal(srv_crlf_size("a\r\nb\r\n", 6), 6);
    assert_int_equal(srv_crlf_size("a\nb\n", 4), 6);
    assert_int_equal(srv_crlf_size("a\nb", 3), 6);
    assert_int_equal(srv_crlf_size("", 0), 0);
}

static void test_smtp_verbs(void **state)
{
    (void)state;
    const char *arg;
    assert_int_equal(srv_smtp_verb("ehlo x.test", 11, &arg), SV_EHLO);
    assert_string_equal(arg, "x.test");
    assert_int_equal(srv_smtp_verb("MAIL FROM:<a@b>", 15, &arg), SV_MAIL);
    assert_string_equal(arg, "FROM:<a@b>");
    assert_int_equal(srv_smtp_verb("QUIT", 4, &arg), SV_QUIT);
    assert_string_equal(arg, "");
    assert_int_equal(srv_smtp_verb("DATAX", 5, &arg), SV_UNKNOWN);
    assert_int_equal(srv_smtp_verb("", 0, &arg), SV_UNKNOWN);
}

static void test_smtp_path(void **state)
{
    (void)state;
    const char *a, *p;
    size_t n;
    assert_int_equal(srv_smtp_path("FROM:<a@b.c> SIZE=10", "FROM", &a, &n, &p), 0);
    assert_int_equal(n, 5);
    assert_memory_equal(a, "a@b.c", 5);
    assert_string_equal(p, "SIZE=10");
    assert_int_equal(srv_smtp_path("from: <>", "FROM", &a, &n, &p), 0);
    assert_int_equal(n, 0);
    assert_int_equal(srv_smtp_path("TO:<@r1,@r2:u@d>", "TO", &a, &n, &p), 0);
    assert_memory_equal(a, "u@d", 3);
    assert_int_equal(n, 3);
    assert_int_equal(srv_smtp_path("TO:u@d", "TO", &a, &n, &p), 0);
    assert_int_equal(n, 3);
    assert_int_equal(srv_smtp_path("TO:<u@d", "TO", &a, &n, &p), -1);
    assert_int_equal(srv_smtp_path("FROM:<a>", "TO", &a, &n, &p), -1);
    assert_int_equal(srv_smtp_path("TO:<a>x", "TO", &a, &n, &p), -1);
}

static void test_mail_params(void **state)
{
    (void)state;
    struct srv_mail_params mp;
    const char *why;
    assert_int_equal(srv_mail_params("SIZE=1234 BODY=8BITMIME", &mp, &why), 0);
    assert_int_equal(mp.size, 1234);
    assert_true(mp.body_8bit);
    assert_int_equal(srv_mail_params("", &mp, &why), 0);
    assert_int_equal(mp.size, 0);
    assert_int_equal(srv_mail_params("SIZE=12x", &mp, &why), -1);
    assert_int_equal(srv_mail_params("SMTPUTF8", &mp, &why), -1);
}

static void test_pop3_verbs(void **state)
{
    (void)state;
    const char *arg;
    assert_int_equal(srv_pop3_verb("retr 12", 7, &arg), PV_RETR);
    assert_string_equal(arg, "12");
    assert_int_equal(srv_pop3_verb("TOP 1 5", 7, &arg), PV_TOP);
    assert_string_equal(arg, "1 5");
    assert_int_equal(srv_pop3_verb("CAPA", 4, &arg), PV_CAPA);
    assert_int_equal(srv_pop3_verb("XTND", 4, &arg), PV_UNKNOWN);
}

static void test_b64_sasl(void **state)
{
    (void)state;
    char enc[64], dec[64];
    size_t n;
    srv_b64_encode("\0u@d\0pw", 7, enc);
    assert_string_equal(enc, "AHVAZABwdw==");
    assert_int_equal(srv_b64_decode(enc, strlen(enc), dec, sizeof dec, &n), 0);
    assert_int_equal(n, 7);
    const char *u, *p;
    size_t ul, pl;
    assert_int_equal(srv_sasl_plain(dec, n, &u, &ul, &p, &pl), 0);
    assert_int_equal(ul, 3);
    assert_memory_equal(u, "u@d", 3);
    assert_int_equal(pl, 2);
    assert_memory_equal(p, "pw", 2);
    assert_int_equal(srv_b64_decode("a*b=", 4, dec, sizeof dec, &n), -1);
    assert_int_equal(srv_sasl_plain("nozero", 6, &u, &ul, &p, &pl), -1);
}

/* Hostile replies are configured as text with escapes: any byte can be named. */
static void test_unescape(void **state)
{
    (void)state;
    char out[64];
    size_t n = srv_unescape("451 \\xff\\x1b[2J\\0x\\r\\n\\\\", out, sizeof out);
    assert_int_equal(n, 14);
    assert_memory_equal(out, "451 \xff\x1b[2J\0x\r\n\\", 14);
    assert_int_equal(srv_unescape("abcdef", out, 3), 3);
}

static void test_forge_id(void **state)
{
    (void)state;
    struct buf b = { 0 };
    const char *m = "Received: x\r\nX-Mailsoak-Id: 0a1b2c3d-2a/3\r\nSubject: s\r\n\r\nX-Mailsoak-Id: body\r\n";
    buf_append(&b, m, strlen(m));
    srv_forge_id(&b, "ffffffffffffffff/64");
    const char *want = "Received: x\r\nX-Mailsoak-Id: 0a1b2c3d-ffffffffffffffff/64\r\nSubject: s\r\n\r\n"
                       "X-Mailsoak-Id: body\r\n";
    assert_int_equal(b.len - b.off, strlen(want));
    assert_memory_equal(b.p + b.off, want, strlen(want));
    buf_free(&b);
    const char *none = "Subject: s\r\n\r\nX-Mailsoak-Id: 0a1b2c3d-1\r\n";   /* only in the body */
    buf_append(&b, none, strlen(none));
    srv_forge_id(&b, "0");
    assert_memory_equal(b.p + b.off, none, strlen(none));
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unstuff),
        cmocka_unit_test(test_unstuff_overflow),
        cmocka_unit_test(test_stuff),
        cmocka_unit_test(test_crlf_size),
        cmocka_unit_test(test_smtp_verbs),
        cmocka_unit_test(test_smtp_path),
        cmocka_unit_test(test_mail_params),
        cmocka_unit_test(test_pop3_verbs),
        cmocka_unit_test(test_b64_sasl),
        cmocka_unit_test(test_unescape),
        cmocka_unit_test(test_forge_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
