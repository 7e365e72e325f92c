/* test_queue: queue formats on queue files written by the real MTAs
 * (tests/fixtures/queue/README.md says how each was made): the number of queued
 * messages, recipients still to deliver, and each message's X-Mailsoak-Id, for
 * Postfix (root, one queue, hashed subdirectories, files still being written, the
 * log directories beside the queues, a recipient aliased), Exim (root, input/,
 * split spool, journal), OpenSMTPD (spool root, queue/, messages still being
 * received) and sendmail (qf, hf, qf/ subdirectory), auto-detected and named. Postfix pointer records and Exim's
 * recipient line formats are checked on files the test writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe/queue.h"
#include "testfiles.h"

static const char *fixture(const char *name)
{
    static char paths[4][4096];
    static unsigned next;
    char *p = paths[next++ % 4];
    const char *top = getenv("TOP");
    snprintf(p, sizeof paths[0], "%s/tests/fixtures/queue/%s", top ? top : ".", name);
    return p;
}

/* What a scan saw: "id rcpt,rcpt" lines sorted, so tests compare one string. */
struct seen {
    char lines[64][300];
    int n;
};

static int by_ptr_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void on_msg(void *ctx, const struct queue_msg *m)
{
    struct seen *s = ctx;
    assert_true(s->n < 64);
    char *l = s->lines[s->n++];
    int o = snprintf(l, 300, "%.*s", m->id ? (int)m->idlen : 1, m->id ? m->id : "-");
    if (!m->rcpts_known) {
        snprintf(l + o, 300 - (size_t)o, " ?");
        return;
    }
    /* in address order: OpenSMTPD's envelopes come in directory order */
    const char *r[8];
    assert_true(m->nrcpts <= 8);
    memcpy(r, m->rcpts, m->nrcpts * sizeof *r);
    qsort(r, m->nrcpts, sizeof *r, by_ptr_text);
    for (size_t i = 0; i < m->nrcpts; i++)
        o += snprintf(l + o, 300 - (size_t)o, "%s%s", i ? "," : " ", r[i]);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(a, b);
}

static const char *joined(struct seen *s)
{
    static char out[64 * 301];
    qsort(s->lines, (size_t)s->n, sizeof s->lines[0], by_text);
    out[0] = 0;
    for (int i = 0; i < s->n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? "\n" : "", s->lines[i]);
    return out;
}

struct expect {
    const char *dir;
    enum queue_format asked, found;
    const char *layout;
    uint64_t messages, recipients;
    const char *ids;            /* joined() of the scan */
};

static void check(const struct expect *x)
{
    char err[300] = "";
    struct queue *q = queue_new(fixture(x->dir), x->asked);
    assert_int_equal(queue_check(q, err, sizeof err), 0);
    assert_int_equal(queue_count(q), x->messages);
    assert_string_equal(queue_format_name(queue_format(q)), queue_format_name(x->found));
    assert_string_equal(queue_layout(q), x->layout);
    struct seen s = { .n = 0 };
    struct queue_totals t = { 0 };
    queue_scan(q, on_msg, &s, &t);
    assert_int_equal(t.messages, x->messages);
    assert_int_equal(t.recipients, x->recipients);
    assert_int_equal(t.with_id, x->messages);
    assert_int_equal(t.unreadable, 0);
    assert_int_equal(t.no_recipients, 0);
    assert_string_equal(joined(&s), x->ids);
    queue_free(q);
}

static const char postfix_ids[] =
    "5eed0005-1 user0001@test.local\n"
    "5eed0005-10000000001/2 user0002@test.local\n"
    "5eed0005-2 user0001@test.local\n"
    "5eed0005-4 user0004@test.local";

/* The root: incoming's file is still being written (no owner execute bit), defer/
 * holds a delivery log per deferred message, pid/ and the rest are Postfix's state. */
static void postfix_root(void **state)
{
    struct expect x = { "postfix", QUEUE_AUTO, QUEUE_POSTFIX, "postfix queue root", 4, 4, postfix_ids };
    check(&x);
    x.asked = QUEUE_POSTFIX;
    check(&x);
}

