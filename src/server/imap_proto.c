/* imap_proto: reading IMAP command arguments (RFC 3501 section 9): atoms, quoted
 * strings and literals, sequence sets, FETCH items and sections, flags and SEARCH
 * keys, each bounded by a constant of imap_proto.h, without sockets. */
#include "server/imap_proto.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/alloc.h"

static void bput(struct buf *b, const char *s)
{
    buf_append(b, s, strlen(s));
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
