/* msg: message generation and verification. Bodies are slices of a shared random
 * pool cut into lines, so generating one costs a few memcpy calls and one SHA-256;
 * the same (seed, sequence) always gives the same body. MIME bodies are built of
 * the same lines around their parts' headers and boundaries, attachments of
 * base64 of random bytes; corpus bodies are read from their files. */
#include "engine/msg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/evp.h>

#include "lib/alloc.h"

#define MAX_LINE 78

char *msg_pool_new(uint64_t seed, size_t size)
{
    struct rng r;
    char *p = xmalloc(size);
    rng_seed(&r, seed ^ 0x6d61696c736f616bull);
    for (size_t i = 0; i < size; i++) {
        uint64_t v = rng_next(&r);
        /* about one character in 24 is a dot, so many lines need dot-stuffing */
        p[i] = (v & 0x1f) < 1 ? '.' : (char)(' ' + (v >> 8) % 95);
    }
    return p;
}

int msg_gen_init(struct msg_gen *g, const char *pool, size_t poolsize)
{
    memset(g, 0, sizeof *g);
    g->pool = pool;
    g->poolsize = poolsize;
    /* An explicit fetch once: the implicit one inside EVP_DigestInit_ex costs more
     * than hashing a small body. */
    g->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    g->mdctx = EVP_MD_CTX_new();
    g->date_sec = -1;
    return g->sha256 && g->mdctx && poolsize > 2 * MAX_LINE ? 0 : -1;
}

void msg_gen_content(struct msg_gen *g, enum msg_content content, const struct corpus *corpus)
{
    g->content = content;
    g->corpus = corpus;
}

void msg_gen_free(struct msg_gen *g)
{
    free(g->scratch);
    corpus_buf_free(&g->hdr);
    corpus_buf_free(&g->raw);
    corpus_buf_free(&g->cbody);
    EVP_MD_free(g->sha256);
    EVP_MD_CTX_free(g->mdctx);
    memset(g, 0, sizeof *g);
}

static void reserve(struct msg_gen *g, size_t n)
{
    if (n > g->scratchcap) {
        g->scratch = xrealloc(g->scratch, n);
        g->scratchcap = n;
    }
}

/* The next line of text (with its CRLF) into out, at most MAX_LINE + 2 bytes; rem
 * counts down the bytes still to make. The one definition of the text's bytes:
 * text_lines and the stream (msg_stream_next) make the same ones. */
static size_t next_line(const struct msg_gen *g, struct rng *r, size_t *rem, char *out)
{
    uint64_t v = rng_next(r);
    /* rem > MAX_LINE+2 leaves at least 3 bytes after a full line, so the last
     * line can always take what remains */
    size_t len = *rem <= MAX_LINE + 2 ? *rem - 2 : (size_t)(v % (MAX_LINE - 1));
    size_t off = (size_t)((v >> 16) % (g->poolsize - MAX_LINE));
    memcpy(out, g->pool + off, len);
    out[len] = '\r';
    out[len + 1] = '\n';
    *rem -= len + 2;
    return len + 2;
}

/* n bytes (n >= 2) of CRLF lines of the pool at out. */
static void text_lines(const struct msg_gen *g, struct rng *r, char *out, size_t n)
{
    size_t o = 0, rem = n;
    while (rem)
        o += next_line(g, r, &rem, out + o);
}

