/* imap_proto: reading IMAP command arguments and writing FETCH's answers (RFC 3501
 * sections 6.4.5, 7.4.2 and 9), without sockets. The message is parsed only as far
 * as ENVELOPE and BODYSTRUCTURE need: header fields unfolded, Content-Type and its
 * parameters, multipart boundaries to a fixed depth. */
#include "server/imap_proto.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/alloc.h"

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

/* --- reading a command --- */

int imap_sp(struct imap_cur *c)
{
    if (c->i >= c->n || c->p[c->i] != ' ')
        return -1;
    c->i++;
    return 0;
}

int imap_at_end(const struct imap_cur *c)
{
    for (size_t i = c->i; i < c->n; i++)
        if (c->p[i] != ' ' && c->p[i] != '\r' && c->p[i] != '\n')
            return 0;
    return 1;
}

static int atom_char(char ch)
{
    unsigned char u = (unsigned char)ch;
    return u > ' ' && u < 0x7f && ch != '(' && ch != ')' && ch != '{' && ch != '"';
}

int imap_atom(struct imap_cur *c, const char **s, size_t *len)
{
    size_t st = c->i;
    while (c->i < c->n && atom_char(c->p[c->i]))
        c->i++;
    *s = c->p + st;
    *len = c->i - st;
    return *len ? 0 : -1;
}

/* "{n}" or "{n+}" then CRLF, at the cursor: n, and the cursor on the literal's bytes. */
static int literal_head(struct imap_cur *c, uint64_t *n)
{
    size_t i = c->i + 1;
    uint64_t v = 0;
    if (i >= c->n || !isdigit((unsigned char)c->p[i]))
        return -1;
    while (i < c->n && isdigit((unsigned char)c->p[i])) {
        if (v > UINT32_MAX)
            return -1;
        v = v * 10 + (uint64_t)(c->p[i++] - '0');
    }
    if (i < c->n && c->p[i] == '+')
        i++;
    if (i + 3 > c->n || c->p[i] != '}' || c->p[i + 1] != '\r' || c->p[i + 2] != '\n')
        return -1;
    i += 3;
    if (v > c->n - i)
        return -1;
    c->i = i;
    *n = v;
    return 0;
}

int imap_astring(struct imap_cur *c, char *out, size_t cap, size_t *len)
{
    size_t o = 0;
    if (c->i >= c->n || !cap)
        return -1;
    char ch = c->p[c->i];
    if (ch == '"') {
        for (c->i++; c->i < c->n; c->i++) {
            ch = c->p[c->i];
            if (ch == '"') {
                c->i++;
                out[o] = 0;
                *len = o;
                return 0;
            }
            if (ch == '\\') {
                if (++c->i >= c->n)
                    return -1;
                ch = c->p[c->i];
                if (ch != '"' && ch != '\\')
                    return -1;
            } else if (ch == '\r' || ch == '\n' || ch == 0) {
                return -1;
            }
            if (o + 1 >= cap)
                return -1;
            out[o++] = ch;
        }
        return -1;
    }
    if (ch == '{') {
        uint64_t n;
        if (literal_head(c, &n) < 0 || n + 1 > cap)
            return -1;
        memcpy(out, c->p + c->i, (size_t)n);
        c->i += (size_t)n;
        out[n] = 0;
        *len = (size_t)n;
        return 0;
    }
    const char *s;
    size_t n;
    if (imap_atom(c, &s, &n) < 0 || n + 1 > cap)
        return -1;
    memcpy(out, s, n);
    out[n] = 0;
    *len = n;
    return 0;
}

/* --- sequence sets --- */

static int set_num(const char **s, const char *e, uint32_t *v)
{
    if (*s < e && **s == '*') {
        (*s)++;
        *v = UINT32_MAX;
        return 0;
    }
    uint64_t x = 0;
    const char *st = *s;
    while (*s < e && isdigit((unsigned char)**s)) {
        x = x * 10 + (uint64_t)(**s - '0');
        if (x >= UINT32_MAX)
            return -1;
        (*s)++;
    }
    if (*s == st || x == 0)
        return -1;
    *v = (uint32_t)x;
    return 0;
}

int imap_set_parse(const char *s, size_t len, struct imap_set *set)
{
    const char *e = s + len;
    set->n = 0;
    if (!len)
        return -1;
    for (;;) {
        uint32_t a, b;
        if (set_num(&s, e, &a) < 0)
            return -1;
        b = a;
        if (s < e && *s == ':') {
            s++;
            if (set_num(&s, e, &b) < 0)
                return -1;
        }
        if (set->n >= IMAP_SET_MAX)
            return -1;
        set->r[set->n].lo = a < b ? a : b;
        set->r[set->n].hi = a < b ? b : a;
        set->n++;
        if (s == e)
            return 0;
        if (*s++ != ',')
            return -1;
    }
}

