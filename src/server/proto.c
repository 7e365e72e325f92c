/* proto: command parsing and the DATA/RETR byte transformations of the reference
 * server. Kept free of sessions and sockets: the unit tests feed it split input
 * to prove a terminator or a stuffed dot spanning two reads is handled. */
#include "server/proto.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct verb { const char *name; int v; };

static int match_verb(const struct verb *t, const char *line, size_t len, const char **arg)
{
    size_t n = 0;
    while (n < len && line[n] != ' ')
        n++;
    for (; t->name; t++) {
        if (strlen(t->name) == n && !strncasecmp(t->name, line, n)) {
            const char *a = line + n;
            while (*a == ' ')
                a++;
            *arg = a;
            return t->v;
        }
    }
    *arg = line + n;
    return 0;
}

enum srv_smtp_verb srv_smtp_verb(const char *line, size_t len, const char **arg)
{
    static const struct verb t[] = {
        { "EHLO", SV_EHLO }, { "HELO", SV_HELO }, { "MAIL", SV_MAIL }, { "RCPT", SV_RCPT },
        { "DATA", SV_DATA }, { "RSET", SV_RSET }, { "NOOP", SV_NOOP }, { "QUIT", SV_QUIT },
        { "AUTH", SV_AUTH }, { "VRFY", SV_VRFY }, { "STARTTLS", SV_STARTTLS },
        { "BDAT", SV_BDAT }, { NULL, 0 },
    };
    return (enum srv_smtp_verb)match_verb(t, line, len, arg);
}

enum srv_pop3_verb srv_pop3_verb(const char *line, size_t len, const char **arg)
{
    static const struct verb t[] = {
        { "USER", PV_USER }, { "PASS", PV_PASS }, { "STAT", PV_STAT }, { "LIST", PV_LIST },
        { "UIDL", PV_UIDL }, { "RETR", PV_RETR }, { "DELE", PV_DELE }, { "RSET", PV_RSET },
        { "NOOP", PV_NOOP }, { "QUIT", PV_QUIT }, { "TOP", PV_TOP }, { "CAPA", PV_CAPA },
        { "APOP", PV_APOP }, { "AUTH", PV_AUTH }, { "STLS", PV_STLS }, { NULL, 0 },
    };
    return (enum srv_pop3_verb)match_verb(t, line, len, arg);
}

int srv_smtp_path(const char *arg, const char *kw, const char **addr, size_t *alen,
                  const char **params)
{
    size_t k = strlen(kw);
    if (strncasecmp(arg, kw, k) || arg[k] != ':')
        return -1;
    const char *p = arg + k + 1;
    while (*p == ' ')                /* RFC 5321 forbids it; many clients send it */
        p++;
    if (*p == '<') {
        const char *end = strchr(p, '>');
        if (!end)
            return -1;
        *addr = p + 1;
        *alen = (size_t)(end - p - 1);
        p = end + 1;
    } else {
        const char *s = p;
        while (*p && *p != ' ')
            p++;
        if (p == s)
            return -1;
        *addr = s;
        *alen = (size_t)(p - s);
    }
    if (*p && *p != ' ')
        return -1;
    /* A source route (@a,@b:user@c) is ignored, as RFC 5321 asks. */
    const char *colon = *alen && **addr == '@' ? memchr(*addr, ':', *alen) : NULL;
    if (colon) {
        *alen -= (size_t)(colon + 1 - *addr);
        *addr = colon + 1;
    }
    while (*p == ' ')
        p++;
    *params = p;
    return 0;
}

int srv_mail_params(const char *params, struct srv_mail_params *mp, const char **why)
{
    memset(mp, 0, sizeof *mp);
    const char *p = params;
    while (*p) {
        const char *s = p;
        while (*p && *p != ' ')
            p++;
        size_t n = (size_t)(p - s);
        if (n > 5 && !strncasecmp(s, "SIZE=", 5)) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(s + 5, &end, 10);
            if (errno || end != p || !isdigit((unsigned char)s[5])) {
                *why = "bad SIZE parameter";
                return -1;
            }
            mp->size = v;
        } else if (n == 13 && !strncasecmp(s, "BODY=8BITMIME", 13)) {
            mp->body_8bit = 1;
        } else if (n == 9 && !strncasecmp(s, "BODY=7BIT", 9)) {
            mp->body_8bit = 0;
        } else if (n > 5 && !strncasecmp(s, "AUTH=", 5)) {
            /* RFC 4954: accepted and ignored */
        } else {
            *why = "unsupported parameter";
            return -1;
        }
        while (*p == ' ')
            p++;
    }
    return 0;
}

enum { D_BOL, D_MID, D_DOT, D_DOTCR };

void srv_data_init(struct srv_data *d, uint64_t max)
{
    memset(d, 0, sizeof *d);
    d->state = D_BOL;
    d->max = max;
}

static void keep(struct srv_data *d, struct buf *out, const char *p, size_t n)
{
    d->total += n;
    if (d->max && d->total > d->max)
        d->overflow = 1;
    if (!d->overflow)
        buf_append(out, p, n);
}

