/* msg: the messages mailsoak sends and the checks its readers make. A message is
 * headers (ours: X-Mailsoak-Id, -Sent, -Digest) and a body whose SHA-256 is in the
 * digest header: by smtp.content, printable CRLF lines of at most 78 characters
 * (random, the classic), mail as clients write it (mime: a client's header set,
 * text, multipart/alternative text and HTML, or that and a base64 attachment in
 * multipart/mixed), or a message of a corpus (engine/corpus.h) replayed. */
#ifndef MS_MSG_H
#define MS_MSG_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "engine/corpus.h"
#include "lib/rng.h"

#define MSG_DIGEST_LEN 32
#define MSG_RUNID_LEN 8          /* hex characters */

enum msg_content { MSG_RANDOM, MSG_MIME, MSG_CORPUS };

struct msg_gen {
    const char *pool;            /* random printable text, shared read-only */
    size_t poolsize;
    char *scratch;               /* the body before dot-stuffing */
    size_t scratchcap;
    const char *body;            /* the body written: scratch, or a corpus message's */
    int content;                 /* enum msg_content */
    const struct corpus *corpus; /* MSG_CORPUS, shared read-only */
    /* headers of this message besides ours: MIME's, or all a corpus message kept
     * (then ours are only To, Message-ID and X-Mailsoak-*: own_headers = 0) */
    struct corpus_buf hdr, raw, cbody;
    int own_headers;
    EVP_MD *sha256;
    EVP_MD_CTX *mdctx;
    char date[64];               /* RFC 5322 date, refreshed once per second */
    int64_t date_sec;
};

struct msg_params {
    const char *run_id;          /* MSG_RUNID_LEN hex chars */
    uint64_t seq;                /* unique in the run */
    unsigned nrcpt;              /* ledger entries seq .. seq+nrcpt-1, one per recipient */
    const char *from, *to;
    size_t body_size;
    uint64_t sent_unix_ms;       /* for X-Mailsoak-Sent */
    uint64_t body_seed;          /* the body is a function of this alone */
};

/* A pool of printable text (with some lines starting with '.') built from seed. */
char *msg_pool_new(uint64_t seed, size_t size);
int msg_gen_init(struct msg_gen *g, const char *pool, size_t poolsize);
/* What msg_body makes (MSG_RANDOM after init); corpus for MSG_CORPUS. */
void msg_gen_content(struct msg_gen *g, enum msg_content content, const struct corpus *corpus);
void msg_gen_free(struct msg_gen *g);

/* Builds the body and its digest: random, exactly p->body_size bytes (a size of 1
 * becomes 2, since every body ends with CRLF); mime, about that size with its
 * parts' headers; corpus, message body_seed mod the corpus's count, as it is.
 * Returns the body's length. */
size_t msg_body(struct msg_gen *g, const struct msg_params *p, uint8_t digest[MSG_DIGEST_LEN]);
/* Size of the message on the wire at most, for reserving output space. */
size_t msg_wire_max(const struct msg_gen *g, const struct msg_params *p, size_t body_len);
/* Writes headers + dot-stuffed body + ".\r\n" into out (at least msg_wire_max bytes);
 * returns bytes written. Call after msg_body. */
size_t msg_write(struct msg_gen *g, const struct msg_params *p, size_t body_len,
                 const uint8_t digest[MSG_DIGEST_LEN], char *out);

/* The headers alone (ending with the blank line), as msg_write writes them; the
 * same length whatever the digest. out: msg_wire_max(g, p, 0) bytes. */
size_t msg_headers(struct msg_gen *g, const struct msg_params *p, const uint8_t digest[MSG_DIGEST_LEN], char *out);

/* A body made a piece at a time, never held whole (the size ladder's large
 * messages): random text (smtp.content = random), the same bytes msg_body makes
 * for the same params. */
struct msg_stream {
    struct rng r;
    size_t rem;                  /* body bytes still to make */
};
void msg_stream_begin(struct msg_gen *g, struct msg_stream *st, const struct msg_params *p);
/* The next whole lines, dot-stuffed, into out (cap >= 160); 0 once the body is out. */
size_t msg_stream_next(struct msg_gen *g, struct msg_stream *st, char *out, size_t cap);
/* The body's digest, made once without keeping it (the header comes first). */
void msg_stream_digest(struct msg_gen *g, const struct msg_params *p, uint8_t digest[MSG_DIGEST_LEN]);

/* Dot-stuffing of a buffer of CRLF lines into out (capacity >= 2*len). */
size_t msg_dot_stuff(const char *in, size_t len, char *out);

/* Reader side: fed the unstuffed lines of one retrieved message. */
struct msg_check {
    EVP_MD_CTX *md;
    int in_body, have_id, have_digest, bad_header;
    char run_id[MSG_RUNID_LEN + 1];
    uint64_t seq;
    unsigned nrcpt;
    uint8_t digest[MSG_DIGEST_LEN];
    uint64_t body_bytes;
};

enum msg_result {
    MSG_OK,         /* our headers, digest matches */
    MSG_CORRUPT,    /* our headers, digest or headers wrong */
    MSG_FOREIGN,    /* no X-Mailsoak headers at all */
    /* our headers, the digest of an empty body, and a body of one empty line: an
     * mbox store's way to keep an empty body (a known harmless transformation) */
    MSG_EMPTY_AS_LINE,
};

/* The value of an X-Mailsoak-Id header ("RUNID-SEQHEX" or "RUNID-SEQHEX/K", vl bytes,
 * no surrounding blanks): 0 with its parts, -1 if it is not one of ours. */
int msg_parse_id(const char *v, size_t vl, char run_id[MSG_RUNID_LEN + 1], uint64_t *seq, unsigned *nrcpt);

void msg_check_begin(struct msg_check *m, EVP_MD_CTX *md, const EVP_MD *sha256);
/* line without CRLF, already unstuffed (the leading '.' of a stuffed line removed). */
void msg_check_line(struct msg_check *m, const char *line, size_t len);
enum msg_result msg_check_end(struct msg_check *m);

#endif