int imap_set_has(const struct imap_set *set, uint32_t v, uint32_t star)
{
    for (size_t i = 0; i < set->n; i++) {
        uint32_t lo = set->r[i].lo == UINT32_MAX ? star : set->r[i].lo;
        uint32_t hi = set->r[i].hi == UINT32_MAX ? star : set->r[i].hi;
        if (lo > hi) {
            uint32_t t = lo;
            lo = hi;
            hi = t;
        }
        if (v >= lo && v <= hi)
            return 1;
    }
    return 0;
}

/* --- FETCH items --- */

static int word_is(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && !strncasecmp(s, w, n);
}

/* BODY[...] or BODY.PEEK[...], the cursor past the '['; then <o.n>. */
static int parse_section(struct imap_cur *c, struct imap_att *a, const char *name, const char **why)
{
    size_t st = c->i, depth = 0;
    while (c->i < c->n && (c->p[c->i] != ']' || depth)) {
        char ch = c->p[c->i];
        if (ch == '(')
            depth++;
        else if (ch == ')' && depth)
            depth--;
        else if (ch == '\r' || ch == '\n' || ch == '{')
            break;
        c->i++;
    }
    if (c->i >= c->n || c->p[c->i] != ']') {
        *why = "unterminated section";
        return -1;
    }
    const char *sp = c->p + st;
    size_t sl = c->i - st;
    c->i++;
    const char *paren = memchr(sp, '(', sl);
    size_t kl = paren ? (size_t)(paren - sp) : sl;
    while (kl && sp[kl - 1] == ' ')
        kl--;
    if (!sl)
        a->sec = SEC_ALL;
    else if (word_is(sp, kl, "HEADER") && !paren)
        a->sec = SEC_HEADER;
    else if ((word_is(sp, kl, "TEXT") || word_is(sp, kl, "1")) && !paren)
        a->sec = SEC_TEXT;
    else if (word_is(sp, kl, "HEADER.FIELDS") && paren)
        a->sec = SEC_FIELDS;
    else if (word_is(sp, kl, "HEADER.FIELDS.NOT") && paren)
        a->sec = SEC_FIELDS_NOT;
    else {
        *why = "unsupported section";
        return -1;
    }
    if (paren) {
        const char *e = memchr(paren, ')', sl - (size_t)(paren - sp));
        size_t fl = e ? (size_t)(e - paren - 1) : 0;
        if (!e || !fl || fl >= sizeof a->fields) {
            *why = "bad field list";
            return -1;
        }
        memcpy(a->fields, paren + 1, fl);
        a->fields[fl] = 0;
    }
    int n = snprintf(a->label, sizeof a->label, "%s[%.*s]", name, (int)sl, sp);
    for (int i = 0; i < n && i < (int)sizeof a->label; i++)
        a->label[i] = (char)toupper((unsigned char)a->label[i]);
    if (c->i < c->n && c->p[c->i] == '<') {
        char *end;
        const char *q = c->p + c->i + 1;
        if (!isdigit((unsigned char)*q))
            goto bad_partial;
        a->off = strtoull(q, &end, 10);
        if (*end != '.' || !isdigit((unsigned char)end[1]))
            goto bad_partial;
        a->len = strtoull(end + 1, &end, 10);
        if (*end != '>' || (size_t)(end - c->p) >= c->n)
            goto bad_partial;
        c->i = (size_t)(end - c->p) + 1;
        a->partial = 1;
        size_t l = strlen(a->label);
        snprintf(a->label + l, sizeof a->label - l, "<%llu>", (unsigned long long)a->off);
    }
    return 0;
bad_partial:
    *why = "bad partial <offset.length>";
    return -1;
}

