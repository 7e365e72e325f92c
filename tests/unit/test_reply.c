/* Unit tests of the SMTP and POP3 reply parsers: multi-line, malformed and
 * overlong replies, EHLO keywords, POP3 error classes, the queue id of an
 * end-of-data reply (on the real servers' replies in tests/fixtures/replies). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/conn.h"
#include "engine/reply.h"

static int feed(struct smtp_reply *r, const char *line)
{
    return smtp_reply_feed(r, line, strlen(line));
}

static void single_line(void **st)
{
    struct smtp_reply r;
    smtp_reply_reset(&r);
    assert_int_equal(feed(&r, "250 2.0.0 Ok: queued as 4F3"), 1);
    assert_int_equal(r.code, 250);
    assert_string_equal(r.text, "250 2.0.0 Ok: queued as 4F3");
    smtp_reply_reset(&r);
    assert_int_equal(feed(&r, "354"), 1);   /* bare code, no text */
    assert_int_equal(r.code, 354);
}

static void multi_line(void **st)
{
    struct smtp_reply r;
    smtp_reply_reset(&r);
    assert_int_equal(feed(&r, "250-mail.example"), 0);
    assert_int_equal(feed(&r, "250-PIPELINING"), 0);
    assert_int_equal(feed(&r, "250 8BITMIME"), 1);
    assert_int_equal(r.lines, 3);
    assert_string_equal(r.text, "250-mail.example");
}

static void malformed(void **st)
{
    struct smtp_reply r;
    smtp_reply_reset(&r);
    assert_int_equal(feed(&r, "hello"), -1);
    assert_int_equal(feed(&r, "25"), -1);
    assert_int_equal(feed(&r, "250x"), -1);
    assert_int_equal(feed(&r, "650 no such class"), -1);
    assert_int_equal(feed(&r, "+OK pop3 here"), -1);
    smtp_reply_reset(&r);
    assert_int_equal(feed(&r, "250-first"), 0);
    assert_int_equal(feed(&r, "251 code changed mid-reply"), -1);
}

static void ehlo(void **st)
{
    const char *kw[] = { "PIPELINING", "pipelining", "STARTTLS", "SIZE 10240000", "8BITMIME",
                         "AUTH PLAIN LOGIN", "AUTH=LOGIN", "AUTH CRAM-MD5", "CHUNKING", "VRFY" };
    uint32_t want[] = { EXT_PIPELINING, EXT_PIPELINING, EXT_STARTTLS, EXT_SIZE, EXT_8BITMIME,
                        EXT_AUTH_PLAIN | EXT_AUTH_LOGIN, EXT_AUTH_LOGIN, EXT_AUTH_CRAM_MD5, EXT_CHUNKING, 0 };
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
        assert_int_equal(ehlo_keywords(kw[i], strlen(kw[i])), want[i]);
    assert_int_equal(ehlo_keywords("PIPELININGX", 11), 0);
}

static void pop3(void **st)
{
    const char *t;
    assert_int_equal(pop3_status("+OK 2 320", 9, &t), 1);
    assert_string_equal(t, "2 320");
    assert_int_equal(pop3_status("+OK", 3, &t), 1);
    assert_int_equal(pop3_status("-ERR [IN-USE] locked", 20, &t), 0);
    assert_string_equal(t, "[IN-USE] locked");
    assert_int_equal(pop3_status("+OKAY", 5, &t), -1);
    assert_int_equal(pop3_status("220 smtp", 8, &t), -1);
    assert_string_equal(pop3_err_kind("[IN-USE] Mailbox is locked"), "in_use");
    assert_string_equal(pop3_err_kind("Unable to lock maildrop"), "in_use");
    assert_string_equal(pop3_err_kind("[AUTH] Authentication failed."), "auth");
    assert_string_equal(pop3_err_kind("[SYS/TEMP] try later"), "sys_temp");
    assert_string_equal(pop3_err_kind("[SYS/PERM] broken"), "sys_perm");
    assert_string_equal(pop3_err_kind("no such message"), "other");
}

/* Lines arrive through conn's buffer: CRLF and bare LF both end a line, and a line
 * over the limit is reported instead of being cut. */
static void line_splitting(void **st)
{
    struct conn c;
    conn_init(&c, NULL, NULL, NULL);
    c.max_line = 16;
    const char *in = "250-a\r\n250 b\nabcdefghijklmnopqrstuvwxyz\r\n";
    buf_append(&c.in, in, strlen(in));
    char *line;
    size_t len;
    assert_int_equal(conn_line(&c, &line, &len), 1);
    assert_string_equal(line, "250-a");
    assert_int_equal(conn_line(&c, &line, &len), 1);
    assert_string_equal(line, "250 b");
    assert_int_equal(conn_line(&c, &line, &len), -1);
    buf_free(&c.in);
    conn_init(&c, NULL, NULL, NULL);
    buf_append(&c.in, "250 partial", 11);
    assert_int_equal(conn_line(&c, &line, &len), 0);
    buf_free(&c.in);
}