static void hdr_printf(struct corpus_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hdr_printf(struct corpus_buf *b, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t k = n < 0 ? 0 : (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (b->len + k > b->cap) {
        b->cap = (b->len + k) * 2;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, line, k);
    b->len += k;
}

/* Appends a string at *o of the scratch (its room reserved by the caller). */
static void put_s(struct msg_gen *g, size_t *o, const char *s)
{
    size_t n = strlen(s);
    memcpy(g->scratch + *o, s, n);
    *o += n;
}

static void put_text(struct msg_gen *g, struct rng *r, size_t *o, size_t n)
{
    n = n < 2 ? 2 : n;
    text_lines(g, r, g->scratch + *o, n);
    *o += n;
}

/* An HTML part of about n bytes: a document around lines of text. */
static void put_html(struct msg_gen *g, struct rng *r, size_t *o, size_t n)
{
    put_s(g, o, "<html>\r\n  <head>\r\n    <meta http-equiv=\"content-type\" content=\"text/html; "
                "charset=UTF-8\">\r\n  </head>\r\n  <body>\r\n    <p>\r\n");
    put_text(g, r, o, n > 160 ? n - 160 : 2);
    put_s(g, o, "    </p>\r\n  </body>\r\n</html>\r\n");
}

/* n random bytes as base64 lines of 76 characters (RFC 2045). */
static void put_base64(struct msg_gen *g, struct rng *r, size_t *o, size_t n)
{
    unsigned char raw[57];
    while (n) {
        size_t k = n < sizeof raw ? n : sizeof raw;
        for (size_t i = 0; i < k; i += 8) {
            uint64_t v = rng_next(r);
            memcpy(raw + i, &v, k - i < 8 ? k - i : 8);
        }
        *o += (size_t)EVP_EncodeBlock((unsigned char *)g->scratch + *o, raw, (int)k);
        put_s(g, o, "\r\n");
        n -= k;
    }
}

static void put_alternative(struct msg_gen *g, struct rng *r, size_t *o, const char *b, size_t n)
{
    char line[160];
    snprintf(line, sizeof line, "--%s\r\nContent-Type: text/plain; charset=UTF-8; format=flowed\r\n"
                                "Content-Transfer-Encoding: 7bit\r\n\r\n", b);
    put_s(g, o, line);
    put_text(g, r, o, n / 3);
    snprintf(line, sizeof line, "\r\n--%s\r\nContent-Type: text/html; charset=UTF-8\r\n"
                                "Content-Transfer-Encoding: 7bit\r\n\r\n", b);
    put_s(g, o, line);
    put_html(g, r, o, n - n / 3);
    snprintf(line, sizeof line, "\r\n--%s--\r\n", b);
    put_s(g, o, line);
}

/* The header sets three common clients write (besides From, To, Subject, Date and
 * Message-ID, which every message has). */
static const char *const user_agents[] = {
    "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:115.0) Gecko/20100101 Thunderbird/115.6.0\r\n"
    "Content-Language: en-US\r\n",
    "X-Mailer: Microsoft Outlook 16.0\r\nThread-Index: AdoAbCdEfGhIjKlMnOpQrStUvWxYz==\r\n"
    "Accept-Language: en-US\r\nContent-Language: en-US\r\n",
    "X-Mailer: Apple Mail (2.3774.300.61.1.2)\r\n",
};

/* A MIME message of about n bytes: 40 % text/plain alone, 35 %
 * multipart/alternative (text and HTML), 25 % multipart/mixed of that and an
 * attachment taking what is left. Its headers go to g->hdr. */
static size_t mime_body(struct msg_gen *g, uint64_t seed, size_t n)
{
    struct rng r;
    rng_seed(&r, seed);
    uint64_t v = rng_next(&r), kind = v % 100;
    char b1[48], b2[48];
    snprintf(b1, sizeof b1, "------------ms%016llx", (unsigned long long)rng_next(&r));
    snprintf(b2, sizeof b2, "------------mx%016llx", (unsigned long long)rng_next(&r));
    reserve(g, n + n / 3 + 4096);
    g->hdr.len = 0;
    hdr_printf(&g->hdr, "MIME-Version: 1.0\r\n%s", user_agents[(v >> 8) % 3]);
    size_t o = 0;
    if (kind < 40) {
        hdr_printf(&g->hdr, "Content-Type: text/plain; charset=UTF-8; format=flowed\r\n"
                            "Content-Transfer-Encoding: 7bit\r\n");
        put_text(g, &r, &o, n);
    } else if (kind < 75) {
        hdr_printf(&g->hdr, "Content-Type: multipart/alternative;\r\n boundary=\"%s\"\r\n", b1);
        put_s(g, &o, "This is a multi-part message in MIME format.\r\n");
        put_alternative(g, &r, &o, b1, n > 600 ? n - 600 : 600);
    } else {
        size_t text = n / 8 < 600 ? 600 : n / 8 > 8000 ? 8000 : n / 8;
        size_t att = n > text + 1200 ? (n - text - 1200) / 4 * 3 : 512;
        hdr_printf(&g->hdr, "Content-Type: multipart/mixed;\r\n boundary=\"%s\"\r\n", b2);
        char line[320];
        snprintf(line, sizeof line, "This is a multi-part message in MIME format.\r\n--%s\r\n"
                                    "Content-Type: multipart/alternative;\r\n boundary=\"%s\"\r\n\r\n", b2, b1);
        put_s(g, &o, line);
        put_alternative(g, &r, &o, b1, text);
        unsigned id = (unsigned)(rng_next(&r) & 0xffff);
        snprintf(line, sizeof line, "\r\n--%s\r\nContent-Type: application/pdf; name=\"report-%04x.pdf\"\r\n"
                                    "Content-Disposition: attachment; filename=\"report-%04x.pdf\"\r\n"
                                    "Content-Transfer-Encoding: base64\r\n\r\n", b2, id, id);
        put_s(g, &o, line);
        reserve(g, o + att / 3 * 4 + att / 57 * 2 + 256);
        put_base64(g, &r, &o, att);
        snprintf(line, sizeof line, "\r\n--%s--\r\n", b2);
        put_s(g, &o, line);
    }
    return o;
}

/* A corpus message's body into g->cbody and its kept headers into g->hdr; 0 if
 * it could not be read. */
static size_t corpus_body(struct msg_gen *g, uint64_t seed)
{
    if (corpus_read(g->corpus, (size_t)(seed % g->corpus->n), &g->raw) < 0)
        return 0;
    corpus_prepare(g->raw.p, g->raw.len, g->corpus->mbox, &g->hdr, &g->cbody);
    return g->cbody.len;
}

size_t msg_body(struct msg_gen *g, const struct msg_params *p, uint8_t digest[MSG_DIGEST_LEN])
{
    size_t n = p->body_size == 1 ? 2 : p->body_size;
    g->body = g->scratch;
    g->own_headers = 1;
    g->hdr.len = 0;
    if (g->content == MSG_CORPUS && (n = corpus_body(g, p->body_seed)) > 0) {
        g->body = g->cbody.p;
        g->own_headers = 0;
    } else if (g->content == MSG_MIME) {
        n = mime_body(g, p->body_seed, n);
        g->body = g->scratch;
    } else {
        struct rng r;
        n = p->body_size == 1 ? 2 : p->body_size;   /* a corpus file that vanished: random */
        reserve(g, n);
        rng_seed(&r, p->body_seed);
        text_lines(g, &r, g->scratch, n);
        g->body = g->scratch;
        g->hdr.len = 0;
    }
    unsigned int dl = 0;
    EVP_DigestInit_ex(g->mdctx, g->sha256, NULL);
    EVP_DigestUpdate(g->mdctx, g->body, n);
    EVP_DigestFinal_ex(g->mdctx, digest, &dl);
    return n;
}

size_t msg_wire_max(const struct msg_gen *g, const struct msg_params *p, size_t body_len)
{
    return 530 + strlen(p->from) + strlen(p->to) + g->hdr.len + 2 * body_len + 8;
}

size_t msg_dot_stuff(const char *in, size_t len, char *out)
{
    const char *p = in, *end = in + len;
    char *o = out;
    while (p < end) {
        if (*p == '.')
            *o++ = '.';
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        memcpy(o, p, n);
        o += n;
        p += n;
    }
    return (size_t)(o - out);
}

static void refresh_date(struct msg_gen *g, uint64_t unix_ms)
{
    time_t sec = (time_t)(unix_ms / 1000);
    if (sec == g->date_sec)
        return;
    struct tm tm;
    gmtime_r(&sec, &tm);
    strftime(g->date, sizeof g->date, "%a, %d %b %Y %H:%M:%S +0000", &tm);
    g->date_sec = sec;
}

static char *hex(char *o, const uint8_t *b, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        *o++ = digits[b[i] >> 4];
        *o++ = digits[b[i] & 15];
    }
    return o;
}

void msg_stream_begin(struct msg_gen *g, struct msg_stream *st, const struct msg_params *p)
{
    rng_seed(&st->r, p->body_seed);
    st->rem = p->body_size == 1 ? 2 : p->body_size;
    g->own_headers = 1;              /* random text under our headers, as msg_body makes it */
    g->hdr.len = 0;
}

size_t msg_stream_next(struct msg_gen *g, struct msg_stream *st, char *out, size_t cap)
{
    size_t o = 0;
    char line[MAX_LINE + 2];
    while (st->rem && cap - o >= 2 * (MAX_LINE + 2)) {
        size_t n = next_line(g, &st->r, &st->rem, line);
        if (line[0] == '.')
            out[o++] = '.';
        memcpy(out + o, line, n);
        o += n;
    }
    return o;
}

void msg_stream_digest(struct msg_gen *g, const struct msg_params *p, uint8_t digest[MSG_DIGEST_LEN])
{
    struct msg_stream st;
    char line[MAX_LINE + 2];
    unsigned int dl = 0;
    msg_stream_begin(g, &st, p);
    EVP_DigestInit_ex(g->mdctx, g->sha256, NULL);
    while (st.rem) {
        size_t n = next_line(g, &st.r, &st.rem, line);
        EVP_DigestUpdate(g->mdctx, line, n);
    }
    EVP_DigestFinal_ex(g->mdctx, digest, &dl);
}

size_t msg_headers(struct msg_gen *g, const struct msg_params *p, const uint8_t digest[MSG_DIGEST_LEN], char *out)
{
    char dig[2 * MSG_DIGEST_LEN + 1];
    *hex(dig, digest, MSG_DIGEST_LEN) = 0;
    refresh_date(g, p->sent_unix_ms);
    char nr[16] = "";
    if (p->nrcpt > 1)                /* "/k": the k recipients' entries follow seq */
        snprintf(nr, sizeof nr, "/%u", p->nrcpt);
    int n;
    if (g->own_headers)
        n = sprintf(out,
                    "From: <%s>\r\nTo: <%s>\r\nSubject: mailsoak %s %llx\r\nDate: %s\r\n"
                    "Message-ID: <%s.%llx@mailsoak.invalid>\r\n"
                    "X-Mailsoak-Id: %s-%llx%s\r\nX-Mailsoak-Sent: %llu.%03u\r\n"
                    "X-Mailsoak-Digest: sha256:%s\r\n",
                    p->from, p->to, p->run_id, (unsigned long long)p->seq, g->date,
                    p->run_id, (unsigned long long)p->seq, p->run_id, (unsigned long long)p->seq, nr,
                    (unsigned long long)(p->sent_unix_ms / 1000), (unsigned)(p->sent_unix_ms % 1000), dig);
    else                             /* a corpus message: its own From, Subject, Date ... follow */
        n = sprintf(out,
                    "To: <%s>\r\nMessage-ID: <%s.%llx@mailsoak.invalid>\r\n"
                    "X-Mailsoak-Id: %s-%llx%s\r\nX-Mailsoak-Sent: %llu.%03u\r\n"
                    "X-Mailsoak-Digest: sha256:%s\r\n",
                    p->to, p->run_id, (unsigned long long)p->seq, p->run_id, (unsigned long long)p->seq, nr,
                    (unsigned long long)(p->sent_unix_ms / 1000), (unsigned)(p->sent_unix_ms % 1000), dig);
    size_t o = (size_t)n;
    if (g->hdr.len)
        memcpy(out + o, g->hdr.p, g->hdr.len);
    o += g->hdr.len;
    out[o++] = '\r';
    out[o++] = '\n';
    return o;
}

size_t msg_write(struct msg_gen *g, const struct msg_params *p, size_t body_len,
                 const uint8_t digest[MSG_DIGEST_LEN], char *out)
{
    size_t o = msg_headers(g, p, digest, out);
    o += msg_dot_stuff(g->body, body_len, out + o);
    memcpy(out + o, ".\r\n", 3);
    return o + 3;
}

/* --- verification --- */

void msg_check_begin(struct msg_check *m, EVP_MD_CTX *md, const EVP_MD *sha256)
{
    memset(m, 0, sizeof *m);
    m->md = md;
    EVP_DigestInit_ex(md, sha256, NULL);
}

static int unhex(const char *s, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n / 2; i++) {
        int v = 0;
        for (int k = 0; k < 2; k++) {
            char c = s[2 * i + k];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0)
                return -1;
            v = v * 16 + d;
        }
        out[i] = (uint8_t)v;
    }
    return 0;
}

