/* printable: the one filter between bytes a server chose and anything a person or a
 * JSON parser reads. It validates UTF-8 by the table of RFC 3629 section 4, so
 * overlong forms, surrogates and code points past U+10FFFF count as malformed. */
#include "lib/printable.h"

#include "lib/alloc.h"

/* Length of the well-formed UTF-8 character at s[0..n), or 0 if there is none. */
static size_t utf8_char(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;  /* the second byte's range */
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) lo = 0xa0;        /* overlong */
        if (c == 0xed) hi = 0x9f;        /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) lo = 0x90;        /* overlong */
        if (c == 0xf4) hi = 0x8f;        /* past U+10FFFF */
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return len;
}

size_t printable(char *out, size_t outlen, const void *in, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = in;
    size_t o = 0;
    if (!outlen)
        return 0;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_char(s + i, n - i);
        /* C0 and DEL; C1 (U+0080..U+009F) is encoded 0xc2 0x80..0x9f, and some
         * terminals obey it as they would ESC [ */
        int control = len == 1 ? s[i] < 0x20 || s[i] == 0x7f : len == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0;
        if (len && !control) {
            if (o + len > outlen - 1)
                break;
            for (size_t k = 0; k < len; k++)
                out[o++] = (char)s[i + k];
            i += len;
            continue;
        }
        if (o + 4 > outlen - 1)
            break;
        out[o++] = '\\';
        out[o++] = 'x';
        out[o++] = hex[s[i] >> 4];
        out[o++] = hex[s[i] & 15];
        i++;                             /* the next byte may start a good character */
    }
    out[o] = 0;
    return o;
}

char *printable_dup(const void *in, size_t n)
{
    char *out = xmalloc(4 * n + 1);
    printable(out, 4 * n + 1, in, n);
    return out;
}

size_t utf8_cut(const char *s, size_t n, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n <= max)
        return n;
    /* back over continuation bytes to a character's first byte (at most 3), and
     * cut before it if the character it starts is whole and would not fit */
    size_t k = max;
    while (k > 0 && max - k < 3 && (u[k] & 0xc0) == 0x80)
        k--;
    size_t len = utf8_char(u + k, n - k);
    return len > 1 && k + len > max ? k : max;
}
