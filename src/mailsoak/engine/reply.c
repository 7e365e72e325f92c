/* reply: SMTP and POP3 reply parsing. Strict where strictness finds server bugs
 * (reply codes, continuation markers), lenient where real servers differ
 * (keyword case, trailing spaces). */
#include "engine/reply.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lib/printable.h"

int smtp_reply_feed(struct smtp_reply *r, const char *line, size_t len)
{
    if (len < 3 || !isdigit((unsigned char)line[0]) || !isdigit((unsigned char)line[1]) ||
        !isdigit((unsigned char)line[2]) || line[0] < '2' || line[0] > '5')
        return -1;
    int code = (line[0] - '0') * 100 + (line[1] - '0') * 10 + (line[2] - '0');
    char sep = len > 3 ? line[3] : ' ';
    if (sep != ' ' && sep != '-')
        return -1;
    if (r->lines == 0) {
        r->code = code;
        /* a character cut in two would look malformed in the example */
        size_t n = utf8_cut(line, len, sizeof r->text - 1);
        memcpy(r->text, line, n);
        r->text[n] = 0;
        r->len = n;
    } else if (code != r->code || r->lines >= SMTP_REPLY_MAX_LINES) {
        return -1;
    }
    r->lines++;
    return sep == ' ';
}

static int id_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '+' || c == '/' || c == '=' || c == '-' || c == ':';
}

/* The token at p: id characters up to a blank or the end (anything else, or a token
 * too long, is no id); a trailing '.' or ':' is punctuation. Returns its length, or 0. */
static size_t id_token(const char *p, const char *end, char *out)
{
    const char *q = p;
    while (q < end && id_char((unsigned char)*q) && q - p <= SMTP_QID_MAX)
        q++;
    if (q < end && *q != ' ')
        return 0;
    while (q > p && (q[-1] == '.' || q[-1] == ':'))
        q--;
    size_t n = (size_t)(q - p);
    if (!n || n > SMTP_QID_MAX)
        return 0;
    memcpy(out, p, n);
    out[n] = 0;
    return n;
}

/* Whether the n bytes at p are the ASCII word w (lower case, letters, digits, blanks
 * and punctuation), ignoring case: no locale, no strlen, on every accepted message. */
static int word_at(const char *p, const char *end, const char *w, size_t n)
{
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 'A' && c <= 'Z')
            c |= 0x20;
        if (c != (unsigned char)w[i])
            return 0;
    }
    return 1;
}
#define WORD_AT(p, end, w) word_at(p, end, w, sizeof w - 1)

/* Where "queued as " starts in [p, end), ignoring case; NULL if nowhere. */
static const char *find_queued_as(const char *p, const char *end)
{
    for (; end - p >= 10; p++)
        if ((*p | 0x20) == 'q' && WORD_AT(p, end, "queued as "))
            return p;
    return NULL;
}

size_t smtp_queue_id(const char *text, size_t len, char out[SMTP_QID_MAX + 1])
{
    out[0] = 0;
    if (len < 5 || memcmp(text, "250", 3) || (text[3] != ' ' && text[3] != '-'))
        return 0;
    const char *p = text + 4, *end = text + len, *q;
    while (p < end && *p == ' ')
        p++;
    /* an enhanced status code (RFC 3463), "2.0.0" or Postfix's "2.0.0:" */
    q = p;
    while (q < end && ((*q >= '0' && *q <= '9') || *q == '.'))
        q++;
    if (q > p && q[-1] != '.' && memchr(p, '.', (size_t)(q - p)) && (q == end || *q == ' ' || *q == ':')) {
        p = q + (q < end && *q == ':');
        while (p < end && *p == ' ')
            p++;
    }
    if ((q = find_queued_as(p, end)))                     /* Postfix, mailsoak-server */
        return id_token(q + 10, end, out);
    if (WORD_AT(p, end, "ok id="))                        /* Exim */
        return id_token(p + 6, end, out);
    if (WORD_AT(p, end, "ok. "))                          /* Courier */
        return id_token(p + 4, end, out);
    if (p < end && *p == '<') {                           /* Dovecot LMTP: <rcpt> SESSION Saved */
        q = memchr(p, '>', (size_t)(end - p));
        if (!q || q + 1 >= end || q[1] != ' ')
            return 0;
        size_t n = id_token(q + 2, end, out);
        if (n && !WORD_AT(q + 2 + n, end, " saved"))
            n = 0;
        return n ? n : (out[0] = 0, 0);
    }
    size_t n = id_token(p, end, out);                     /* sendmail, OpenSMTPD: ID Message accepted */
    if (n && WORD_AT(p + n, end, " message accepted"))
        return n;
    out[0] = 0;
    return 0;
}

