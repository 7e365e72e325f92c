/* imap_proto: the pure parts of the server's IMAP (imap_proto.c): reading a command's
 * arguments (atoms, quoted strings, literals already gathered into the command),
 * sequence sets, FETCH items, flags and SEARCH keys (what FETCH writes is
 * imap_mime.h's), free of sockets so unit tests and the fuzzer can drive them. Every bound is the protocol's or a
 * named constant here. */
#ifndef MS_SERVER_IMAP_PROTO_H
#define MS_SERVER_IMAP_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "lib/conn.h"

#define IMAP_SET_MAX 256             /* ranges in one sequence set */
#define IMAP_ATT_MAX 16              /* items in one FETCH */
#define IMAP_FIELDS_MAX 512          /* bytes of HEADER.FIELDS names */

/* A command as gathered: its lines with CRLF and each literal's bytes after its
 * "{n}" or "{n+}", so a literal is read where it stands. */
struct imap_cur {
    const char *p;
    size_t n, i;
};

/* Skips one space; -1 when there is none. */
int imap_sp(struct imap_cur *c);
/* 1 at the end of the command (or only spaces left). */
int imap_at_end(const struct imap_cur *c);
/* An atom (anything up to a space, parenthesis or the end; brackets allowed, as
 * in BODY[HEADER]): *s points into the command. -1 when empty. */
int imap_atom(struct imap_cur *c, const char **s, size_t *len);
/* An astring (atom, quoted string or literal) copied into out, NUL-terminated;
 * -1 on bad syntax or more than cap - 1 bytes. */
int imap_astring(struct imap_cur *c, char *out, size_t cap, size_t *len);

struct imap_set {
    size_t n;
    struct { uint32_t lo, hi; } r[IMAP_SET_MAX];   /* hi = UINT32_MAX for '*' */
};
/* "1:3,7,9:*"; -1 on bad syntax or too many ranges. */
int imap_set_parse(const char *s, size_t len, struct imap_set *set);
/* Whether v is in the set; star is what '*' means (the largest number in use). */
int imap_set_has(const struct imap_set *set, uint32_t v, uint32_t star);

enum imap_fa {
    FA_UID = 1, FA_FLAGS = 2, FA_SIZE = 4, FA_DATE = 8, FA_ENVELOPE = 16, FA_BODYSTRUCTURE = 32,
    FA_BODY = 64, FA_SECTION = 128,
};
enum imap_sec { SEC_ALL, SEC_HEADER, SEC_TEXT, SEC_FIELDS, SEC_FIELDS_NOT };

/* One BODY[...]/BODY.PEEK[...]/RFC822* item. */
struct imap_att {
    enum imap_sec sec;
    int peek;                        /* leaves \Seen alone */
    int partial;
    uint64_t off, len;               /* <off.len> */
    char label[IMAP_FIELDS_MAX + 32];   /* as the response names it: BODY[HEADER.FIELDS (A B)] */
    char fields[IMAP_FIELDS_MAX];    /* the field names, space-separated */
};
struct imap_fetch {
    unsigned what;                   /* enum imap_fa bits */
    size_t nsec;
    struct imap_att sec[IMAP_ATT_MAX];
};
/* The items of FETCH (one, or a parenthesized list, or ALL/FAST/FULL); -1 with a
 * reason. UID is added by the caller for UID FETCH. */
int imap_fetch_parse(struct imap_cur *c, struct imap_fetch *f, const char **why);
/* Whether any item needs the message's bytes (not only UID, FLAGS, size, date). */
int imap_fetch_needs_body(const struct imap_fetch *f);
/* Whether any item not PEEK sets \Seen. */
int imap_fetch_sets_seen(const struct imap_fetch *f);

enum imap_flag { IF_SEEN = 1, IF_ANSWERED = 2, IF_FLAGGED = 4, IF_DELETED = 8, IF_DRAFT = 16 };
/* A flag list "(\Seen \Deleted)" or a single flag: the system flags named (keywords
 * are accepted and ignored); -1 on bad syntax. */
int imap_flags_parse(struct imap_cur *c, unsigned *flags);
/* "(\Seen \Deleted)" */
void imap_flags_write(struct buf *out, unsigned flags);

/* SEARCH keys, all of which must match: ALL, SEEN, UNSEEN, DELETED, UNDELETED,
 * ANSWERED, UNANSWERED, FLAGGED, UNFLAGGED, UID set, a sequence set, NOT key. */
#define IMAP_SEARCH_MAX 16
struct imap_search {
    size_t n;
    struct {
        int kind, not;
        unsigned flag;
        struct imap_set *set;        /* UID or sequence set (owned) */
    } k[IMAP_SEARCH_MAX];
};
enum { SK_FLAG_SET = 1, SK_FLAG_CLEAR, SK_UID, SK_SEQ };
int imap_search_parse(struct imap_cur *c, struct imap_search *s, const char **why);
int imap_search_match(const struct imap_search *s, uint32_t seq, uint32_t uid, unsigned flags,
                      uint32_t maxseq, uint32_t maxuid);
void imap_search_free(struct imap_search *s);

#endif
