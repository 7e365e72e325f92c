/* queue_walk: what the queue format readers (probe/queue_*.c) share: a walk over a
 * queue (counting names only, or reading every message), the message being read, and
 * bounded reads of files the server under test wrote. Internal to probe/queue. */
#ifndef MS_PROBE_QUEUE_WALK_H
#define MS_PROBE_QUEUE_WALK_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "probe/queue.h"

enum {
    ID_MAX = 128,                   /* longer X-Mailsoak-Id values are not ours */
    ADDR_MAX = 512,                 /* longer recipient addresses are cut */
    RCPTS_LISTED = 1024,            /* recipients listed per message; beyond, unknown */
    HEADER_BYTES = 256 * 1024,      /* of an RFC 5322 message, what is read for headers */
    EXIM_H_MAX = 8 << 20,           /* a larger -H file is not read */
    ENVELOPE_MAX = 64 * 1024,       /* an OpenSMTPD envelope */
};

struct walk {
    int deep;
    queue_msg_fn fn;
    void *ctx;
    struct queue_totals *t;
    uint64_t count;
    int saw_exim, saw_sendmail;     /* auto, while undecided: what the names suggest */
    /* the message being read */
    char id[ID_MAX + 1];
    size_t idlen;
    int have_id, rcpts_known, too_many;
    char *addrs;                    /* NUL-separated */
    size_t alen, acap;
    size_t *aoff;
    size_t naddr, aoffcap;
    const char **rcpts;
    size_t rcap;
    char *buf;                      /* file contents */
    size_t bcap;
    /* Postfix, reading: the queue ids read or vanished in this scan (qmgr moves a
     * message between queues while they are listed) */
    struct pf_ids *pf_seen, *pf_gone, *pf_vanished;
};

/* The message being read: begin, what was found, end (counted in the totals, given
 * to the caller's function). */
void qw_begin(struct walk *w);
void qw_id(struct walk *w, const char *v, size_t n);
void qw_rcpt(struct walk *w, const char *a, size_t n);
void qw_unrcpt(struct walk *w, const char *a);
void qw_end(struct walk *w, int readable);

/* Up to max bytes of a file into w->buf (NUL-terminated); -1 if it cannot be read
 * (errno ENOENT: it went away meanwhile). too_big: the file holds more than max. */
ssize_t qw_read_file(struct walk *w, int dfd, const char *name, size_t max, int *too_big);
/* Whether line (n bytes) is the header "X-Mailsoak-Id:"; v is its value. */
int qw_id_header(const char *line, size_t n, const char **v, size_t *vn);
/* The header block of an RFC 5322 message (LF or CRLF lines): its X-Mailsoak-Id.
 * 0 when the text does not look like a message at all (compressed, encrypted). */
int qw_rfc822_id(struct walk *w, const char *p, size_t n);
/* The next line of [*p, end): returns its start, sets *n to its length without the
 * newline and moves *p past it; NULL at the end. */
const char *qw_next_line(const char **p, const char *end, size_t *n);
DIR *qw_open_path(const char *path);
DIR *qw_open_sub(int dfd, const char *name);
int qw_all_alnum(const char *s, size_t n);
int qw_all_hex(const char *s, size_t n);

#endif