static int fetch_item(struct imap_cur *c, struct imap_fetch *f, const char **why)
{
    const char *s;
    size_t n;
    size_t st = c->i;
    while (c->i < c->n && atom_char(c->p[c->i]) && c->p[c->i] != '[')
        c->i++;
    s = c->p + st;
    n = c->i - st;
    if (!n) {
        *why = "missing fetch item";
        return -1;
    }
    int bracket = c->i < c->n && c->p[c->i] == '[';
    if (bracket && (word_is(s, n, "BODY") || word_is(s, n, "BODY.PEEK"))) {
        if (f->nsec >= IMAP_ATT_MAX) {
            *why = "too many fetch items";
            return -1;
        }
        struct imap_att *a = &f->sec[f->nsec];
        memset(a, 0, sizeof *a);
        a->peek = n == 9;
        c->i++;
        if (parse_section(c, a, "BODY", why) < 0)
            return -1;
        f->nsec++;
        f->what |= FA_SECTION;
        return 0;
    }
    if (bracket) {
        *why = "unknown fetch item";
        return -1;
    }
    static const struct { const char *w; unsigned bits; } simple[] = {
        { "UID", FA_UID }, { "FLAGS", FA_FLAGS }, { "RFC822.SIZE", FA_SIZE }, { "INTERNALDATE", FA_DATE },
        { "ENVELOPE", FA_ENVELOPE }, { "BODYSTRUCTURE", FA_BODYSTRUCTURE }, { "BODY", FA_BODY },
        { "FAST", FA_FLAGS | FA_DATE | FA_SIZE }, { "ALL", FA_FLAGS | FA_DATE | FA_SIZE | FA_ENVELOPE },
        { "FULL", FA_FLAGS | FA_DATE | FA_SIZE | FA_ENVELOPE | FA_BODY },
    };
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
        if (word_is(s, n, simple[i].w)) {
            f->what |= simple[i].bits;
            return 0;
        }
    static const struct { const char *w; enum imap_sec sec; int peek; } rfc[] = {
        { "RFC822", SEC_ALL, 0 }, { "RFC822.HEADER", SEC_HEADER, 1 }, { "RFC822.TEXT", SEC_TEXT, 0 },
    };
    for (size_t i = 0; i < sizeof rfc / sizeof rfc[0]; i++)
        if (word_is(s, n, rfc[i].w)) {
            if (f->nsec >= IMAP_ATT_MAX) {
                *why = "too many fetch items";
                return -1;
            }
            struct imap_att *a = &f->sec[f->nsec++];
            memset(a, 0, sizeof *a);
            a->sec = rfc[i].sec;
            a->peek = rfc[i].peek;
            snprintf(a->label, sizeof a->label, "%s", rfc[i].w);
            f->what |= FA_SECTION;
            return 0;
        }
    *why = "unknown fetch item";
    return -1;
}

int imap_fetch_parse(struct imap_cur *c, struct imap_fetch *f, const char **why)
{
    memset(f, 0, sizeof *f);
    if (c->i < c->n && c->p[c->i] == '(') {
        c->i++;
        for (;;) {
            if (fetch_item(c, f, why) < 0)
                return -1;
            if (c->i < c->n && c->p[c->i] == ')') {
                c->i++;
                break;
            }
            if (imap_sp(c) < 0) {
                *why = "expected a space or ')'";
                return -1;
            }
        }
    } else if (fetch_item(c, f, why) < 0) {
        return -1;
    }
    if (!imap_at_end(c)) {
        *why = "unexpected text after the fetch items";
        return -1;
    }
    return 0;
}

int imap_fetch_needs_body(const struct imap_fetch *f)
{
    return (f->what & (FA_ENVELOPE | FA_BODYSTRUCTURE | FA_BODY | FA_SECTION)) != 0;
}

int imap_fetch_sets_seen(const struct imap_fetch *f)
{
    for (size_t i = 0; i < f->nsec; i++)
        if (!f->sec[i].peek)
            return 1;
    return 0;
}

/* --- flags --- */

static const struct { const char *name; unsigned bit; } flag_names[] = {
    { "\\Seen", IF_SEEN }, { "\\Answered", IF_ANSWERED }, { "\\Flagged", IF_FLAGGED },
    { "\\Deleted", IF_DELETED }, { "\\Draft", IF_DRAFT },
};

static int one_flag(struct imap_cur *c, unsigned *flags)
{
    const char *s;
    size_t n;
    if (imap_atom(c, &s, &n) < 0)
        return -1;
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (word_is(s, n, flag_names[i].name)) {
            *flags |= flag_names[i].bit;
            return 0;
        }
    if (s[0] == '\\' && !word_is(s, n, "\\Recent"))
        return -1;                   /* an unknown system flag */
    return 0;                        /* a keyword: not kept */
}

