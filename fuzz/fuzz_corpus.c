/* fuzz_corpus: the corpus reader (smtp.content = corpus) on untrusted bytes: an
 * mbox cut into messages, and each message (and the input as one .eml) made
 * sendable. What it makes must be sendable as it is: CRLF lines of at most 998
 * bytes, no NUL or bare CR, a body of at least one line, kept headers each a
 * CRLF line. */
#include "fuzz.h"

#include "engine/corpus.h"

static void check_lines(const struct corpus_buf *b, int nonempty)
{
    if (nonempty && b->len < 2)
        abort();
    size_t start = 0;
    for (size_t i = 0; i < b->len; i++) {
        char c = b->p[i];
        if (c == '\0')
            abort();
        if (c == '\r') {
            if (i + 1 >= b->len || b->p[i + 1] != '\n')
                abort();                     /* a bare CR */
            if (i - start > 998)
                abort();
            start = i + 2;
            i++;
        } else if (c == '\n') {
            abort();                         /* a bare LF */
        }
    }
    if (start != b->len)
        abort();                             /* the last line unterminated */
}

static void prepare(const uint8_t *p, size_t n, int mboxrd)
{
    struct corpus_buf hdr = { 0 }, body = { 0 };
    corpus_prepare((const char *)p, n, mboxrd, &hdr, &body);
    check_lines(&hdr, 0);
    check_lines(&body, 1);
    if (hdr.len > CORPUS_MAX_HDR + 1000)
        abort();
    corpus_buf_free(&hdr);
    corpus_buf_free(&body);
}

struct ctx {
    const uint8_t *data;
    size_t size;
};

static void one(void *arg, size_t off, size_t len)
{
    struct ctx *c = arg;
    if (off > c->size || len > c->size - off)
        abort();
    prepare(c->data + off, len, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact-size copy, so a read past the end is caught */
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    struct ctx c = { copy, size };
    corpus_mbox_split((const char *)copy, size, one, &c);
    prepare(copy, size, 0);
    free(copy);
    return 0;
}