int msg_parse_id(const char *v, size_t vl, char run_id[MSG_RUNID_LEN + 1], uint64_t *seq, unsigned *nrcpt)
{
    char tmp[24], *end;
    size_t sl = vl > MSG_RUNID_LEN + 1 ? vl - MSG_RUNID_LEN - 1 : 0;
    if (!sl || v[MSG_RUNID_LEN] != '-' || sl >= sizeof tmp)
        return -1;
    memcpy(tmp, v + MSG_RUNID_LEN + 1, sl);
    tmp[sl] = 0;
    uint64_t s = strtoull(tmp, &end, 16);
    unsigned k = 1;
    if (*end == '/' && end > tmp) {
        char *e2;
        unsigned long n = strtoul(end + 1, &e2, 10);
        if (*e2 == 0 && n >= 1 && n <= 64) {
            k = (unsigned)n;
            end = e2;
        }
    }
    if (*end)
        return -1;
    memcpy(run_id, v, MSG_RUNID_LEN);
    run_id[MSG_RUNID_LEN] = 0;
    *seq = s;
    *nrcpt = k;
    return 0;
}

static const char *header_value(const char *line, size_t len, const char *name, size_t *vlen)
{
    size_t n = strlen(name);
    if (len <= n || strncasecmp(line, name, n) || line[n] != ':')
        return NULL;
    const char *v = line + n + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *vlen = (size_t)(end - v);
    return v;
}

