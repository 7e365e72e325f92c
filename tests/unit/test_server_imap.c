/* Unit tests of the reference server's pure IMAP code (imap_proto.c) and its
 * mailbox UIDs (imap_box.c): astrings with literals, sequence sets and '*', FETCH
 * items and sections, flags, SEARCH keys, strings, ENVELOPE and BODYSTRUCTURE of a
 * single-part and a multipart message, and UIDs that stay put across listings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/imap_box.h"
#include "server/imap_mime.h"
#include "server/imap_proto.h"

static struct imap_cur cur(const char *s)
{
    struct imap_cur c = { .p = s, .n = strlen(s) };
    return c;
}

static void test_astring(void **state)
{
    (void)state;
    char out[64];
    size_t n;
    struct imap_cur c = cur("a@b \"p \\\"w\\\\\" {3}\r\nx y");
    assert_int_equal(imap_astring(&c, out, sizeof out, &n), 0);
    assert_string_equal(out, "a@b");
    assert_int_equal(imap_sp(&c), 0);
    assert_int_equal(imap_astring(&c, out, sizeof out, &n), 0);
    assert_string_equal(out, "p \"w\\");
    assert_int_equal(imap_sp(&c), 0);
    assert_int_equal(imap_astring(&c, out, sizeof out, &n), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(out, "x y", 3);
    assert_true(imap_at_end(&c));
    /* a literal longer than what follows, or than the buffer, is refused */
    c = cur("{9}\r\nabc");
    assert_int_equal(imap_astring(&c, out, sizeof out, &n), -1);
    c = cur("{70+}\r\n0123456789012345678901234567890123456789012345678901234567890123456789");
    assert_int_equal(imap_astring(&c, out, sizeof out, &n), -1);
    c = cur("\"unterminated");
    assert_int_equal(imap_astring(&c, out, sizeof out, &n), -1);
}

static void test_sets(void **state)
{
    (void)state;
    struct imap_set s;
    assert_int_equal(imap_set_parse("1:3,7,9:*", 9, &s), 0);
    assert_int_equal(s.n, 3);
    assert_true(imap_set_has(&s, 2, 20));
    assert_false(imap_set_has(&s, 5, 20));
    assert_true(imap_set_has(&s, 20, 20));
    assert_false(imap_set_has(&s, 21, 20));
    assert_int_equal(imap_set_parse("*:4", 3, &s), 0);   /* reversed: 4..star */
    assert_true(imap_set_has(&s, 6, 8));
    assert_true(imap_set_has(&s, 4, 2));    /* star below 4: 2..4 */
    assert_int_equal(imap_set_parse("0", 1, &s), -1);
    assert_int_equal(imap_set_parse("1,,2", 4, &s), -1);
    assert_int_equal(imap_set_parse("4294967296", 10, &s), -1);
    char many[IMAP_SET_MAX * 4 + 8];
    size_t o = 0;
    for (int i = 0; i <= IMAP_SET_MAX; i++)
        o += (size_t)snprintf(many + o, sizeof many - o, "%s%d", i ? "," : "", i + 1);
    assert_int_equal(imap_set_parse(many, o, &s), -1);
}

static void test_fetch_items(void **state)
{
    (void)state;
    struct imap_fetch f;
    const char *why;
    struct imap_cur c = cur("(UID FLAGS RFC822.SIZE BODY.PEEK[HEADER.FIELDS (From Subject)] body[]<0.10>)");
    assert_int_equal(imap_fetch_parse(&c, &f, &why), 0);
    assert_int_equal(f.what & (FA_UID | FA_FLAGS | FA_SIZE), FA_UID | FA_FLAGS | FA_SIZE);
    assert_int_equal(f.nsec, 2);
    assert_int_equal(f.sec[0].sec, SEC_FIELDS);
    assert_true(f.sec[0].peek);
    assert_string_equal(f.sec[0].fields, "From Subject");
    assert_string_equal(f.sec[0].label, "BODY[HEADER.FIELDS (FROM SUBJECT)]");
    assert_false(f.sec[1].peek);
    assert_true(f.sec[1].partial);
    assert_string_equal(f.sec[1].label, "BODY[]<0>");
    assert_true(imap_fetch_needs_body(&f));
    assert_true(imap_fetch_sets_seen(&f));
    c = cur("FAST");
    assert_int_equal(imap_fetch_parse(&c, &f, &why), 0);
    assert_false(imap_fetch_needs_body(&f));
    c = cur("(UID BODY[MIME])");
    assert_int_equal(imap_fetch_parse(&c, &f, &why), -1);
    c = cur("(UID BODY[HEADER");
    assert_int_equal(imap_fetch_parse(&c, &f, &why), -1);
    c = cur("NONSENSE");
    assert_int_equal(imap_fetch_parse(&c, &f, &why), -1);
}

