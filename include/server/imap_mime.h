/* imap_mime: what the server's FETCH writes for a message (imap_mime.c): strings,
 * ENVELOPE, BODYSTRUCTURE and sections, from the message's bytes alone, so unit
 * tests and the fuzzer can drive them. */
#ifndef MS_SERVER_IMAP_MIME_H
#define MS_SERVER_IMAP_MIME_H

#include <stddef.h>

#include "lib/conn.h"
#include "server/imap_proto.h"

#define IMAP_MIME_DEPTH 8            /* nesting of multiparts BODYSTRUCTURE follows */
#define IMAP_MIME_PARTS 64           /* parts one multipart lists; the rest are left out */

/* An nstring: quoted when it can be, a literal when it holds CR, LF, NUL, a quote
 * or backslash run, or 8-bit bytes. */
void imap_string(struct buf *out, const char *p, size_t n);
/* The message (CRLF line ends, as FETCH serves it) -> what FETCH returns for it. */
void imap_envelope(struct buf *out, const char *msg, size_t len);
void imap_bodystructure(struct buf *out, const char *msg, size_t len);
/* The bytes of a section (before <partial>): appended to out. */
void imap_section(struct buf *out, const char *msg, size_t len, const struct imap_att *a);
/* The message with every line ending in CRLF (what RFC822.SIZE counts). */
void imap_crlf(struct buf *out, const char *msg, size_t len);

#endif
