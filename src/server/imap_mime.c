/* imap_mime: what FETCH returns for a message (RFC 3501 sections 6.4.5, 7.4.2 and
 * 9): strings quoted or as literals, ENVELOPE, BODYSTRUCTURE and the sections. The
 * message is parsed only as far as they need: header fields unfolded, Content-Type
 * and its parameters, multipart boundaries to a fixed depth and part count. */
#include "server/imap_mime.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void bput(struct buf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        buf_append(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

void imap_string(struct buf *out, const char *p, size_t n)
{
    int lit = n > 1000;
    for (size_t i = 0; i < n && !lit; i++) {
        unsigned char u = (unsigned char)p[i];
        lit = u == '\r' || u == '\n' || u == 0 || u >= 0x80;
    }
    if (lit) {
        bprintf(out, "{%zu}\r\n", n);
        buf_append(out, p, n);
        return;
    }
    bput(out, "\"");
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '"' || p[i] == '\\')
            bput(out, "\\");
        buf_append(out, p + i, 1);
    }
    bput(out, "\"");
}

void imap_crlf(struct buf *out, const char *msg, size_t len)
{
    size_t st = 0;
    for (size_t i = 0; i < len; i++)
        if (msg[i] == '\n' && (i == 0 || msg[i - 1] != '\r')) {
            buf_append(out, msg + st, i - st);
            bput(out, "\r\n");
            st = i + 1;
        }
    buf_append(out, msg + st, len - st);
    if (len && msg[len - 1] != '\n')
        bput(out, "\r\n");
}

/* Where the header block ends (the blank line included) and the body starts. */
static size_t header_end(const char *m, size_t len)
{
    if (len >= 2 && m[0] == '\r' && m[1] == '\n')
        return 2;
    for (size_t i = 0; i + 3 < len; i++)
        if (m[i] == '\r' && m[i + 1] == '\n' && m[i + 2] == '\r' && m[i + 3] == '\n')
            return i + 4;
    return len;
}

/* The next header field of [p, e): its name and its whole text (folded lines
 * included, CRLF at the end). 0 at the end of the block. */
static int next_field(const char **p, const char *e, const char **name, size_t *nlen,
                      const char **all, size_t *alen)
{
    const char *s = *p;
    if (s >= e || *s == '\r' || *s == '\n')
        return 0;
    const char *q = s;
    for (;;) {
        const char *nl = memchr(q, '\n', (size_t)(e - q));
        q = nl ? nl + 1 : e;
        if (q >= e || (*q != ' ' && *q != '\t'))
            break;
    }
    const char *colon = memchr(s, ':', (size_t)(q - s));
    *name = s;
    *nlen = colon ? (size_t)(colon - s) : 0;
    *all = s;
    *alen = (size_t)(q - s);
    *p = q;
    return 1;
}

/* The unfolded, trimmed value of the first field called name (into out, at most cap - 1). */
static size_t field_value(const char *m, size_t hlen, const char *name, char *out, size_t cap)
{
    const char *p = m, *e = m + hlen, *n, *a;
    size_t nl, al;
    while (next_field(&p, e, &n, &nl, &a, &al)) {
        if (nl != strlen(name) || strncasecmp(n, name, nl))
            continue;
        size_t o = 0;
        for (size_t i = nl + 1; i < al && o + 1 < cap; i++) {
            char ch = a[i];
            if (ch == '\r' || ch == '\n')
                continue;
            if (ch == '\t')
                ch = ' ';
            if (ch == ' ' && (o == 0 || out[o - 1] == ' '))
                continue;
            out[o++] = ch;
        }
        while (o && out[o - 1] == ' ')
            o--;
        out[o] = 0;
        return o ? o : 1;            /* present, even when empty */
    }
    out[0] = 0;
    return 0;
}

static void nstring_field(struct buf *out, const char *m, size_t hlen, const char *name)
{
    char v[1024];
    size_t n = field_value(m, hlen, name, v, sizeof v);
    if (!n) {
        bput(out, "NIL");
        return;
    }
    imap_string(out, v, strlen(v));
}