static void postfix_one_queue(void **state)
{
    struct expect deferred = { "postfix/deferred", QUEUE_AUTO, QUEUE_POSTFIX, "postfix deferred queue", 1, 1,
                               "5eed0005-10000000001/2 user0002@test.local" };
    check(&deferred);
    struct expect incoming = { "postfix/incoming", QUEUE_AUTO, QUEUE_POSTFIX, "postfix incoming queue", 0, 0, "" };
    check(&incoming);
    struct expect maildrop = { "postfix/maildrop", QUEUE_POSTFIX, QUEUE_POSTFIX, "postfix maildrop queue", 1, 1,
                               "5eed0005-4 user0004@test.local" };
    check(&maildrop);
}

/* A virtual alias (user0005 -> user0006): Postfix keeps the address the client
 * gave as the O record and the one it delivers to as the R record. mailsoak knows
 * the first; taking the second, no fixture would tell, as every other has the two
 * equal. */
static void postfix_original_recipient(void **state)
{
    struct expect x = { "postfix-alias/deferred", QUEUE_POSTFIX, QUEUE_POSTFIX, "postfix deferred queue", 2, 3,
                        "5eed0006-1 user0005@test.local\n"
                        "5eed0006-2/2 user0003@test.local,user0005@test.local" };
    check(&x);
}

/* Counting files, the old way, sees logs and partial files as messages. */
static void postfix_as_files(void **state)
{
    struct queue *q = queue_new(fixture("postfix/deferred"), QUEUE_FILES);
    assert_int_equal(queue_count(q), 1);
    queue_free(q);
    q = queue_new(fixture("postfix/defer"), QUEUE_FILES);
    assert_int_equal(queue_count(q), 3);
    queue_free(q);
}

static void postfix_log_dir_refused(void **state)
{
    char err[300] = "";
    struct queue *q = queue_new(fixture("postfix/defer"), QUEUE_AUTO);
    assert_int_equal(queue_check(q, err, sizeof err), -1);
    assert_non_null(strstr(err, "delivery logs"));
    assert_int_equal(queue_count(q), 0);
    queue_free(q);
    q = queue_new(fixture("postfix/pid"), QUEUE_POSTFIX);
    assert_int_equal(queue_check(q, err, sizeof err), -1);
    assert_non_null(strstr(err, "own state"));
    queue_free(q);
}

static const char exim_ids[] =
    "5eed0001-0 user0001@test.local\n"
    "5eed0001-1 user0002@test.local\n"
    "5eed0001-10000000001/2 user0004@test.local\n"
    "5eed0001-2a/2 user0005@test.local";

/* 0A's done@ is in the non-recipients tree, 09's user0003 in its -J journal; the
 * hdr. file is a header being written. */
static void exim_root(void **state)
{
    struct expect x = { "exim", QUEUE_AUTO, QUEUE_EXIM, "exim spool directory", 4, 4, exim_ids };
    check(&x);
    x.asked = QUEUE_EXIM;
    check(&x);
    struct expect input = { "exim/input", QUEUE_AUTO, QUEUE_EXIM, "exim input directory", 4, 4, exim_ids };
    check(&input);
}

static void exim_split(void **state)
{
    struct expect x = { "exim-split", QUEUE_AUTO, QUEUE_EXIM, "exim spool directory", 3, 3,
                        "5eed0002-3 user0006@test.local\n"
                        "5eed0002-4 user0007@test.local\n"
                        "5eed0002-5 user0008@test.local" };
    check(&x);
    /* the same files counted as files: -H, -D and msglog: three times as many */
    struct queue *q = queue_new(fixture("exim-split"), QUEUE_FILES);
    assert_int_equal(queue_count(q), 9);
    queue_free(q);
}

static const char smtpd_ids[] =
    "5eed0003-20000000001/2 user0011@test.local,user0012@test.local\n"
    "5eed0003-2b/2 user0013@test.local\n"
    "5eed0003-6 user0009@test.local\n"
    "5eed0003-7 user0010@test.local";

static void opensmtpd(void **state)
{
    struct expect x = { "opensmtpd", QUEUE_AUTO, QUEUE_OPENSMTPD, "opensmtpd spool directory", 4, 5, smtpd_ids };
    check(&x);
    struct expect queue = { "opensmtpd/queue", QUEUE_AUTO, QUEUE_OPENSMTPD, "opensmtpd queue directory", 4, 5,
                            smtpd_ids };
    check(&queue);
    queue.asked = QUEUE_OPENSMTPD;
    check(&queue);
}

/* qf and hf (quarantined) count; df, the tf being written and the Qf (lost) do not.
 * The directory's name says nothing: its qf files do. */
