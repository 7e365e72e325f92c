/* corpus: real mail to replay (smtp.content = corpus): the messages of an mbox
 * file, a maildir (cur/ and new/) or a folder of .eml files, indexed once at setup
 * (file, offset, length) and read back one at a time when sent, never all held.
 * Each is made sendable as it is read: its headers kept but those a delivery adds
 * or that name the original recipients (To, Cc, Bcc, Message-ID, Return-Path,
 * Delivered-To, Received, X-Mailsoak-*, mbox's Status and Content-Length), its
 * body as CRLF lines of at most 998 bytes (RFC 5322 2.1.1) without NUL or bare CR,
 * an mboxrd file's ">From " lines unescaped. The sender adds our To, Message-ID
 * and X-Mailsoak-* headers; the digest is of the body as sent. The bytes are
 * untrusted: fuzz/fuzz_corpus.c. */
#ifndef MS_CORPUS_H
#define MS_CORPUS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CORPUS_MAX_MSG (16u << 20)     /* bigger messages are skipped (counted) */
#define CORPUS_MAX_HDR (64u << 10)     /* kept headers beyond this are dropped */

struct corpus_msg {
    uint32_t file;
    uint32_t len;
    uint64_t off;
};

struct corpus {
    char **files;
    int *fds;
    size_t nfiles;
    int mbox;                          /* the messages come from an mbox file (mboxrd escapes) */
    struct corpus_msg *msgs;
    size_t n, cap;
    uint64_t skipped;                  /* empty, or over CORPUS_MAX_MSG */
};

/* A growable buffer of bytes. */
struct corpus_buf {
    char *p;
    size_t len, cap;
};

/* Indexes path (an mbox file, a maildir, a folder of message files). 0, or -1 with
 * "path: reason" in err. */
int corpus_open(struct corpus *c, const char *path, char *err, size_t errlen);
void corpus_free(struct corpus *c);
/* The messages of an mbox in buf, each after its "From " line: fn(off, len). */
void corpus_mbox_split(const char *buf, size_t len, void (*fn)(void *arg, size_t off, size_t len), void *arg);
/* Message i's raw bytes into raw. 0, or -1 (the file could not be read). */
int corpus_read(const struct corpus *c, size_t i, struct corpus_buf *raw);
/* raw made sendable: the kept header lines (each ending CRLF) into hdr, the body
 * into body (CRLF lines; at least one). mboxrd: unescape ">From " lines. */
void corpus_prepare(const char *raw, size_t len, int mboxrd, struct corpus_buf *hdr, struct corpus_buf *body);
void corpus_buf_free(struct corpus_buf *b);

#endif
