/* imap_parse: the IMAP client's response reader, resumable and bounded, and the
 * readers of a response's words. Input is a server's: every length is checked
 * before it is trusted, and nothing here prints or keeps the bytes. */
#include "engine/imap_parse.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void imap_rd_init(struct imap_rd *rd, size_t max_line, uint64_t max_literal)
{
    memset(rd, 0, sizeof *rd);
    rd->max_line = max_line;
    rd->max_literal = max_literal;
}

/* The literal announced at the end of text "... {123}": 1 with its size and where
 * the "{" starts, 0 when none, -1 (why said) for one no server may send. */
static int literal_at_end(const char *p, size_t n, uint64_t max, uint64_t *size, size_t *brace, char *why,
                          size_t whylen)
{
    if (!n || p[n - 1] != '}')
        return 0;
    size_t i = n - 1, digits = 0;
    int plus = 0;
    if (i && p[i - 1] == '+') {
        plus = 1;
        i--;
    }
    while (i && isdigit((unsigned char)p[i - 1])) {
        i--;
        digits++;
    }
    if (!i || p[i - 1] != '{' || !digits)
        return 0;
    if (plus) {
        /* LITERAL+ is the client's: a server must wait for nothing */
        snprintf(why, whylen, "a non-synchronizing literal {n+} from the server");
        return -1;
    }
    if (digits > 10) {
        snprintf(why, whylen, "a literal of more than 10 digits");
        return -1;
    }
    uint64_t v = 0;
    for (size_t k = i; k < n - 1 - (size_t)plus; k++)
        v = v * 10 + (uint64_t)(p[k] - '0');
    if (v > max) {
        snprintf(why, whylen, "a literal of %llu bytes, over the %llu allowed", (unsigned long long)v,
                 (unsigned long long)max);
        return -1;
    }
    *size = v;
    *brace = i - 1;
    return 1;
}

int imap_next(struct imap_rd *rd, const char *p, size_t n, size_t *used, struct imap_piece *pc, char *why,
              size_t whylen)
{
    memset(pc, 0, sizeof *pc);
    if (rd->in_lit && !rd->lit_left) {
        rd->in_lit = 0;
        pc->kind = IMAP_LITEND;
        *used = 0;
        return 1;
    }
    if (rd->in_lit) {
        size_t win = n < rd->lit_left ? n : (size_t)rd->lit_left;
        const char *nl = win ? memchr(p, '\n', win) : NULL;
        size_t take;
        if (nl) {
            take = (size_t)(nl - p) + 1;
        } else if (win == rd->lit_left) {
            take = win;              /* the literal's last bytes, ending without a line end */
        } else {
            /* a line and its CRLF fit in max_line + 2 bytes: one not ended by then never fits */
            if (win >= rd->max_line + 2) {
                snprintf(why, whylen, "a line in a literal longer than %zu bytes", rd->max_line);
                return -1;
            }
            return 0;
        }
        size_t len = take;
        if (len && p[len - 1] == '\n')
            len--;
        if (len && p[len - 1] == '\r')
            len--;
        if (take > rd->max_line + 2 || len > rd->max_line) {
            snprintf(why, whylen, "a line in a literal longer than %zu bytes", rd->max_line);
            return -1;
        }
        rd->lit_left -= take;
        pc->kind = IMAP_LITLINE;
        pc->p = p;
        pc->len = len;
        *used = take;
        return 1;
    }
    size_t win = n < rd->max_line + 2 ? n : rd->max_line + 2;
    const char *nl = win ? memchr(p, '\n', win) : NULL;
    if (!nl) {
        if (n >= rd->max_line + 2) {
            snprintf(why, whylen, "a response line longer than %zu bytes", rd->max_line);
            return -1;
        }
        return 0;
    }
    size_t len = (size_t)(nl - p);
    if (len && p[len - 1] == '\r')
        len--;
    if (len > rd->max_line) {
        snprintf(why, whylen, "a response line longer than %zu bytes", rd->max_line);
        return -1;
    }
    uint64_t size = 0;
    size_t brace = 0;
    int lit = literal_at_end(p, len, rd->max_literal, &size, &brace, why, whylen);
    if (lit < 0)
        return -1;
    pc->kind = IMAP_TEXT;
    pc->p = p;
    pc->first = !rd->mid;
    *used = (size_t)(nl - p) + 1;
    if (!rd->mid)
        rd->nlit = 0;
    if (lit) {
        if (++rd->nlit > IMAP_MAX_LITERALS) {
            snprintf(why, whylen, "more than %d literals in one response", IMAP_MAX_LITERALS);
            return -1;
        }
        pc->len = brace;
        pc->lit = size;
        rd->mid = 1;
        rd->in_lit = 1;
        rd->lit_left = size;
    } else {
        pc->len = len;
        pc->last = 1;
        rd->mid = 0;
    }
    return 1;
}