/* One address "Name <local@host>" or "local@host" as (name NIL mailbox host). */
static void address(struct buf *out, const char *s, size_t n)
{
    while (n && *s == ' ') {
        s++;
        n--;
    }
    while (n && s[n - 1] == ' ')
        n--;
    const char *lt = memchr(s, '<', n), *addr = s, *name = NULL;
    size_t alen = n, nlen = 0;
    if (lt) {
        const char *gt = memchr(lt, '>', n - (size_t)(lt - s));
        addr = lt + 1;
        alen = gt ? (size_t)(gt - addr) : n - (size_t)(addr - s);
        name = s;
        nlen = (size_t)(lt - s);
        while (nlen && name[nlen - 1] == ' ')
            nlen--;
        if (nlen >= 2 && name[0] == '"' && name[nlen - 1] == '"') {
            name++;
            nlen -= 2;
        }
    }
    const char *at = NULL;
    for (size_t i = 0; i < alen; i++)
        if (addr[i] == '@')
            at = addr + i;
    bput(out, "(");
    if (nlen)
        imap_string(out, name, nlen);
    else
        bput(out, "NIL");
    bput(out, " NIL ");
    imap_string(out, addr, at ? (size_t)(at - addr) : alen);
    bput(out, " ");
    if (at)
        imap_string(out, at + 1, alen - (size_t)(at + 1 - addr));
    else
        bput(out, "NIL");
    bput(out, ")");
}

static void address_list(struct buf *out, const char *m, size_t hlen, const char *name, const char *alt)
{
    char v[2048];
    if (!field_value(m, hlen, name, v, sizeof v) && (!alt || !field_value(m, hlen, alt, v, sizeof v))) {
        bput(out, "NIL");
        return;
    }
    size_t n = strlen(v), st = 0, count = 0, mark = out->len;
    int q = 0, ang = 0;
    bput(out, "(");
    for (size_t i = 0; i <= n; i++) {
        char ch = i < n ? v[i] : ',';
        if (ch == '"')
            q = !q;
        else if (ch == '<' && !q)
            ang = 1;
        else if (ch == '>' && !q)
            ang = 0;
        else if (ch == ',' && !q && !ang) {
            if (i > st && memchr(v + st, '@', i - st)) {
                address(out, v + st, i - st);
                count++;
            }
            st = i + 1;
        }
    }
    if (!count) {                    /* no address in it: NIL, not an empty list */
        out->len = mark;
        bput(out, "NIL");
        return;
    }
    bput(out, ")");
}

void imap_envelope(struct buf *out, const char *m, size_t len)
{
    size_t h = header_end(m, len);
    bput(out, "(");
    nstring_field(out, m, h, "Date");
    bput(out, " ");
    nstring_field(out, m, h, "Subject");
    bput(out, " ");
    address_list(out, m, h, "From", NULL);
    bput(out, " ");
    address_list(out, m, h, "Sender", "From");
    bput(out, " ");
    address_list(out, m, h, "Reply-To", "From");
    bput(out, " ");
    address_list(out, m, h, "To", NULL);
    bput(out, " ");
    address_list(out, m, h, "Cc", NULL);
    bput(out, " ");
    address_list(out, m, h, "Bcc", NULL);
    bput(out, " ");
    nstring_field(out, m, h, "In-Reply-To");
    bput(out, " ");
    nstring_field(out, m, h, "Message-ID");
    bput(out, ")");
}

/* Content-Type's type, subtype and parameters, RFC 2045's defaults when absent. */
struct ctype {
    char type[64], sub[64], boundary[128];
    char params[8][2][128];
    size_t nparams;
};

