/* proto: the pure parts of the server's SMTP and POP3 (verbs, paths, parameters,
 * DATA dot-unstuffing, RETR dot-stuffing, base64), free of sockets so unit tests can
 * drive them byte by byte. */
#ifndef MS_SERVER_PROTO_H
#define MS_SERVER_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "lib/conn.h"

enum srv_smtp_verb {
    SV_UNKNOWN, SV_EHLO, SV_HELO, SV_MAIL, SV_RCPT, SV_DATA, SV_RSET, SV_NOOP, SV_QUIT,
    SV_AUTH, SV_VRFY, SV_STARTTLS, SV_BDAT,
};
enum srv_pop3_verb {
    PV_UNKNOWN, PV_USER, PV_PASS, PV_STAT, PV_LIST, PV_UIDL, PV_RETR, PV_DELE, PV_RSET,
    PV_NOOP, PV_QUIT, PV_TOP, PV_CAPA, PV_APOP, PV_AUTH, PV_STLS,
};

/* The verb of a command line (case-insensitive, a space or the end after it);
 * *arg points past the spaces that follow it. */
enum srv_smtp_verb srv_smtp_verb(const char *line, size_t len, const char **arg);
enum srv_pop3_verb srv_pop3_verb(const char *line, size_t len, const char **arg);

/* "FROM:<a@b> SIZE=10" with kw "FROM": the address (without brackets, may be empty
 * for the null path) and where the parameters start. 0 ok, -1 syntax error. */
int srv_smtp_path(const char *arg, const char *kw, const char **addr, size_t *alen,
                  const char **params);

struct srv_mail_params {
    uint64_t size;                   /* 0 when not given */
    int body_8bit;
};
/* SIZE=n and BODY=7BIT|8BITMIME; -1 with a reason for anything else. */
int srv_mail_params(const char *params, struct srv_mail_params *p, const char **why);

/* DATA receiver: dot-unstuffs and finds the terminating "." line. The stored
 * message keeps its line ends as received, so it is byte-exact. */
struct srv_data {
    int state;                       /* internal */
    int done;                        /* the "." line was consumed */
    int overflow;                    /* more than max bytes: body dropped, still consuming */
    uint64_t max;                    /* 0 = no limit */
    uint64_t total;                  /* unstuffed bytes seen, kept or not */
};
void srv_data_init(struct srv_data *d, uint64_t max);
/* Consumes input up to and including the terminator; appends the message to out.
 * Returns how many bytes of in it used. */
size_t srv_data_feed(struct srv_data *d, const char *in, size_t n, struct buf *out);

/* Appends msg as POP3 sends it: lines end in CRLF, a leading "." doubled, then the
 * ".\r\n" line. body_lines < 0: whole message; else TOP: headers, the blank line
 * and that many body lines. */
void srv_pop3_stuff(struct buf *out, const char *msg, size_t len, long body_lines);

/* Decodes base64 (padding optional, no whitespace); -1 on bad input. */
int srv_b64_decode(const char *in, size_t n, char *out, size_t cap, size_t *outlen);
/* Encodes into out (NUL-terminated); cap must be >= 4 * ceil(n / 3) + 1. */
void srv_b64_encode(const char *in, size_t n, char *out);

/* AUTH PLAIN's "authzid\0authcid\0passwd": 0 and pointers into buf, or -1. */
int srv_sasl_plain(const char *buf, size_t n, const char **user, size_t *ulen,
                   const char **pass, size_t *plen);

/* A fault's text with C escapes (\r \n \t \0 \\ \xNN) made into the bytes they
 * name, so a hostile reply can hold any byte; at most cap bytes. Returns the length. */
size_t srv_unescape(const char *in, char *out, size_t cap);

/* Rewrites the value of msg's X-Mailsoak-Id header, in its header block, to its
 * first 9 characters (the run id and '-') followed by seq: a forged id. Nothing
 * changes when there is no such header. */
void srv_forge_id(struct buf *msg, const char *seq);

#endif