int imap_split(const char *p, size_t n, const char **tag, size_t *taglen, const char **rest)
{
    if (n >= 2 && p[0] == '*' && p[1] == ' ') {
        *rest = p + 2;
        return IMAP_UNTAGGED;
    }
    if (n >= 1 && p[0] == '+') {
        *rest = p + (n >= 2 && p[1] == ' ' ? 2 : 1);
        return IMAP_CONTINUE;
    }
    size_t k = 0;
    /* a tag is ASTRING-CHAR but '+' (RFC 3501 9): no blanks, controls or specials */
    while (k < n && p[k] > ' ' && p[k] < 0x7f && !strchr("(){%*\"\\+", p[k]))
        k++;
    if (!k || k >= n || p[k] != ' ')
        return -1;
    *tag = p;
    *taglen = k;
    *rest = p + k + 1;
    return IMAP_TAGGED;
}

static int word_is(const char *p, size_t n, const char *w)
{
    size_t wl = strlen(w);
    return n >= wl && !strncasecmp(p, w, wl) && (n == wl || p[wl] == ' ');
}

enum imap_status imap_status(const char *p, size_t n, const char **after)
{
    static const struct { const char *w; enum imap_status st; } words[] = {
        { "OK", IMAP_ST_OK }, { "NO", IMAP_ST_NO }, { "BAD", IMAP_ST_BAD },
        { "BYE", IMAP_ST_BYE }, { "PREAUTH", IMAP_ST_PREAUTH },
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (word_is(p, n, words[i].w)) {
            size_t wl = strlen(words[i].w);
            *after = p + wl + (n > wl);
            return words[i].st;
        }
    *after = p;
    return IMAP_ST_NONE;
}

/* A decimal number of at most 19 digits at p: its length, 0 when none. */
static size_t number(const char *p, size_t n, uint64_t *v)
{
    size_t k = 0;
    uint64_t x = 0;
    while (k < n && k < 19 && isdigit((unsigned char)p[k]))
        x = x * 10 + (uint64_t)(p[k++] - '0');
    if (k < n && isdigit((unsigned char)p[k]))
        return 0;
    *v = x;
    return k;
}

int imap_numbered(const char *p, size_t n, uint64_t *num, const char **word, size_t *wl)
{
    size_t k = number(p, n, num);
    if (!k || k >= n || p[k] != ' ')
        return -1;
    const char *w = p + k + 1;
    size_t rest = n - k - 1, l = 0;
    while (l < rest && isalpha((unsigned char)w[l]))
        l++;
    if (!l)
        return -1;
    *word = w;
    *wl = l;
    return 0;
}

int imap_item_num(const char *p, size_t n, const char *item, uint64_t *v)
{
    size_t il = strlen(item);
    int quoted = 0;
    for (size_t i = 0; i < n; i++) {
        if (quoted) {
            if (p[i] == '\\')
                i++;
            else if (p[i] == '"')
                quoted = 0;
            continue;
        }
        if (p[i] == '"') {
            quoted = 1;
            continue;
        }
        if ((i == 0 || p[i - 1] == ' ' || p[i - 1] == '(') && n - i > il && !strncasecmp(p + i, item, il) &&
            p[i + il] == ' ') {
            size_t k = number(p + i + il + 1, n - i - il - 1, v);
            return k ? 0 : -2;
        }
    }
    return -1;
}

int imap_ends_with(const char *p, size_t n, const char *word)
{
    while (n && p[n - 1] == ' ')
        n--;
    size_t wl = strlen(word);
    return n >= wl && !strncasecmp(p + n - wl, word, wl) && (n == wl || p[n - wl - 1] == ' ' || p[n - wl - 1] == '(');
}

int imap_is_capability(const char *p, size_t n)
{
    return word_is(p, n, "CAPABILITY") || (n > 11 && !strncasecmp(p, "[CAPABILITY ", 12));
}

int imap_has_cap(const char *p, size_t n, const char *cap)
{
    size_t cl = strlen(cap);
    for (size_t i = 0; i + cl <= n; i++) {
        if (i && p[i - 1] != ' ')
            continue;
        if (!strncasecmp(p + i, cap, cl) && (i + cl == n || p[i + cl] == ' ' || p[i + cl] == ']'))
            return 1;
    }
    return 0;
}

const char *imap_err_kind(enum imap_status st, const char *text, size_t n)
{
    static const struct { const char *code, *kind; } codes[] = {
        { "[AUTHENTICATIONFAILED]", "auth" }, { "[AUTHORIZATIONFAILED]", "auth" },
        { "[UNAVAILABLE]", "unavailable" },   { "[INUSE]", "in_use" },
        { "[LIMIT]", "limit" },               { "[SERVERBUG]", "serverbug" },
        { "[NONEXISTENT]", "nonexistent" },   { "[EXPUNGEISSUED]", "expunged" },
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        size_t cl = strlen(codes[i].code);
        if (n >= cl && !strncasecmp(text, codes[i].code, cl))
            return codes[i].kind;
    }
    return st == IMAP_ST_BAD ? "bad" : st == IMAP_ST_BYE ? "bye" : "no";
}

int imap_quote(const char *s, char *out, size_t outlen)
{
    size_t k = 0;
    if (outlen < 3)
        return -1;
    out[k++] = '"';
    for (; *s; s++) {
        if (*s == '\r' || *s == '\n')
            return -1;
        if (k + 4 > outlen)
            return -1;
        if (*s == '"' || *s == '\\')
            out[k++] = '\\';
        out[k++] = *s;
    }
    out[k++] = '"';
    out[k] = 0;
    return 0;
}