static void sendmail(void **state)
{
    static const char ids[] =
        "5eed0004-30000000001/2 user0016@test.local,user0017@test.local\n"
        "5eed0004-8 user0014@test.local\n"
        "5eed0004-9 user0015@test.local\n"
        "5eed0004-a user0018@test.local";
    struct expect x = { "sendmail", QUEUE_AUTO, QUEUE_SENDMAIL, "sendmail queue directory", 4, 5, ids };
    check(&x);
    struct expect sub = { "sendmail-subdirs", QUEUE_AUTO, QUEUE_SENDMAIL, "sendmail queue directory", 2, 2,
                          "5eed0006-b user0019@test.local\n"
                          "5eed0006-c user0020@test.local" };
    check(&sub);
}

static void missing_then_created(void **state)
{
    char err[300];
    assert_non_null(mkdtemp(test_tmpname(tf_dir, sizeof tf_dir, "mailsoak-test.XXXXXX")));
    struct queue *q = queue_new(tf_path("spool"), QUEUE_AUTO);
    assert_int_equal(queue_check(q, err, sizeof err), 1);
    assert_int_equal(queue_count(q), 0);
    assert_int_equal(mkdir(tf_path("spool"), 0700), 0);
    assert_int_equal(mkdir(tf_path("spool/input"), 0700), 0);
    tf_write("spool/input/1xXxvJ-00059h-07-H", "1xXxvJ-00059h-07-H\nroot 0 0\n<a@b>\n1 0\nXX\n1\nx@y\n\n"
                                              "026  X-Mailsoak-Id: 5eed0001-0\n");
    assert_int_equal(queue_check(q, err, sizeof err), 0);
    assert_int_equal(queue_count(q), 1);
    assert_string_equal(queue_layout(q), "exim spool directory");
    queue_free(q);
    q = queue_new(tf_path("spool/input/1xXxvJ-00059h-07-H"), QUEUE_AUTO);
    assert_int_equal(queue_check(q, err, sizeof err), -1);
    assert_string_equal(err, "not a directory");
    queue_free(q);
}

/* An undecided directory counts files, and is recognised once Exim's names appear. */
static void auto_decides_later(void **state)
{
    struct queue *q = queue_new(tf_path("later"), QUEUE_AUTO);
    assert_int_equal(mkdir(tf_path("later"), 0700), 0);
    tf_write("later/note", "x");
    assert_int_equal(queue_count(q), 1);
    assert_int_equal(queue_format(q), QUEUE_AUTO);
    tf_write("later/1xXxvJ-00059h-07-H", "1xXxvJ-00059h-07-H\nroot 0 0\n<a@b>\n1 0\nXX\n1\nx@y\n\n"
                                         "026  X-Mailsoak-Id: 5eed0001-0\n");
    tf_write("later/1xXxvJ-00059h-07-D", "1xXxvJ-00059h-07-D\nbody\n");
    assert_int_equal(queue_count(q), 1);
    assert_int_equal(queue_format(q), QUEUE_EXIM);
    queue_free(q);
}

/* Exim recipient lines: plain, early Exim 4 ("<address> <pno>") and the DSN form
 * spool_out.c writes ("<address> <orcpt> <len>,<dsn> <errors_to> <len>,<pno>#3"). */
static void exim_recipient_forms(void **state)
{
    assert_int_equal(mkdir(tf_path("forms"), 0700), 0);
    tf_write("forms/1xXxvJ-00059h-07-H",
             "1xXxvJ-00059h-07-H\nroot 0 0\n<a@b>\n1 0\n"
             "-aclm 0 11\nline\nline 2\n"          /* 11 bytes and a newline, with a newline inside */
             "--aclc 1 2\nXX\n"                    /* data that looks like the empty tree */
             "YN p@q\nNN n@o\n"
             "5\nplain@x\nearly@x 3\nn@o\nr@s rfc822;r@s 10,1 e@f 3,-1#3\nt@u  0,0  0,-1#3\n\n"
             "038* X-Mailsoak-Id: 5eed0001-1 (rewritten)\n"
             "025  Subject: two\n\tlines here\n"
             "026  X-Mailsoak-Id: 5eed0001-0\n");
    struct queue *q = queue_new(tf_path("forms"), QUEUE_EXIM);
    struct seen s = { .n = 0 };
    struct queue_totals t = { 0 };
    queue_scan(q, on_msg, &s, &t);
    assert_int_equal(t.unreadable, 0);
    assert_int_equal(t.recipients, 4);
    assert_string_equal(joined(&s), "5eed0001-0 early@x,plain@x,r@s,t@u");
    queue_free(q);
}