static size_t token(const char *s, size_t i, size_t n, char *out, size_t cap, const char *stop)
{
    size_t o = 0;
    while (i < n && s[i] == ' ')
        i++;
    if (i < n && s[i] == '"') {
        for (i++; i < n && s[i] != '"'; i++) {
            if (s[i] == '\\' && i + 1 < n)
                i++;
            if (o + 1 < cap)
                out[o++] = s[i];
        }
        if (i < n)
            i++;
    } else {
        for (; i < n && !strchr(stop, s[i]) && s[i] != ' '; i++)
            if (o + 1 < cap)
                out[o++] = s[i];
    }
    out[o] = 0;
    while (i < n && s[i] == ' ')
        i++;
    return i;
}

static void content_type(const char *m, size_t hlen, struct ctype *ct)
{
    char v[1024];
    memset(ct, 0, sizeof *ct);
    size_t n, i;
    field_value(m, hlen, "Content-Type", v, sizeof v);
    n = strlen(v);
    i = token(v, 0, n, ct->type, sizeof ct->type, "/;");
    if (i < n && v[i] == '/')
        i = token(v, i + 1, n, ct->sub, sizeof ct->sub, ";");
    if (!ct->type[0] || !ct->sub[0]) {
        snprintf(ct->type, sizeof ct->type, "text");
        snprintf(ct->sub, sizeof ct->sub, "plain");
        snprintf(ct->params[0][0], sizeof ct->params[0][0], "charset");
        snprintf(ct->params[0][1], sizeof ct->params[0][1], "us-ascii");
        ct->nparams = 1;
        return;
    }
    while (i < n && v[i] == ';') {
        char k[128], val[128];
        i = token(v, i + 1, n, k, sizeof k, "=;");
        if (i >= n || v[i] != '=')
            continue;
        i = token(v, i + 1, n, val, sizeof val, ";");
        if (!k[0])
            continue;
        if (!strcasecmp(k, "boundary"))
            snprintf(ct->boundary, sizeof ct->boundary, "%s", val);
        if (ct->nparams < 8) {
            snprintf(ct->params[ct->nparams][0], sizeof ct->params[0][0], "%s", k);
            snprintf(ct->params[ct->nparams][1], sizeof ct->params[0][1], "%s", val);
            ct->nparams++;
        }
    }
}

static void upper_string(struct buf *out, const char *s)
{
    char u[128];
    size_t n = 0;
    for (; s[n] && n + 1 < sizeof u; n++)
        u[n] = (char)toupper((unsigned char)s[n]);
    imap_string(out, u, n);
}

static size_t count_lines(const char *p, size_t n)
{
    size_t l = 0;
    for (size_t i = 0; i < n; i++)
        l += p[i] == '\n';
    if (n && p[n - 1] != '\n')
        l++;
    return l;
}

static const char *find_line(const char *p, const char *e, const char *delim, size_t dl)
{
    for (const char *q = p; q + dl <= e;) {
        if (!memcmp(q, delim, dl) && (q == p || q[-1] == '\n'))
            return q;
        const char *nl = memchr(q, '\n', (size_t)(e - q));
        if (!nl)
            break;
        q = nl + 1;
    }
    return NULL;
}

static void structure(struct buf *out, const char *m, size_t len, int depth);

static void multipart(struct buf *out, const char *body, size_t blen, const struct ctype *ct, int depth)
{
    char delim[140];
    int dl = snprintf(delim, sizeof delim, "--%s", ct->boundary);
    const char *e = body + blen, *p = find_line(body, e, delim, (size_t)dl);
    size_t parts = 0;
    bput(out, "(");
    while (p && parts < IMAP_MIME_PARTS) {
        const char *st = memchr(p, '\n', (size_t)(e - p));
        if (!st || (p + dl + 1 < e && p[dl] == '-' && p[dl + 1] == '-'))
            break;
        st++;
        const char *next = find_line(st, e, delim, (size_t)dl);
        const char *end = next ? next : e;
        if (end > st && end[-1] == '\n')   /* the CRLF before a delimiter is the delimiter's */
            end -= end - 1 > st && end[-2] == '\r' ? 2 : 1;
        structure(out, st, (size_t)(end - st), depth + 1);
        parts++;
        p = next;
    }
    if (!parts)                      /* no part found: one empty text part keeps it valid */
        bput(out, "(\"TEXT\" \"PLAIN\" (\"CHARSET\" \"US-ASCII\") NIL NIL \"7BIT\" 0 0)");
    bput(out, " ");
    upper_string(out, ct->sub);
    bput(out, ")");
}