static void test_flags_search(void **state)
{
    (void)state;
    unsigned fl;
    struct imap_cur c = cur("(\\Seen \\Deleted $Junk)");
    assert_int_equal(imap_flags_parse(&c, &fl), 0);
    assert_int_equal(fl, IF_SEEN | IF_DELETED);
    struct buf b = { 0 };
    imap_flags_write(&b, fl);
    assert_int_equal(b.len, strlen("(\\Seen \\Deleted)"));
    assert_memory_equal(b.p, "(\\Seen \\Deleted)", b.len);
    buf_free(&b);
    c = cur("(\\Bogus)");
    assert_int_equal(imap_flags_parse(&c, &fl), -1);

    struct imap_search q;
    const char *why;
    c = cur("UNSEEN UID 3:*");
    assert_int_equal(imap_search_parse(&c, &q, &why), 0);
    assert_true(imap_search_match(&q, 1, 5, 0, 2, 9));
    assert_false(imap_search_match(&q, 1, 2, 0, 2, 9));
    assert_false(imap_search_match(&q, 1, 5, IF_SEEN, 2, 9));
    imap_search_free(&q);
    c = cur("NOT DELETED");
    assert_int_equal(imap_search_parse(&c, &q, &why), 0);
    assert_true(imap_search_match(&q, 1, 1, IF_SEEN, 1, 1));
    assert_false(imap_search_match(&q, 1, 1, IF_DELETED, 1, 1));
    imap_search_free(&q);
    c = cur("HEADER X-Y z");
    assert_int_equal(imap_search_parse(&c, &q, &why), -1);
}

static void test_strings(void **state)
{
    (void)state;
    struct buf b = { 0 };
    imap_string(&b, "a \"q\" \\", 7);
    assert_int_equal(b.len, strlen("\"a \\\"q\\\" \\\\\""));
    assert_memory_equal(b.p, "\"a \\\"q\\\" \\\\\"", b.len);
    b.len = 0;
    imap_string(&b, "x\r\ny", 4);
    assert_memory_equal(b.p, "{4}\r\nx\r\ny", b.len);
    buf_free(&b);
}

static const char single[] =
    "Date: Sun, 6 Dec 2026 04:00:00 +0000\r\n"
    "Subject: hi\r\n\tthere\r\n"
    "From: \"Ann, A.\" <ann@test.local>\r\n"
    "To: a@test.local, Bob <b@test.local>\r\n"
    "Message-ID: <1@x>\r\n"
    "\r\n"
    "line one\r\nline two\r\n";

static void test_envelope(void **state)
{
    (void)state;
    struct buf b = { 0 };
    imap_envelope(&b, single, strlen(single));
    buf_append(&b, "", 1);
    /* addresses follow each other with no space (RFC 3501's "(" 1*address ")") */
    assert_string_equal(b.p,
        "(\"Sun, 6 Dec 2026 04:00:00 +0000\" \"hi there\" ((\"Ann, A.\" NIL \"ann\" \"test.local\")) "
        "((\"Ann, A.\" NIL \"ann\" \"test.local\")) ((\"Ann, A.\" NIL \"ann\" \"test.local\")) "
        "((NIL NIL \"a\" \"test.local\")(\"Bob\" NIL \"b\" \"test.local\")) NIL NIL NIL \"<1@x>\")");
    b.len = 0;
    imap_bodystructure(&b, single, strlen(single));
    buf_append(&b, "", 1);
    assert_string_equal(b.p, "(\"TEXT\" \"PLAIN\" (\"CHARSET\" \"us-ascii\") NIL NIL \"7BIT\" 20 2)");
    buf_free(&b);
}