/* Postfix record writer, as rec_put() encodes lengths. */
static size_t rec(unsigned char *out, int type, const char *data)
{
    size_t n = strlen(data), o = 0, rest = n;
    out[o++] = (unsigned char)type;
    do {
        unsigned char b = rest & 0177;
        if (rest >>= 7)
            b |= 0200;
        out[o++] = b;
    } while (rest);
    memcpy(out + o, data, n);
    return o + n;
}

/* Cleanup's edits: a header inserted through a pointer record to the end of the
 * file and back, a long line split in L records, a 300-byte record (two length
 * bytes), a cancelled and a delivered recipient. */
static void postfix_pointers(void **state)
{
    unsigned char buf[4096];
    char ptr[32], big[301];
    size_t o = 0;
    memset(big, 'b', 300);
    big[300] = 0;
    o += rec(buf + o, 'T', "1796032317 291691");
    o += rec(buf + o, 'S', "mailsoak@test.local");
    o += rec(buf + o, 'O', "one@x");
    o += rec(buf + o, 'R', "one@x");
    o += rec(buf + o, 'O', "two@x");
    o += rec(buf + o, 'D', "two@x");
    o += rec(buf + o, '/', "three@x");
    o += rec(buf + o, 'A', big);
    o += rec(buf + o, 'M', "");
    o += rec(buf + o, 'N', "Subject: x");
    size_t patch = o;
    o += rec(buf + o, 'p', "              0");     /* filled in below */
    size_t back = o;
    o += rec(buf + o, 'N', "");
    o += rec(buf + o, 'N', "body");
    o += rec(buf + o, 'X', "");
    o += rec(buf + o, 'R', "four@x");
    o += rec(buf + o, 'E', "");
    size_t heap = o;
    o += rec(buf + o, 'L', "X-Mailsoak-");
    o += rec(buf + o, 'N', "Id: 5eed0005-ab");
    snprintf(ptr, sizeof ptr, "%15zu", back);
    o += rec(buf + o, 'p', ptr);
    snprintf(ptr, sizeof ptr, "%15zu", heap);
    rec(buf + patch, 'p', ptr);
    assert_int_equal(mkdir(tf_path("pf"), 0700), 0);
    FILE *f = fopen(tf_path("pf/4Ml2Wd1x3Kz9vD"), "w");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, o, f), o);
    fclose(f);
    struct queue *q = queue_new(tf_path("pf"), QUEUE_POSTFIX);
    struct seen s = { .n = 0 };
    struct queue_totals t = { 0 };
    queue_scan(q, on_msg, &s, &t);
    assert_int_equal(t.unreadable, 0);
    assert_int_equal(t.recipients, 2);
    assert_string_equal(joined(&s), "5eed0005-ab four@x,one@x");
    queue_free(q);
}

/* A hostile queue file whose content size and data offset (the C record) send the
 * end of its headers back to its M record: read as written, the same headers would
 * be read for ever (fuzz_queue found it). The jump counts against the pointer
 * records' limit, so the scan ends; an alarm fails the test, not CI's clock, if it
 * does not. */
static void postfix_jump_back(void **state)
{
    (void)state;
    unsigned char buf[512];
    size_t o = 0;
    o += rec(buf + o, 'T', "1796032317 291691");
    o += rec(buf + o, 'R', "user@x");
    size_t c = o;
    o += rec(buf + o, 'C', "              0               0");   /* filled in below */
    size_t m = o;
    o += rec(buf + o, 'M', "");
    o += rec(buf + o, 'N', "X-Mailsoak-Id: 5eed0006-ab");
    o += rec(buf + o, 'N', "");
    o += rec(buf + o, 'X', "");
    o += rec(buf + o, 'E', "");
    char sizes[40];
    snprintf(sizes, sizeof sizes, "%15d %15zu", 1, m - 1);
    rec(buf + c, 'C', sizes);
    assert_int_equal(mkdir(tf_path("pfj"), 0700), 0);
    FILE *f = fopen(tf_path("pfj/4Ml2Wd1x3Kz9vE"), "w");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, o, f), o);
    fclose(f);
    struct queue *q = queue_new(tf_path("pfj"), QUEUE_POSTFIX);
    struct seen s = { .n = 0 };
    struct queue_totals t = { 0 };
    alarm(20);
    queue_scan(q, on_msg, &s, &t);
    alarm(0);
    assert_string_equal(joined(&s), "5eed0006-ab user@x");
    queue_free(q);
}

