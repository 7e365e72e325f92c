/* Unit tests of message generation and verification: exact body sizes, line
 * lengths, dot-stuffing, digests, reproducibility and the reader's verdicts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/msg.h"

struct fx {
    char *pool;
    struct msg_gen g;
};

static int setup(void **st)
{
    struct fx *f = calloc(1, sizeof *f);
    f->pool = msg_pool_new(42, 1 << 16);
    assert_int_equal(msg_gen_init(&f->g, f->pool, 1 << 16), 0);
    *st = f;
    return 0;
}

static int teardown(void **st)
{
    struct fx *f = *st;
    msg_gen_free(&f->g);
    free(f->pool);
    free(f);
    return 0;
}

static struct msg_params params(size_t size, uint64_t seed)
{
    return (struct msg_params){ .run_id = "0badcafe", .seq = 0x1000000002aull, .from = "a@test.local",
                                .to = "user0001@test.local", .body_size = size, .sent_unix_ms = 1764444000123ull,
                                .body_seed = seed };
}

static void body_sizes_and_lines(void **st)
{
    struct fx *f = *st;
    uint8_t d[MSG_DIGEST_LEN];
    for (size_t size = 0; size < 3000; size++) {
        struct msg_params p = params(size, size * 7919);
        size_t n = msg_body(&f->g, &p, d);
        assert_int_equal(n, size == 1 ? 2 : size);
        const char *b = f->g.scratch;
        size_t linelen = 0;
        for (size_t i = 0; i < n; i++) {
            if (b[i] == '\r') {
                assert_true(i + 1 < n && b[i + 1] == '\n');
                assert_true(linelen <= 78);
                linelen = 0;
                i++;
                continue;
            }
            assert_true(b[i] >= ' ' && b[i] <= '~');
            linelen++;
        }
        assert_int_equal(linelen, 0);        /* ends with CRLF */
    }
}

static void reproducible(void **st)
{
    struct fx *f = *st;
    uint8_t d1[MSG_DIGEST_LEN], d2[MSG_DIGEST_LEN], d3[MSG_DIGEST_LEN];
    struct msg_params p = params(900, 12345);
    size_t n = msg_body(&f->g, &p, d1);
    char *copy = malloc(n);
    memcpy(copy, f->g.scratch, n);
    msg_body(&f->g, &p, d2);
    assert_memory_equal(copy, f->g.scratch, n);
    assert_memory_equal(d1, d2, MSG_DIGEST_LEN);
    p.body_seed++;
    msg_body(&f->g, &p, d3);
    assert_memory_not_equal(d1, d3, MSG_DIGEST_LEN);
    free(copy);
}

static void dot_stuffing(void **st)
{
    const char *in = ".a\r\nb.\r\n..c\r\n.\r\n";
    char out[64];
    size_t n = msg_dot_stuff(in, strlen(in), out);
    out[n] = 0;
    assert_string_equal(out, "..a\r\nb.\r\n...c\r\n..\r\n");
}

/* Feeds a wire-format message (after the POP3 +OK) to the checker the way the
 * reader does: line by line, unstuffed, stopping at the lone dot. */
static enum msg_result check_wire(struct fx *f, const char *wire, size_t len, struct msg_check *m)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    msg_check_begin(m, md, f->g.sha256);
    const char *p = wire, *end = wire + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = (size_t)(nl - p);
        if (l && p[l - 1] == '\r')
            l--;
        if (l == 1 && p[0] == '.')
            break;
        if (p[0] == '.')
            msg_check_line(m, p + 1, l - 1);
        else
            msg_check_line(m, p, l);
        p = nl + 1;
    }
    enum msg_result v = msg_check_end(m);
    EVP_MD_CTX_free(md);
    return v;
}

static void round_trip_and_corruption(void **st)
{
    struct fx *f = *st;
    uint8_t d[MSG_DIGEST_LEN];
    for (size_t size = 0; size < 1200; size += 37) {
        struct msg_params p = params(size, size);
        size_t n = msg_body(&f->g, &p, d);
        char *wire = malloc(msg_wire_max(&f->g, &p, n));
        size_t w = msg_write(&f->g, &p, n, d, wire);
        assert_memory_equal(wire + w - 3, ".\r\n", 3);
        struct msg_check m;
        assert_int_equal(check_wire(f, wire, w, &m), MSG_OK);
        assert_string_equal(m.run_id, "0badcafe");
        assert_true(m.seq == p.seq);
        assert_int_equal(m.body_bytes, n);
        assert_memory_equal(m.digest, d, MSG_DIGEST_LEN);
        if (n > 10) {
            /* one byte changed in the body */
            char *body = strstr(wire, "\r\n\r\n") + 4;
            body[n / 2] = body[n / 2] == 'x' ? 'y' : 'x';
            assert_int_equal(check_wire(f, wire, w, &m), MSG_CORRUPT);
        }
        free(wire);
    }
}