int imap_flags_parse(struct imap_cur *c, unsigned *flags)
{
    *flags = 0;
    if (c->i < c->n && c->p[c->i] == '(') {
        c->i++;
        if (c->i < c->n && c->p[c->i] == ')') {
            c->i++;
            return 0;
        }
        for (;;) {
            if (one_flag(c, flags) < 0)
                return -1;
            if (c->i < c->n && c->p[c->i] == ')') {
                c->i++;
                return 0;
            }
            if (imap_sp(c) < 0)
                return -1;
        }
    }
    for (;;) {
        if (one_flag(c, flags) < 0)
            return -1;
        if (imap_at_end(c))
            return 0;
        if (imap_sp(c) < 0)
            return -1;
    }
}

void imap_flags_write(struct buf *out, unsigned flags)
{
    int first = 1;
    bput(out, "(");
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (flags & flag_names[i].bit) {
            if (!first)
                bput(out, " ");
            bput(out, flag_names[i].name);
            first = 0;
        }
    bput(out, ")");
}

/* --- SEARCH --- */

void imap_search_free(struct imap_search *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->k[i].set);
    s->n = 0;
}

int imap_search_parse(struct imap_cur *c, struct imap_search *s, const char **why)
{
    static const struct { const char *w; int kind; unsigned flag; } keys[] = {
        { "ALL", 0, 0 }, { "SEEN", SK_FLAG_SET, IF_SEEN }, { "UNSEEN", SK_FLAG_CLEAR, IF_SEEN },
        { "DELETED", SK_FLAG_SET, IF_DELETED }, { "UNDELETED", SK_FLAG_CLEAR, IF_DELETED },
        { "ANSWERED", SK_FLAG_SET, IF_ANSWERED }, { "UNANSWERED", SK_FLAG_CLEAR, IF_ANSWERED },
        { "FLAGGED", SK_FLAG_SET, IF_FLAGGED }, { "UNFLAGGED", SK_FLAG_CLEAR, IF_FLAGGED },
    };
    memset(s, 0, sizeof *s);
    int not = 0;
    while (!imap_at_end(c)) {
        const char *w;
        size_t n;
        if (imap_atom(c, &w, &n) < 0) {
            *why = "bad search key";
            goto bad;
        }
        if (word_is(w, n, "CHARSET") && !s->n) {
            if (imap_sp(c) < 0 || imap_atom(c, &w, &n) < 0) {
                *why = "CHARSET needs a name";
                goto bad;
            }
        } else if (word_is(w, n, "NOT")) {
            not = !not;
        } else {
            if (s->n >= IMAP_SEARCH_MAX) {
                *why = "too many search keys";
                goto bad;
            }
            int kind = -1;
            unsigned flag = 0;
            for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
                if (word_is(w, n, keys[i].w)) {
                    kind = keys[i].kind;
                    flag = keys[i].flag;
                }
            struct imap_set *set = NULL;
            if (kind < 0 && word_is(w, n, "UID")) {
                if (imap_sp(c) < 0 || imap_atom(c, &w, &n) < 0) {
                    *why = "UID needs a set";
                    goto bad;
                }
                kind = SK_UID;
            } else if (kind < 0) {
                kind = SK_SEQ;
            }
            if (kind == SK_UID || kind == SK_SEQ) {
                set = xmalloc(sizeof *set);
                if (imap_set_parse(w, n, set) < 0) {
                    free(set);
                    *why = "unsupported search key";
                    goto bad;
                }
            }
            s->k[s->n].kind = kind;
            s->k[s->n].not = not;
            s->k[s->n].flag = flag;
            s->k[s->n].set = set;
            s->n++;
            not = 0;
        }
        if (!imap_at_end(c) && imap_sp(c) < 0) {
            *why = "expected a space";
            goto bad;
        }
    }
    return 0;
bad:
    imap_search_free(s);
    return -1;
}

int imap_search_match(const struct imap_search *s, uint32_t seq, uint32_t uid, unsigned flags,
                      uint32_t maxseq, uint32_t maxuid)
{
    for (size_t i = 0; i < s->n; i++) {
        int m = 1;
        switch (s->k[i].kind) {
        case SK_FLAG_SET: m = (flags & s->k[i].flag) != 0; break;
        case SK_FLAG_CLEAR: m = (flags & s->k[i].flag) == 0; break;
        case SK_UID: m = imap_set_has(s->k[i].set, uid, maxuid); break;
        case SK_SEQ: m = imap_set_has(s->k[i].set, seq, maxseq); break;
        default: break;
        }
        if (m == s->k[i].not)
            return 0;
    }
    return 1;
}

/* --- writing FETCH's answers --- */

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