static int word_is(const char *w, size_t n, const char *kw)
{
    return strlen(kw) == n && strncasecmp(w, kw, n) == 0;
}

uint32_t ehlo_keywords(const char *line, size_t len)
{
    uint32_t f = 0;
    const char *p = line, *end = line + len;
    const char *w = p;
    while (w < end && *w == ' ')
        w++;
    const char *we = w;
    while (we < end && *we != ' ' && *we != '=')
        we++;
    size_t n = (size_t)(we - w);
    if (word_is(w, n, "PIPELINING")) f |= EXT_PIPELINING;
    else if (word_is(w, n, "STARTTLS")) f |= EXT_STARTTLS;
    else if (word_is(w, n, "8BITMIME")) f |= EXT_8BITMIME;
    else if (word_is(w, n, "SIZE")) f |= EXT_SIZE;
    else if (word_is(w, n, "CHUNKING")) f |= EXT_CHUNKING;
    else if (word_is(w, n, "SMTPUTF8")) f |= EXT_SMTPUTF8;
    else if (word_is(w, n, "ENHANCEDSTATUSCODES")) f |= EXT_ENHANCEDSTATUSCODES;
    else if (word_is(w, n, "AUTH")) {
        /* "AUTH PLAIN LOGIN" and the old "AUTH=LOGIN" form */
        for (const char *m = we; m < end;) {
            while (m < end && (*m == ' ' || *m == '='))
                m++;
            const char *me = m;
            while (me < end && *me != ' ')
                me++;
            if (word_is(m, (size_t)(me - m), "PLAIN")) f |= EXT_AUTH_PLAIN;
            if (word_is(m, (size_t)(me - m), "LOGIN")) f |= EXT_AUTH_LOGIN;
            if (word_is(m, (size_t)(me - m), "CRAM-MD5")) f |= EXT_AUTH_CRAM_MD5;
            m = me;
        }
    }
    return f;
}

uint64_t ehlo_size(const char *line, size_t len)
{
    const char *p = line, *end = line + len;
    while (p < end && *p == ' ')
        p++;
    if (end - p < 5 || strncasecmp(p, "SIZE", 4) || (p[4] != ' ' && p[4] != '='))
        return 0;
    p += 5;
    uint64_t v = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > (1ull << 53))
            return 0;
    }
    return v;
}

int pop3_status(const char *line, size_t len, const char **text)
{
    if (len >= 3 && !strncmp(line, "+OK", 3) && (len == 3 || line[3] == ' ')) {
        *text = line + (len > 3 ? 4 : 3);
        return 1;
    }
    if (len >= 4 && !strncmp(line, "-ERR", 4) && (len == 4 || line[4] == ' ')) {
        *text = line + (len > 4 ? 5 : 4);
        return 0;
    }
    *text = line;
    return -1;
}

int pop3_number(const char *p, const char **end, unsigned *out)
{
    unsigned long long v = 0;
    const char *q = p;
    while (*q >= '0' && *q <= '9' && v <= UINT32_MAX)
        v = v * 10 + (unsigned)(*q++ - '0');
    if (q == p || v > UINT32_MAX)
        return -1;
    *end = q;
    *out = (unsigned)v;
    return 0;
}

int pop3_listing(const char *line, size_t len, unsigned *id, const char **rest, size_t *restlen)
{
    const char *end;
    if (pop3_number(line, &end, id) < 0 || (size_t)(end - line) >= len || *end != ' ')
        return -1;
    *rest = end + 1;
    *restlen = len - (size_t)(end + 1 - line);
    return 0;
}

const char *pop3_err_kind(const char *text)
{
    if (!strncasecmp(text, "[IN-USE]", 8) || strcasestr(text, "lock") || strcasestr(text, "in use"))
        return "in_use";
    if (!strncasecmp(text, "[AUTH]", 6))
        return "auth";
    if (!strncasecmp(text, "[SYS/TEMP]", 10))
        return "sys_temp";
    if (!strncasecmp(text, "[SYS/PERM]", 10))
        return "sys_perm";
    return "other";
}