/* An endless multi-line reply is cut off, not followed until the timeout. */
static void smtp_reply_line_bound(void **state)
{
    (void)state;
    struct smtp_reply r;
    smtp_reply_reset(&r);
    for (int i = 0; i < SMTP_REPLY_MAX_LINES; i++)
        assert_int_equal(smtp_reply_feed(&r, "250-more", 8), 0);
    assert_int_equal(smtp_reply_feed(&r, "250-more", 8), -1);
    smtp_reply_reset(&r);
    for (int i = 0; i < SMTP_REPLY_MAX_LINES - 1; i++)
        assert_int_equal(smtp_reply_feed(&r, "250-more", 8), 0);
    assert_int_equal(smtp_reply_feed(&r, "250 last", 8), 1);
}

/* POP3 numbers and listing lines, as a hostile server may send them. */
static void pop3_numbers(void **state)
{
    (void)state;
    const char *end, *rest;
    size_t rl;
    unsigned n;
    assert_int_equal(pop3_number("12 3456", &end, &n), 0);
    assert_int_equal(n, 12);
    assert_string_equal(end, " 3456");
    assert_int_equal(pop3_number("4294967295", &end, &n), 0);
    assert_int_equal(n, 4294967295u);
    assert_int_equal(pop3_number("4294967296", &end, &n), -1);
    assert_int_equal(pop3_number("99999999999999999999999", &end, &n), -1);
    assert_int_equal(pop3_number("-1", &end, &n), -1);
    assert_int_equal(pop3_number("", &end, &n), -1);
    assert_int_equal(pop3_listing("3 whqtswO00WBw418f9t5JxYwZ", 26, &n, &rest, &rl), 0);
    assert_int_equal(n, 3);
    assert_int_equal(rl, 24);
    assert_memory_equal(rest, "whqtswO00WBw418f9t5JxYwZ", 24);
    assert_int_equal(pop3_listing("3", 1, &n, &rest, &rl), -1);
    assert_int_equal(pop3_listing("x 1", 3, &n, &rest, &rl), -1);
}

/* Every end-of-data reply of the fixture (the real servers' words): its id, exactly. */
static void queue_ids_of_real_servers(void **state)
{
    (void)state;
    char path[4096], line[512], id[SMTP_QID_MAX + 1];
    const char *top = getenv("TOP");
    snprintf(path, sizeof path, "%s/tests/fixtures/replies/eod.tsv", top ? top : ".");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int with = 0, without = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0] == '#' || !line[0])
            continue;
        char *tab = strchr(line, '\t');
        assert_non_null(tab);
        *tab = 0;
        size_t n = smtp_queue_id(tab + 1, strlen(tab + 1), id);
        if (!strcmp(line, "-")) {
            if (n)
                print_error("an id '%s' in: %s\n", id, tab + 1);
            assert_int_equal(n, 0);
            without++;
        } else {
            assert_string_equal(id, line);
            assert_int_equal(n, strlen(line));
            with++;
        }
    }
    fclose(f);
    assert_int_equal(with, 8);      /* Postfix, mailsoak-server, Exim, sendmail, OpenSMTPD, Dovecot (twice), Courier */
    assert_true(without >= 8);
}

/* A hostile reply: no control byte, no overlong or empty token, no other code. */
static void queue_id_bounds(void **state)
{
    (void)state;
    char id[SMTP_QID_MAX + 1], big[200];
#define QID(s) smtp_queue_id(s, sizeof s - 1, id)
    assert_int_equal(QID("250 2.0.0 Ok: queued as AB\x1b[2JC"), 0);
    assert_int_equal(QID("250 2.0.0 Ok: queued as AB\0CD"), 0);
    assert_int_equal(QID("250 2.0.0 Ok: queued as "), 0);
    assert_int_equal(QID("250 2.0.0 Ok: queued as"), 0);
    assert_int_equal(QID("451 4.3.0 Ok: queued as ABC"), 0);
    assert_int_equal(QID("250"), 0);
    assert_int_equal(QID("250 OK id="), 0);
    assert_int_equal(QID("250 2.0.0 <a@b> X"), 0);            /* not Dovecot's "Saved" */
    assert_int_equal(QID("250 2.0.0 <a@b"), 0);
    assert_int_equal(QID("250 X Message refused"), 0);
    assert_int_equal(QID("250 2.0.0 Ok: queued as ABC."), 3);  /* the full stop is not the id's */
    assert_string_equal(id, "ABC");
    assert_int_equal(QID("250-2.0.0 Ok: queued as 4XyZ1 (more)"), 5);
    assert_string_equal(id, "4XyZ1");
    assert_int_equal(QID("250 2.0.0: Ok: queued as 4XyZ1"), 5);
    assert_int_equal(QID("250 2.0.0 Ok: queued as 4XyZ1: more"), 5);   /* a trailing ':' is not the id's */
    memset(big, 'A', sizeof big);
    memcpy(big, "250 2.0.0 Ok: queued as ", 24);
    assert_int_equal(smtp_queue_id(big, 24 + SMTP_QID_MAX, id), SMTP_QID_MAX);
    assert_int_equal(smtp_queue_id(big, 24 + SMTP_QID_MAX + 1, id), 0);
    assert_string_equal(id, "");
#undef QID
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(smtp_reply_line_bound), cmocka_unit_test(pop3_numbers), cmocka_unit_test(single_line), cmocka_unit_test(multi_line), cmocka_unit_test(malformed),
        cmocka_unit_test(ehlo), cmocka_unit_test(pop3), cmocka_unit_test(line_splitting),
        cmocka_unit_test(queue_ids_of_real_servers), cmocka_unit_test(queue_id_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