static void test_multipart(void **state)
{
    (void)state;
    static const char m[] =
        "Content-Type: multipart/mixed; boundary=\"XX\"\r\n\r\n"
        "preamble\r\n--XX\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nhello\r\n"
        "--XX\r\nContent-Type: application/pdf\r\nContent-Transfer-Encoding: base64\r\n\r\nQUJD\r\n"
        "--XX--\r\n";
    struct buf b = { 0 };
    imap_bodystructure(&b, m, strlen(m));
    buf_append(&b, "", 1);
    assert_string_equal(b.p,
        "((\"TEXT\" \"PLAIN\" (\"CHARSET\" \"utf-8\") NIL NIL \"7BIT\" 5 1)"
        "(\"APPLICATION\" \"PDF\" NIL NIL NIL \"BASE64\" 4) \"MIXED\")");
    buf_free(&b);
}

static void test_sections(void **state)
{
    (void)state;
    struct imap_att a = { .sec = SEC_FIELDS };
    snprintf(a.fields, sizeof a.fields, "subject \"TO\"");
    struct buf b = { 0 };
    imap_section(&b, single, strlen(single), &a);
    buf_append(&b, "", 1);
    assert_string_equal(b.p, "Subject: hi\r\n\tthere\r\nTo: a@test.local, Bob <b@test.local>\r\n\r\n");
    b.len = 0;
    a.sec = SEC_TEXT;
    imap_section(&b, single, strlen(single), &a);
    buf_append(&b, "", 1);
    assert_string_equal(b.p, "line one\r\nline two\r\n");
    b.len = 0;
    imap_crlf(&b, "a\nb\r\nc", 6);
    buf_append(&b, "", 1);
    assert_string_equal(b.p, "a\r\nb\r\nc\r\n");
    buf_free(&b);
}

static void add(struct srv_items *l, const char *uid)
{
    struct srv_item it = { 0 };
    snprintf(it.uid, sizeof it.uid, "%s", uid);
    srv_items_add(l, &it);
}

static void test_box_uids(void **state)
{
    (void)state;
    struct imap_box b = { .uidnext = 1 };
    struct srv_items l = { 0 };
    add(&l, "100.M2");
    add(&l, "100.M1");
    imap_box_merge(&b, &l, 5);
    assert_int_equal(b.n, 2);
    assert_string_equal(b.v[0].sid, "100.M1");     /* delivery order: the store's uid order */
    assert_int_equal(b.v[0].uid, 1);
    assert_int_equal(b.v[1].uid, 2);
    srv_items_free(&l);
    /* M1 left, M3 came: M2 keeps UID 2, M3 gets 3 */
    add(&l, "100.M3");
    add(&l, "100.M2");
    imap_box_merge(&b, &l, 6);
    assert_int_equal(b.n, 2);
    assert_null(imap_box_find(&b, 1));
    assert_string_equal(imap_box_find(&b, 2)->sid, "100.M2");
    assert_string_equal(imap_box_find(&b, 3)->sid, "100.M3");
    imap_box_find(&b, 2)->flags = IF_SEEN;
    assert_int_equal(imap_box_renumber(&b, 2), 4);
    assert_null(imap_box_find(&b, 2));
    assert_int_equal(imap_box_find(&b, 4)->flags, 0);
    assert_string_equal(imap_box_find(&b, 4)->sid, "100.M2");
    imap_box_remove(&b, 3);
    assert_int_equal(b.n, 1);
    srv_items_free(&l);
    free(b.v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_astring),
        cmocka_unit_test(test_sets),
        cmocka_unit_test(test_fetch_items),
        cmocka_unit_test(test_flags_search),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_envelope),
        cmocka_unit_test(test_multipart),
        cmocka_unit_test(test_sections),
        cmocka_unit_test(test_box_uids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