void msg_check_line(struct msg_check *m, const char *line, size_t len)
{
    if (m->in_body) {
        EVP_DigestUpdate(m->md, line, len);
        EVP_DigestUpdate(m->md, "\r\n", 2);
        m->body_bytes += len + 2;
        return;
    }
    if (len == 0) {
        m->in_body = 1;
        return;
    }
    size_t vl;
    const char *v;
    if ((v = header_value(line, len, "X-Mailsoak-Id", &vl))) {
        if (!m->have_id && msg_parse_id(v, vl, m->run_id, &m->seq, &m->nrcpt) == 0) {
            m->have_id = 1;
            return;
        }
        m->bad_header = 1;
    } else if ((v = header_value(line, len, "X-Mailsoak-Digest", &vl))) {
        if (vl == 7 + 2 * MSG_DIGEST_LEN && !strncmp(v, "sha256:", 7) &&
            unhex(v + 7, 2 * MSG_DIGEST_LEN, m->digest) == 0 && !m->have_digest)
            m->have_digest = 1;
        else
            m->bad_header = 1;
    } else if (len >= 11 && !strncasecmp(line, "X-Mailsoak-", 11)) {
        if (!header_value(line, len, "X-Mailsoak-Sent", &vl))
            m->bad_header = 1;       /* one of ours, mangled */
    }
}

enum msg_result msg_check_end(struct msg_check *m)
{
    uint8_t got[MSG_DIGEST_LEN];
    unsigned int dl = 0;
    EVP_DigestFinal_ex(m->md, got, &dl);
    if (!m->have_id && !m->have_digest && !m->bad_header)
        return MSG_FOREIGN;
    if (!m->have_id || !m->have_digest || m->bad_header)
        return MSG_CORRUPT;
    /* SHA-256 of nothing: the digest an empty body was sent with */
    static const uint8_t empty[MSG_DIGEST_LEN] = {
        0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
        0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
    };
    if (!memcmp(got, m->digest, MSG_DIGEST_LEN))
        return MSG_OK;
    return m->body_bytes == 2 && !memcmp(m->digest, empty, MSG_DIGEST_LEN) ? MSG_EMPTY_AS_LINE : MSG_CORRUPT;
}