/* smtp.content = mime: every kind of message round-trips through the reader with
 * its digest, carries a client's MIME headers, and its multiparts close their
 * boundaries; the three kinds all occur. */
static void mime_messages(void **st)
{
    struct fx *f = *st;
    uint8_t d[MSG_DIGEST_LEN];
    int kinds[3] = { 0 };
    msg_gen_content(&f->g, MSG_MIME, NULL);
    for (uint64_t seed = 1; seed <= 300; seed++) {
        struct msg_params p = params(seed * 97 % 60000, seed * 7919);
        size_t n = msg_body(&f->g, &p, d);
        char *wire = malloc(msg_wire_max(&f->g, &p, n));
        size_t w = msg_write(&f->g, &p, n, d, wire);
        wire[w - 3] = 0;             /* cut the final dot for strstr */
        struct msg_check m;
        wire[w - 3] = '.';
        assert_int_equal(check_wire(f, wire, w, &m), MSG_OK);
        assert_int_equal(m.body_bytes, n);
        wire[w - 3] = 0;
        assert_non_null(strstr(wire, "\r\nMIME-Version: 1.0\r\n"));
        const char *hdr_end = strstr(wire, "\r\n\r\n");
        const char *ct = strstr(wire, "Content-Type: ");
        assert_true(ct && ct < hdr_end);
        if (!strncmp(ct, "Content-Type: text/plain", 24)) {
            kinds[0]++;
        } else {
            int mixed = !strncmp(ct, "Content-Type: multipart/mixed", 29);
            kinds[mixed ? 2 : 1]++;
            const char *b = strstr(ct, "boundary=\"") + 10;
            char close[64];
            snprintf(close, sizeof close, "\r\n--%.*s--\r\n", (int)(strchr(b, '"') - b), b);
            assert_non_null(strstr(hdr_end, close));
            if (mixed)
                assert_non_null(strstr(hdr_end, "Content-Transfer-Encoding: base64\r\n"));
        }
        free(wire);
    }
    assert_true(kinds[0] > 60 && kinds[1] > 60 && kinds[2] > 40);
    msg_gen_content(&f->g, MSG_RANDOM, NULL);
}

static void verdicts(void **st)
{
    struct fx *f = *st;
    struct msg_check m;
    const char *foreign = "From: x\r\nSubject: hi\r\n\r\nbody\r\n.\r\n";
    assert_int_equal(check_wire(f, foreign, strlen(foreign), &m), MSG_FOREIGN);
    const char *mangled = "X-Mailsoak-Id: 0badcafe-zz\r\nX-Mailsoak-Digest: sha256:00\r\n\r\nbody\r\n.\r\n";
    assert_int_equal(check_wire(f, mangled, strlen(mangled), &m), MSG_CORRUPT);
    const char *no_digest = "X-Mailsoak-Id: 0badcafe-2a\r\n\r\nbody\r\n.\r\n";
    assert_int_equal(check_wire(f, no_digest, strlen(no_digest), &m), MSG_CORRUPT);
}

/* A streamed body is the body msg_body makes, dot-stuffed, with the same digest,
 * made in pieces whatever their size; the headers are what msg_write starts with. */
static void streamed_bodies_are_the_same_bytes(void **st)
{
    struct fx *f = *st;
    static const size_t sizes[] = { 1, 2, 3, 79, 80, 81, 82, 1000, 300000 };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        struct msg_params p = params(sizes[k], 7 + k);
        uint8_t d1[MSG_DIGEST_LEN], d2[MSG_DIGEST_LEN];
        size_t n = msg_body(&f->g, &p, d1);
        char *whole = malloc(msg_wire_max(&f->g, &p, n));
        size_t wl = msg_write(&f->g, &p, n, d1, whole);
        msg_stream_digest(&f->g, &p, d2);
        assert_memory_equal(d1, d2, MSG_DIGEST_LEN);
        char *streamed = malloc(msg_wire_max(&f->g, &p, n));
        size_t o = msg_headers(&f->g, &p, d2, streamed);
        struct msg_stream s;
        msg_stream_begin(&f->g, &s, &p);
        size_t cap = 160 + k * 37, got;  /* odd piece sizes */
        while ((got = msg_stream_next(&f->g, &s, streamed + o, cap)) > 0)
            o += got;
        memcpy(streamed + o, ".\r\n", 3);
        o += 3;
        assert_int_equal(o, wl);
        assert_memory_equal(streamed, whole, wl);
        free(whole);
        free(streamed);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(body_sizes_and_lines), cmocka_unit_test(reproducible),
        cmocka_unit_test(dot_stuffing), cmocka_unit_test(round_trip_and_corruption),
        cmocka_unit_test(verdicts), cmocka_unit_test(mime_messages),
        cmocka_unit_test(streamed_bodies_are_the_same_bytes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