static void structure(struct buf *out, const char *m, size_t len, int depth)
{
    size_t h = header_end(m, len);
    struct ctype ct;
    content_type(m, h, &ct);
    const char *body = m + h;
    size_t blen = len - h;
    if (!strcasecmp(ct.type, "multipart") && ct.boundary[0] && depth < IMAP_MIME_DEPTH) {
        multipart(out, body, blen, &ct, depth);
        return;
    }
    int is_msg = !strcasecmp(ct.type, "message") && !strcasecmp(ct.sub, "rfc822") && depth < IMAP_MIME_DEPTH;
    if (!strcasecmp(ct.type, "multipart")) {   /* beyond the depth, or no boundary: opaque */
        snprintf(ct.type, sizeof ct.type, "application");
        snprintf(ct.sub, sizeof ct.sub, "octet-stream");
        ct.nparams = 0;
    }
    bput(out, "(");
    upper_string(out, ct.type);
    bput(out, " ");
    upper_string(out, ct.sub);
    bput(out, " ");
    if (!ct.nparams) {
        bput(out, "NIL");
    } else {
        bput(out, "(");
        for (size_t i = 0; i < ct.nparams; i++) {
            if (i)
                bput(out, " ");
            upper_string(out, ct.params[i][0]);
            bput(out, " ");
            imap_string(out, ct.params[i][1], strlen(ct.params[i][1]));
        }
        bput(out, ")");
    }
    bput(out, " ");
    nstring_field(out, m, h, "Content-ID");
    bput(out, " ");
    nstring_field(out, m, h, "Content-Description");
    bput(out, " ");
    char enc[64];
    if (!field_value(m, h, "Content-Transfer-Encoding", enc, sizeof enc) || !enc[0])
        snprintf(enc, sizeof enc, "7bit");
    upper_string(out, enc);
    bprintf(out, " %zu", blen);
    if (is_msg) {
        bput(out, " ");
        imap_envelope(out, body, blen);
        bput(out, " ");
        structure(out, body, blen, depth + 1);
        bprintf(out, " %zu", count_lines(body, blen));
    } else if (!strcasecmp(ct.type, "text")) {
        bprintf(out, " %zu", count_lines(body, blen));
    }
    bput(out, ")");
}

void imap_bodystructure(struct buf *out, const char *msg, size_t len)
{
    structure(out, msg, len, 0);
}

/* Whether a field name is in the space-separated list. */
static int in_fields(const char *fields, const char *name, size_t nlen)
{
    const char *p = fields;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *st = p;
        while (*p && *p != ' ')
            p++;
        size_t l = (size_t)(p - st);
        if (st[0] == '"' && l >= 2 && st[l - 1] == '"') {
            st++;
            l -= 2;
        }
        if (l && l == nlen && !strncasecmp(st, name, l))
            return 1;
    }
    return 0;
}

void imap_section(struct buf *out, const char *m, size_t len, const struct imap_att *a)
{
    size_t h = header_end(m, len);
    switch (a->sec) {
    case SEC_ALL:
        buf_append(out, m, len);
        return;
    case SEC_HEADER:
        buf_append(out, m, h);
        return;
    case SEC_TEXT:
        buf_append(out, m + h, len - h);
        return;
    case SEC_FIELDS:
    case SEC_FIELDS_NOT: {
        const char *p = m, *e = m + h, *n, *all;
        size_t nl, al;
        while (next_field(&p, e, &n, &nl, &all, &al))
            if (in_fields(a->fields, n, nl) == (a->sec == SEC_FIELDS))
                buf_append(out, all, al);
        bput(out, "\r\n");
        return;
    }
    }
}
