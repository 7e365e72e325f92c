/* sasl: the credentials exchanges of SMTP AUTH (PLAIN, LOGIN, CRAM-MD5) and POP3
 * (APOP, AUTH PLAIN), as pure functions over strings, on OpenSSL's primitives. */
#ifndef MS_SASL_H
#define MS_SASL_H

#include <stddef.h>
#include <stdint.h>

/* Base64 of n bytes into out (4 * ceil(n / 3) + 1 bytes); returns the length. */
size_t sasl_b64(const void *in, size_t n, char *out);
/* PLAIN initial response: base64("\0user\0pass"). -1 if it does not fit. */
int sasl_plain(const char *user, const char *pass, char *out, size_t outlen);
/* CRAM-MD5 (RFC 2195): from the server's base64 challenge, base64("user hexdigest"). */
int sasl_cram_md5(const char *user, const char *pass, const char *challenge_b64, char *out, size_t outlen);
/* APOP (RFC 1939): md5 hex of the banner's <timestamp> and the password; -1 when
 * the banner has no timestamp. */
int pop3_apop(const char *banner, const char *pass, char hex[33]);

/* SMTP AUTH (RFC 4954) from the client's side, one exchange. */
struct auth_exchange {
    int mech;                        /* enum smtp_auth, never AUTO once begun */
    int step;                        /* challenges answered; 2 = no more answers */
};
/* The AUTH command (no CRLF) into line: mech as run.smtp_auth (auto: the best the
 * EHLO keywords ext offer, CRAM-MD5, then PLAIN, then LOGIN), PLAIN with its
 * initial response. */
void smtp_auth_begin(struct auth_exchange *a, int mech, uint32_t ext, const char *user, const char *pass,
                     char *line, size_t n);
/* The answer to a 334 whose text (after "334 ") is challenge, into line: 1, or 0
 * once two were answered (the caller gives up). An answer that cannot be made is
 * "*", which cancels the exchange. */
int smtp_auth_answer(struct auth_exchange *a, const char *user, const char *pass, const char *challenge,
                     char *line, size_t n);

#endif