/* A minimal queue file of message id, as cleanup writes one (mode 0700: complete). */
static void pf_file(const char *rel, const char *id)
{
    unsigned char buf[512];
    char hdr[100];
    size_t o = 0;
    snprintf(hdr, sizeof hdr, "X-Mailsoak-Id: %s", id);
    o += rec(buf + o, 'T', "1796032317 291691");
    o += rec(buf + o, 'S', "mailsoak@test.local");
    o += rec(buf + o, 'R', "user@x");
    o += rec(buf + o, 'M', "");
    o += rec(buf + o, 'N', hdr);
    o += rec(buf + o, 'N', "");
    o += rec(buf + o, 'X', "");
    o += rec(buf + o, 'E', "");
    FILE *f = fopen(tf_path(rel), "w");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, o, f), o);
    fclose(f);
    assert_int_equal(chmod(tf_path(rel), 0700), 0);
}

/* qmgr moves files between queues while a scan lists them: in the middle of the
 * scan, every active file but the one being read goes back to deferred (a failed
 * delivery). Each message is still read exactly once. */
struct mover {
    struct seen seen;
    int moved;
};

static void move_active_back(void *ctx, const struct queue_msg *m)
{
    struct mover *mv = ctx;
    on_msg(&mv->seen, m);
    if (mv->moved || strncmp(m->id, "5eed0007-a", 10))
        return;                     /* the first active message read */
    mv->moved = 1;
    for (int i = 0; i < 6; i++) {
        char from[32], to[32];
        snprintf(from, sizeof from, "mv/active/ACT%03d", i);
        snprintf(to, sizeof to, "mv/deferred/A/ACT%03d", i);
        rename(tf_path(from), tf_path(to));     /* fails for the one just read: fine */
    }
}

static void postfix_moves_during_a_scan(void **state)
{
    static const char *const dirs[] = { "mv", "mv/incoming", "mv/active", "mv/deferred", "mv/deferred/A",
                                        "mv/hold", "mv/maildrop" };
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        assert_int_equal(mkdir(tf_path(dirs[i]), 0700), 0);
    char rel[40], id[40];
    for (int i = 0; i < 6; i++) {
        snprintf(rel, sizeof rel, "mv/active/ACT%03d", i);
        snprintf(id, sizeof id, "5eed0007-a%d", i);
        pf_file(rel, id);
        snprintf(rel, sizeof rel, "mv/deferred/A/DEF%03d", i);
        snprintf(id, sizeof id, "5eed0007-d%d", i);
        pf_file(rel, id);
    }
    struct queue *q = queue_new(tf_path("mv"), QUEUE_AUTO);
    struct mover mv = { .seen.n = 0 };
    struct queue_totals t = { 0 };
    queue_scan(q, move_active_back, &mv, &t);
    assert_true(mv.moved);
    assert_int_equal(t.messages, 12);
    assert_string_equal(joined(&mv.seen),
                        "5eed0007-a0 user@x\n5eed0007-a1 user@x\n5eed0007-a2 user@x\n5eed0007-a3 user@x\n"
                        "5eed0007-a4 user@x\n5eed0007-a5 user@x\n5eed0007-d0 user@x\n5eed0007-d1 user@x\n"
                        "5eed0007-d2 user@x\n5eed0007-d3 user@x\n5eed0007-d4 user@x\n5eed0007-d5 user@x");
    assert_int_equal(queue_count(q), 12);
    queue_free(q);
}

