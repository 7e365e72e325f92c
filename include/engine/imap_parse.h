/* imap_parse: the IMAP client's response reader (RFC 3501 section 7), pure and
 * resumable: fed the connection's buffered input, it hands out one piece at a
 * time (a response's text up to its end or up to a literal, a literal's lines,
 * a literal's end) and says how many bytes it took, so a response split across
 * reads is taken up where it stopped. Every piece is bounded by what the reader
 * was told: a line, a literal, the literals of one response. Also the small
 * readers of a response's words the client needs (tag, status, numbers of FETCH
 * items, capabilities) and the quoting of its own strings. Fuzzed by
 * fuzz/fuzz_imap.c. */
#ifndef MS_ENGINE_IMAP_PARSE_H
#define MS_ENGINE_IMAP_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* A response may hold this many literals at most (a FETCH's body and an
 * ENVELOPE's strings hold a handful). */
#define IMAP_MAX_LITERALS 64

struct imap_rd {
    size_t max_line;                 /* longest text between a line's start, a literal and its end */
    uint64_t max_literal;            /* largest literal taken */
    /* state */
    int mid;                         /* inside a response: text after a literal goes on with it */
    int in_lit;                      /* reading a literal's bytes */
    uint64_t lit_left;               /* of the current literal, bytes still to come */
    unsigned nlit;                   /* literals of the current response */
};

enum imap_piece_kind {
    IMAP_TEXT,                       /* text of a response, without CRLF or the {n} that ends it */
    IMAP_LITLINE,                    /* one line of a literal, without its CRLF */
    IMAP_LITEND,                     /* the literal ended (after its last line, or at once for {0}) */
};

struct imap_piece {
    enum imap_piece_kind kind;
    const char *p;
    size_t len;
    int first;                       /* TEXT: the response begins here */
    int last;                        /* TEXT: the response ends here (no literal follows) */
    uint64_t lit;                    /* TEXT, not last: the size of the literal that follows */
};

void imap_rd_init(struct imap_rd *rd, size_t max_line, uint64_t max_literal);
/* The next piece of the n bytes at p: 1 with *pc and *used (bytes taken, at least
 * 1 but for a {0} literal's end); 0 when more input is needed (nothing taken);
 * -1 on input no server may send (why says what, printable). */
int imap_next(struct imap_rd *rd, const char *p, size_t n, size_t *used, struct imap_piece *pc, char *why,
              size_t whylen);

/* A response's first word: IMAP_UNTAGGED (a star), IMAP_CONTINUE (a plus), or
 * IMAP_TAGGED with the tag in *tag and *taglen; *rest the text after it. -1 when the
 * line has no such word. */
enum imap_kind { IMAP_UNTAGGED, IMAP_CONTINUE, IMAP_TAGGED };
int imap_split(const char *p, size_t n, const char **tag, size_t *taglen, const char **rest);

/* A status word at text (OK, NO, BAD, BYE, PREAUTH), the text after it in *after;
 * IMAP_ST_NONE when the text starts with none. */
enum imap_status { IMAP_ST_NONE, IMAP_ST_OK, IMAP_ST_NO, IMAP_ST_BAD, IMAP_ST_BYE, IMAP_ST_PREAUTH };
enum imap_status imap_status(const char *p, size_t n, const char **after);

/* "N WORD" (an untagged "3 EXISTS"): 0 with *num and the word in *word, *wl. */
int imap_numbered(const char *p, size_t n, uint64_t *num, const char **word, size_t *wl);

/* The number after item (UID, RFC822.SIZE) in a FETCH's text, outside quoted
 * strings, at a word's start: 0 with *v, -1 when absent, -2 when the item is
 * there and no number of at most 19 digits follows. */
int imap_item_num(const char *p, size_t n, const char *item, uint64_t *v);

/* 1 when the text, without trailing blanks, ends with word (BODY[] before a
 * literal) at a word's start. */
int imap_ends_with(const char *p, size_t n, const char *word);

/* 1 when a capability list (a CAPABILITY response's text or an OK's
 * [CAPABILITY ...] code) holds cap, case-insensitive. */
int imap_has_cap(const char *p, size_t n, const char *cap);
/* 1 when the text holds a capability list: "CAPABILITY ..." or "[CAPABILITY ...]". */
int imap_is_capability(const char *p, size_t n);

/* A NO's or BAD's response code as an error class kind: [AUTHENTICATIONFAILED]
 * auth, [UNAVAILABLE] unavailable, [INUSE] in_use, [LIMIT] limit, [SERVERBUG]
 * serverbug, [NONEXISTENT] nonexistent, [EXPUNGEISSUED] expunged; else no or bad. */
const char *imap_err_kind(enum imap_status st, const char *text, size_t n);

/* s as an IMAP quoted string ("..." with \ and " escaped) into out; -1 when it
 * holds a byte a quoted string cannot (CR, LF, NUL) or out is too small. */
int imap_quote(const char *s, char *out, size_t outlen);

#endif