size_t srv_data_feed(struct srv_data *d, const char *in, size_t n, struct buf *out)
{
    size_t i = 0;
    while (i < n && !d->done) {
        switch (d->state) {
        case D_BOL:
            if (in[i] == '.') {
                d->state = D_DOT;
                i++;
                break;
            }
            d->state = D_MID;
            /* fall through */
        case D_MID: {
            /* The hot path: copy up to and including the next LF in one go. */
            const char *nl = memchr(in + i, '\n', n - i);
            size_t end = nl ? (size_t)(nl - in) + 1 : n;
            keep(d, out, in + i, end - i);
            i = end;
            if (nl)
                d->state = D_BOL;
            break;
        }
        case D_DOT:
            if (in[i] == '\n') {         /* ".\n": tolerated like Postfix does */
                d->done = 1;
                i++;
            } else if (in[i] == '\r') {
                d->state = D_DOTCR;
                i++;
            } else {
                d->state = D_MID;        /* the stuffed dot is dropped */
            }
            break;
        case D_DOTCR:
            if (in[i] == '\n') {
                d->done = 1;
                i++;
            } else {
                keep(d, out, "\r", 1);   /* ".\rX": only the dot was stuffing */
                d->state = D_MID;
            }
            break;
        }
    }
    return i;
}

void srv_pop3_stuff(struct buf *out, const char *msg, size_t len, long body_lines)
{
    size_t i = 0;
    int in_body = 0;
    long left = body_lines;
    /* Worst case every line is "." + LF: 4 bytes out for 2 in. */
    buf_reserve(out, len + len / 2 + 8);
    while (i < len) {
        if (in_body && body_lines >= 0 && left-- <= 0)
            break;
        const char *nl = memchr(msg + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - msg) : len;      /* index of LF or len */
        size_t cont = end;                                /* content end, CR excluded */
        if (cont > i && msg[cont - 1] == '\r')
            cont--;
        if (!in_body && cont == i)
            in_body = 1;             /* the blank line ends the headers */
        if (msg[i] == '.')
            buf_append(out, ".", 1);
        buf_append(out, msg + i, cont - i);
        buf_append(out, "\r\n", 2);
        i = nl ? end + 1 : len;
    }
    buf_append(out, ".\r\n", 3);
}

static int b64val(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

int srv_b64_decode(const char *in, size_t n, char *out, size_t cap, size_t *outlen)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    while (n && in[n - 1] == '=')
        n--;
    for (size_t i = 0; i < n; i++) {
        int v = b64val((unsigned char)in[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o >= cap)
                return -1;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    *outlen = o;
    return 0;
}

void srv_b64_encode(const char *in, size_t n, char *out)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)in[i] << 16;
        if (i + 1 < n) v |= (uint32_t)(unsigned char)in[i + 1] << 8;
        if (i + 2 < n) v |= (uint32_t)(unsigned char)in[i + 2];
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    out[o] = 0;
}

int srv_sasl_plain(const char *buf, size_t n, const char **user, size_t *ulen,
                   const char **pass, size_t *plen)
{
    const char *z1 = memchr(buf, 0, n);
    if (!z1)
        return -1;
    const char *u = z1 + 1;
    const char *z2 = memchr(u, 0, n - (size_t)(u - buf));
    if (!z2)
        return -1;
    *user = u;
    *ulen = (size_t)(z2 - u);
    *pass = z2 + 1;
    *plen = n - (size_t)(z2 + 1 - buf);
    return 0;
}

size_t srv_unescape(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = in; *p && o < cap; p++) {
        char c = *p;
        if (c == '\\' && p[1]) {
            p++;
            switch (*p) {
            case 'r': c = '\r'; break;
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case '0': c = 0; break;
            case 'x':
                if (isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
                    char h[3] = { p[1], p[2], 0 };
                    c = (char)strtol(h, NULL, 16);
                    p += 2;
                }
                break;
            default: c = *p; break;      /* \\ and any other: the character itself */
            }
        }
        out[o++] = c;
    }
    return o;
}

void srv_forge_id(struct buf *msg, const char *seq)
{
    static const char name[] = "X-Mailsoak-Id:";
    const char *p = msg->p + msg->off, *end = msg->p + msg->len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le == p || (le == p + 1 && *p == '\r'))
            return;                      /* the blank line: no id in the headers */
        if ((size_t)(le - p) > sizeof name - 1 && !strncasecmp(p, name, sizeof name - 1)) {
            const char *v = p + sizeof name - 1;
            while (v < le && *v == ' ')
                v++;
            const char *rest = le > v && le[-1] == '\r' ? le - 1 : le;   /* the value's end */
            const char *keep = rest - v > 9 ? v + 9 : rest;
            const char *start = msg->p + msg->off;
            struct buf out = { 0 };
            buf_append(&out, start, (size_t)(keep - start));
            buf_append(&out, seq, strlen(seq));
            buf_append(&out, rest, (size_t)(end - rest));
            buf_free(msg);
            *msg = out;
            return;
        }
        p = nl ? nl + 1 : end;
    }
}