/* A queue file cut short, garbage, an empty file: counted, unreadable, no id. */
static void bad_files(void **state)
{
    assert_int_equal(mkdir(tf_path("bad"), 0700), 0);
    tf_write("bad/1xXxvJ-00059h-07-H", "1xXxvJ-00059h-07-H\nroot 0 0\n<a@b>\n1 0\n-aclc 1 99999\nx\n");
    tf_write("bad/1xXxvJ-00059h-08-H", "");
    tf_write("bad/1xXxvJ-00059h-09-H", "1xXxvJ-00059h-09-H\nroot 0 0\n<a@b>\n1 0\nYY a\n");
    struct queue *q = queue_new(tf_path("bad"), QUEUE_EXIM);
    struct seen s = { .n = 0 };
    struct queue_totals t = { 0 };
    queue_scan(q, on_msg, &s, &t);
    assert_int_equal(t.messages, 3);
    assert_int_equal(t.unreadable, 3);
    assert_int_equal(t.with_id, 0);
    assert_string_equal(joined(&s), "- ?\n- ?\n- ?");
    queue_free(q);
    unsigned char junk[64];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)(i * 37 + 200);
    assert_int_equal(mkdir(tf_path("badpf"), 0700), 0);
    FILE *f = fopen(tf_path("badpf/ABCDEF123"), "w");
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    q = queue_new(tf_path("badpf"), QUEUE_POSTFIX);
    memset(&t, 0, sizeof t);
    queue_scan(q, NULL, NULL, &t);
    assert_int_equal(t.messages, 1);
    assert_int_equal(t.unreadable, 1);
    queue_free(q);
}

/* An OpenSMTPD queue with queue compression or encryption: its message files are not
 * text; such a message is unreadable, not foreign (it may be one of ours). */
static void smtpd_compressed_is_unreadable(void **state)
{
    static const char *const dirs[] = { "oz", "oz/queue", "oz/queue/9a", "oz/queue/9a/9a0b1c2d", "oz/purge" };
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        assert_int_equal(mkdir(tf_path(dirs[i]), 0700), 0);
    FILE *f = fopen(tf_path("oz/queue/9a/9a0b1c2d/message"), "w");
    static const unsigned char gz[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 'x', 0 };
    fwrite(gz, 1, sizeof gz, f);
    fclose(f);
    tf_write("oz/queue/9a/9a0b1c2d/9a0b1c2d00000001", "version: 3\nrcpt: u@x\n");
    struct queue *q = queue_new(tf_path("oz"), QUEUE_AUTO);
    struct queue_totals t = { 0 };
    queue_scan(q, NULL, NULL, &t);
    assert_int_equal(t.messages, 1);
    assert_int_equal(t.unreadable, 1);
    queue_free(q);
    /* plain files: a message counts, a file that is not one is unreadable */
    tf_write("oz/purge/mail", "Received: x\nX-Mailsoak-Id: 5eed0008-1\n\nbody\n");
    tf_write("oz/purge/state.db", "\x01\x02binary");
    q = queue_new(tf_path("oz/purge"), QUEUE_FILES);
    memset(&t, 0, sizeof t);
    queue_scan(q, NULL, NULL, &t);
    assert_int_equal(t.messages, 2);
    assert_int_equal(t.with_id, 1);
    assert_int_equal(t.unreadable, 1);
    queue_free(q);
}

static void format_names(void **state)
{
    enum queue_format f;
    assert_int_equal(queue_format_parse("OpenSMTPD", &f), 0);
    assert_int_equal(f, QUEUE_OPENSMTPD);
    assert_int_equal(queue_format_parse("qmail", &f), -1);
    assert_string_equal(queue_format_name(QUEUE_SENDMAIL), "sendmail");
}

static int cleanup(void **state)
{
    if (tf_dir[strlen(tf_dir) - 1] != 'X') {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tf_dir);
        return system(cmd) == 0 ? 0 : -1;
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(postfix_root),
        cmocka_unit_test(postfix_one_queue),
        cmocka_unit_test(postfix_original_recipient),
        cmocka_unit_test(postfix_as_files),
        cmocka_unit_test(postfix_log_dir_refused),
        cmocka_unit_test(exim_root),
        cmocka_unit_test(exim_split),
        cmocka_unit_test(opensmtpd),
        cmocka_unit_test(sendmail),
        cmocka_unit_test(missing_then_created),
        cmocka_unit_test(auto_decides_later),
        cmocka_unit_test(exim_recipient_forms),
        cmocka_unit_test(postfix_pointers),
        cmocka_unit_test(postfix_jump_back),
        cmocka_unit_test(postfix_moves_during_a_scan),
        cmocka_unit_test(bad_files),
        cmocka_unit_test(smtpd_compressed_is_unreadable),
        cmocka_unit_test(format_names),
    };
    return cmocka_run_group_tests(tests, NULL, cleanup);
}
