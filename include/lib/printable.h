/* printable: untrusted text (a server's replies, a mailbox's headers) made safe to
 * store, print and put in JSON, in the spirit of Postfix's printable() and
 * OpenSMTPD's strnvis(VIS_SAFE | VIS_CSTYLE). */
#ifndef MS_PRINTABLE_H
#define MS_PRINTABLE_H

#include <stddef.h>

/* Copies n bytes of in (NUL bytes included) into out, NUL-terminated, as valid
 * UTF-8 free of control characters: printable ASCII and well-formed UTF-8
 * characters other than C1 controls are kept, every other byte (C0 controls, DEL,
 * C1 controls, bytes of a malformed or truncated sequence) becomes "\xNN". The
 * copy is cut at outlen - 1 bytes, between characters and between escapes, never
 * inside one. Returns its length. Applied to its own output it changes nothing, so
 * text that passes through several stores is not escaped twice. */
size_t printable(char *out, size_t outlen, const void *in, size_t n);

/* printable() of all n bytes into a string of its own (the caller frees it): a
 * byte becomes at most four, so nothing is cut. */
char *printable_dup(const void *in, size_t n);

/* The longest prefix of s[0..n), at most max bytes, that does not end inside a
 * well-formed UTF-8 character: where a raw copy must be cut before printable()
 * sees it, so a cut character is not mistaken for a malformed one. */
size_t utf8_cut(const char *s, size_t n, size_t max);

#endif
