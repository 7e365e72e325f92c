/* reply: parsing of server replies — SMTP (RFC 5321 multi-line replies, EHLO
 * keywords) and POP3 status lines (RFC 1939, RFC 2449 response codes). Pure
 * functions over one line at a time, so they are cheap to test and to fuzz. */
#ifndef MS_REPLY_H
#define MS_REPLY_H

#include <stddef.h>
#include <stdint.h>

struct smtp_reply {
    int code;            /* 0 until the first line is seen */
    int lines;
    char text[160];      /* first line, for error examples: raw, cut between characters */
    size_t len;          /* of text, which may hold NUL bytes */
};

/* A reply of more lines than this is a hostile one (EHLO's has about a dozen). */
#define SMTP_REPLY_MAX_LINES 1000

/* Feeds one line (without CRLF). 1: the reply is complete; 0: more lines follow;
 * -1: not an SMTP reply line (bad code, bad separator, code changed mid-reply,
 * more than SMTP_REPLY_MAX_LINES lines). */
int smtp_reply_feed(struct smtp_reply *r, const char *line, size_t len);
static inline void smtp_reply_reset(struct smtp_reply *r) { r->code = 0; r->lines = 0; r->text[0] = 0; r->len = 0; }

enum ehlo_ext {
    EXT_PIPELINING = 1 << 0, EXT_STARTTLS = 1 << 1, EXT_8BITMIME = 1 << 2, EXT_SIZE = 1 << 3,
    EXT_AUTH_PLAIN = 1 << 4, EXT_AUTH_LOGIN = 1 << 5, EXT_AUTH_CRAM_MD5 = 1 << 6,
    EXT_CHUNKING = 1 << 7, EXT_SMTPUTF8 = 1 << 8, EXT_ENHANCEDSTATUSCODES = 1 << 9,
};
/* Extensions named by one EHLO reply line (its text after the code and separator). */
uint32_t ehlo_keywords(const char *line, size_t len);
/* The limit of "SIZE n" in such a line (RFC 1870); 0 for no SIZE, no number (no
 * fixed limit) or a number past 2^53 (taken as none). */
uint64_t ehlo_size(const char *line, size_t len);

/* The server's id for an accepted message, from the text of its end-of-data reply
 * (the reply's first line, code included), in the wordings of the real servers:
 *   Postfix, mailsoak-server  250 2.0.0 Ok: queued as 4XyZ1abc
 *   Exim                      250 OK id=1xYVFE-0002Ax-0X
 *   sendmail, OpenSMTPD       250 2.0.0 6B1LJHv5011118 Message accepted for delivery
 *   Courier                   250 Ok. 00000000692E0B3C.00003039
 *   Dovecot LMTP              250 2.0.0 <user@domain> QD73EYM5D2uDCAAAg+zDdQ Saved
 *                             (":T5" after the session id: its 5th transaction)
 * The bytes are the server's: an id is 1..SMTP_QID_MAX characters of [A-Za-z0-9._+/=:-]
 * (printable by construction); anything else is no id. Writes it NUL-terminated to
 * out (SMTP_QID_MAX + 1 bytes) and returns its length, or 0. Cheap: one pass over at
 * most the reply's first line, on every accepted message. */
#define SMTP_QID_MAX 63
size_t smtp_queue_id(const char *text, size_t len, char out[SMTP_QID_MAX + 1]);

/* POP3: 1 for +OK, 0 for -ERR, -1 for anything else. *text points past the status. */
int pop3_status(const char *line, size_t len, const char **text);
/* A POP3 count or message number (the line NUL-terminated, as conn_line gives
 * it): digits only, at most UINT32_MAX; *end is past it. -1 when there is none. */
int pop3_number(const char *p, const char **end, unsigned *out);
/* A line of a LIST ("n size") or UIDL ("n uid") listing: the message number and
 * what follows its one space. -1 when the line is not one. */
int pop3_listing(const char *line, size_t len, unsigned *id, const char **rest, size_t *restlen);
/* The error kind of a -ERR text: "in_use", "auth", "sys_temp", "sys_perm" or "other". */
const char *pop3_err_kind(const char *text);

#endif
