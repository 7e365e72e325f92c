/* conn: a buffered, non-blocking stream connection driven by a loop. Protocol code
 * reads lines and writes bytes; it never touches the descriptor and never asks
 * whether the transport is plain TCP or TLS. Shared by client and server. */
#ifndef MS_CONN_H
#define MS_CONN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "lib/loop.h"

struct conn;

/* Read/write return bytes moved, 0 on orderly EOF (read only), or -1 with errno;
 * EAGAIN means "call again when the descriptor is ready for c->want_events" (a TLS
 * read may wait for EPOLLOUT and a write for EPOLLIN). errno EPROTO means a
 * transport protocol failure (c->errmsg set); other errnos are the socket's. */
struct transport {
    const char *name;
    ssize_t (*read)(struct conn *c, void *buf, size_t n);
    ssize_t (*write)(struct conn *c, const void *buf, size_t n);
    /* 1 done, 0 in progress (c->want_events set), -1 failed (c->errmsg set, and
     * errno EPROTO, 0 when the peer closed, or the socket's errno). */
    int (*handshake)(struct conn *c);
    void (*close)(struct conn *c);
    /* Input the transport already took off the socket (a TLS record's rest):
     * epoll cannot report it, so conn reads it at once. NULL = never any. */
    size_t (*pending)(const struct conn *c);
};
extern const struct transport transport_plain;

enum conn_event {
    CONN_UP,        /* connected (and, for implicit TLS, handshake done) */
    CONN_TLS_UP,    /* a conn_starttls() upgrade finished */
    CONN_DATA,      /* new input: call conn_line()/conn_peek() until they say "more" */
    CONN_TIMEOUT,   /* the deadline passed; the connection is still open */
    CONN_CLOSED,    /* EOF or error; already closed. c->err says why (0 = EOF) */
};

/* Why a connection failed, in the taxonomy's words. */
enum conn_err {
    CE_NONE = 0, CE_EOF, CE_REFUSED, CE_RESET, CE_CONNECT_TIMEOUT, CE_UNREACHABLE,
    CE_TLS, CE_IO, CE_OVERLONG,
};

typedef void (*conn_cb)(struct conn *c, enum conn_event ev, void *ud);

struct buf {
    char *p;
    size_t off, len, cap;            /* data is p[off .. len) */
};

struct conn {
    struct io_handler io;
    struct timer timer;
    struct loop *loop;
    const struct transport *tr;
    void *tls;                       /* transport state, NULL for plain */
    conn_cb cb;
    void *ud;
    struct buf in, out;
    size_t max_line;                 /* longest acceptable input line */
    size_t in_min;                   /* what a read makes room for (4 KiB; less for idle sessions) */
    uint32_t want_events;            /* what a blocked transport op waits for */
    uint32_t rd_wait, wr_wait;       /* what the blocked read / write waits for, 0 = not blocked */
    int connecting;                  /* TCP connect or TLS handshake in progress */
    int handshaking;
    enum conn_err err;
    int sys_errno;
    char errmsg[128];
    uint64_t bytes_in, bytes_out;
    uint64_t last_in;                /* loop time of the last bytes read (0 = none): a slow peer is not a silent one */
    uint64_t deadline;               /* monotonic ns, 0 = none; the timer may run early */
    /* From the loop, when the socket took all the output a flush had left: a body
     * written a piece at a time is given its next piece (NULL = none; cleared by
     * conn_close). */
    void (*on_drain)(struct conn *c, void *ud);
};

void conn_init(struct conn *c, struct loop *l, conn_cb cb, void *ud);
/* Starts a non-blocking connect; CONN_UP or CONN_CLOSED follows. bind_addr may be NULL. */
int conn_connect(struct conn *c, const struct sockaddr *sa, socklen_t salen,
                 const struct sockaddr *bind_addr, socklen_t bindlen);
/* Adopts an accepted descriptor (server side). */
int conn_adopt(struct conn *c, int fd);
/* Adopts a descriptor connected elsewhere (a socketpair's end, a test's scripted
 * peer) as if conn_connect had made it: CONN_UP follows from the loop. */
int conn_connect_fd(struct conn *c, int fd);
/* Switches to the given transport and runs its handshake (STARTTLS/STLS or implicit
 * TLS); unread input is discarded first, so nothing injected in plaintext survives.
 * The handshake runs from the loop: CONN_TLS_UP or CONN_CLOSED follows, never from
 * inside this call. */
int conn_upgrade(struct conn *c, const struct transport *tr, void *tls_state);
void conn_close(struct conn *c);
static inline int conn_is_open(const struct conn *c) { return c->io.fd >= 0; }

/* 1: *line/len hold the next line without its CRLF (LF alone accepted);
 * 0: need more input; -1: a line longer than max_line (protocol violation). */
int conn_line(struct conn *c, char **line, size_t *len);
/* The same, with the -1 said in why: "line longer than MAX_LINE bytes". */
int conn_line_why(struct conn *c, char **line, size_t *len, char *why, size_t whylen);
/* Raw access for bulk data: what is buffered, and where it starts: never NULL,
 * even with the buffer given back (conn_trim), as NULL + 0 and memchr(NULL, ..., 0)
 * are undefined. */
static inline size_t conn_avail(const struct conn *c) { return c->in.len - c->in.off; }
static inline const char *conn_peek(const struct conn *c) { return c->in.p ? c->in.p + c->in.off : ""; }
/* Gives back the buffers while they hold nothing: a session that waits long
 * (IMAP IDLE) keeps no more than its structure; the next read or write takes
 * them again. */
void conn_trim(struct conn *c);
/* Takes n bytes of what conn_peek() showed (n <= conn_avail()). */
static inline void conn_take(struct conn *c, size_t n) { c->in.off += n; }

void conn_write(struct conn *c, const void *p, size_t n);
void conn_puts(struct conn *c, const char *s);
void conn_printf(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reserves n bytes at the end of the output buffer for the caller to fill, then
 * conn_commit(c, used). Lets message generation write in place. */
char *conn_reserve(struct conn *c, size_t n);
void conn_commit(struct conn *c, size_t n);
/* Writes what it can now; the rest goes out when the socket is writable. */
void conn_flush(struct conn *c);
static inline size_t conn_pending_out(const struct conn *c) { return c->out.len - c->out.off; }

/* A deadline for the current phase; 0 cancels. CONN_TIMEOUT fires once. */
void conn_deadline(struct conn *c, uint64_t after_ns);

const char *conn_err_name(enum conn_err e);

/* buf helpers shared with protocol code */
void buf_reserve(struct buf *b, size_t n);
void buf_append(struct buf *b, const void *p, size_t n);
void buf_free(struct buf *b);

#endif
