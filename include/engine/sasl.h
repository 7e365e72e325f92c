/* sasl: the credentials exchanges of SMTP AUTH (PLAIN, LOGIN, CRAM-MD5) and POP3
 * (APOP, AUTH PLAIN), as pure functions over strings, on OpenSSL's primitives. */
#ifndef MS_SASL_H
#define MS_SASL_H

#include <stddef.h>

/* Base64 of n bytes into out (4 * ceil(n / 3) + 1 bytes); returns the length. */
size_t sasl_b64(const void *in, size_t n, char *out);
/* PLAIN initial response: base64("\0user\0pass"). -1 if it does not fit. */
int sasl_plain(const char *user, const char *pass, char *out, size_t outlen);
/* CRAM-MD5 (RFC 2195): from the server's base64 challenge, base64("user hexdigest"). */
int sasl_cram_md5(const char *user, const char *pass, const char *challenge_b64, char *out, size_t outlen);
/* APOP (RFC 1939): md5 hex of the banner's <timestamp> and the password; -1 when
 * the banner has no timestamp. */
int pop3_apop(const char *banner, const char *pass, char hex[33]);

#endif
