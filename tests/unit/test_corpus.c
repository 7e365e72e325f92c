/* Unit tests of the corpus reader: an mbox cut at its "From " lines, or by a
 * Content-Length that lands on the next one (Dovecot does not escape bodies); a
 * maildir and a folder of files indexed in name order; each message made
 * sendable: the dropped headers gone with their continuations, mboxrd's ">From "
 * unescaped, lines cut at 998 bytes, NUL and bare CR replaced, CRLF everywhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/corpus.h"
#include "tmpdir.h"

struct spans {
    size_t off[8], len[8], n;
};

static void on_span(void *arg, size_t off, size_t len)
{
    struct spans *s = arg;
    s->off[s->n] = off;
    s->len[s->n++] = len;
}

static void mbox_split_by_from_lines_and_content_length(void **st)
{
    (void)st;
    const char *m = "junk before\n"
                    "From a@x Mon Nov 30 10:00:00 2026\nSubject: one\n\nbody 1\n\n"
                    "From b@x Mon Nov 30 10:00:01 2026\nSubject: two\nContent-Length: 22\n\n"
                    "From inside the body\n\n"
                    "From c@x Mon Nov 30 10:00:02 2026\nSubject: three\n\nlast";
    struct spans s = { 0 };
    corpus_mbox_split(m, strlen(m), on_span, &s);
    assert_int_equal(s.n, 3);        /* "From inside" is within message two's Content-Length */
    assert_memory_equal(m + s.off[0], "Subject: one\n", 13);
    assert_memory_equal(m + s.off[1], "Subject: two\n", 13);
    assert_true(strstr(m + s.off[1], "From inside") < m + s.off[1] + s.len[1]);
    assert_memory_equal(m + s.off[2], "Subject: three\n", 15);
    assert_int_equal(s.off[2] + s.len[2], strlen(m));
    /* a Content-Length that lands elsewhere is not trusted: the From_ lines decide */
    const char *bad = "From a@x\nContent-Length: 3\n\nabc def\nFrom b@x\nSubject: x\n\ny\n";
    struct spans t = { 0 };
    corpus_mbox_split(bad, strlen(bad), on_span, &t);
    assert_int_equal(t.n, 2);
}

static void prepare_makes_it_sendable(void **st)
{
    (void)st;
    char raw[4096];
    int n = snprintf(raw, sizeof raw,
                     "From: Alice <a@x>\nTo: Bob <b@x>,\n  Carol <c@x>\nReceived: from h\n\tby h2\nSubject: hi\n"
                     "X-Mailsoak-Id: 12345678-1\nMessage-ID: <m@x>\nnot a header line\n\n"
                     ">From the top\n>>From twice\nnul\x01 here\rbare\n%s\n", "");
    char *p = raw + n;
    memset(p, 'z', 2000);            /* a 2000-byte line */
    p[2000] = '\n';
    n += 2001;
    raw[strstr(raw, "nul") - raw + 3] = '\0';
    struct corpus_buf hdr = { 0 }, body = { 0 };
    corpus_prepare(raw, (size_t)n, 1, &hdr, &body);
    hdr.p = realloc(hdr.p, hdr.len + 1);
    hdr.p[hdr.len] = 0;
    assert_string_equal(hdr.p, "From: Alice <a@x>\r\nSubject: hi\r\n");
    assert_true(body.len > 2000);
    assert_memory_equal(body.p, "From the top\r\n>From twice\r\nnul  here bare\r\n\r\n", 45);
    /* 2000 bytes of z cut into 998 + 998 + 4 */
    const char *z = body.p + 45;
    assert_memory_equal(z + 998, "\r\n", 2);
    assert_memory_equal(z + 2 * 998 + 2, "\r\n", 2);
    assert_memory_equal(z + 2 * 1000 + 4, "\r\n", 2);
    assert_int_equal(body.len, 45 + 2000 + 3 * 2);
    /* headers only: the body is one empty line */
    corpus_prepare("Subject: x\n", 11, 0, &hdr, &body);
    assert_int_equal(body.len, 2);
    corpus_buf_free(&hdr);
    corpus_buf_free(&body);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void folders_and_maildirs(void **st)
{
    (void)st;
    char dir[256], path[512], err[300];
    test_tmpname(dir, sizeof dir, "mailsoak-corpus-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/b.eml", dir);
    write_file(path, "Subject: b\n\nB\n");
    snprintf(path, sizeof path, "%s/a.eml", dir);
    write_file(path, "Subject: a\n\nA\n");
    snprintf(path, sizeof path, "%s/.hidden", dir);
    write_file(path, "Subject: no\n\n");
    struct corpus c;
    assert_int_equal(corpus_open(&c, dir, err, sizeof err), 0);
    assert_int_equal(c.n, 2);
    struct corpus_buf raw = { 0 };
    assert_int_equal(corpus_read(&c, 0, &raw), 0);
    assert_memory_equal(raw.p, "Subject: a\n", 11);      /* name order */
    corpus_free(&c);
    /* a maildir: cur/ and new/ */
    char md[300];
    snprintf(md, sizeof md, "%s/Maildir", dir);
    mkdir(md, 0700);
    snprintf(path, sizeof path, "%s/cur", md);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/new", md);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/new/1.host", md);
    write_file(path, "Subject: new\n\nN\n");
    snprintf(path, sizeof path, "%s/cur/2.host:2,S", md);
    write_file(path, "Subject: cur\n\nC\n");
    assert_int_equal(corpus_open(&c, md, err, sizeof err), 0);
    assert_int_equal(c.n, 2);
    assert_int_equal(corpus_read(&c, 1, &raw), 0);
    assert_memory_equal(raw.p, "Subject: new\n", 13);
    corpus_free(&c);
    /* an empty file is no corpus; a missing one names itself */
    snprintf(path, sizeof path, "%s/empty.mbox", dir);
    write_file(path, "");
    assert_int_equal(corpus_open(&c, path, err, sizeof err), -1);
    assert_non_null(strstr(err, "no messages"));
    assert_int_equal(corpus_open(&c, "/nonexistent/corpus", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/corpus"));
    corpus_buf_free(&raw);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mbox_split_by_from_lines_and_content_length),
        cmocka_unit_test(prepare_makes_it_sendable),
        cmocka_unit_test(folders_and_maildirs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
