/* conn: buffered non-blocking connections. Failures are never reported from inside
 * a call the protocol code made (that would re-enter it): they are recorded and
 * delivered from the loop through the connection's own timer. */
#include "lib/conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/alloc.h"

#define IN_MIN 4096

static ssize_t plain_read(struct conn *c, void *p, size_t n)
{
    ssize_t r = read(c->io.fd, p, n);
    if (r < 0 && errno == EAGAIN)
        c->want_events = EPOLLIN;
    return r;
}

static ssize_t plain_write(struct conn *c, const void *p, size_t n)
{
    ssize_t r = send(c->io.fd, p, n, MSG_NOSIGNAL);
    if (r < 0 && errno == EAGAIN)
        c->want_events = EPOLLOUT;
    return r;
}

const struct transport transport_plain = {
    .name = "tcp", .read = plain_read, .write = plain_write,
};

const char *conn_err_name(enum conn_err e)
{
    static const char *const names[] = {
        [CE_NONE] = "none", [CE_EOF] = "unexpected_close", [CE_REFUSED] = "connect_refused",
        [CE_RESET] = "connection_reset", [CE_CONNECT_TIMEOUT] = "connect_timeout",
        [CE_UNREACHABLE] = "connect_unreachable", [CE_TLS] = "tls", [CE_IO] = "io_error",
        [CE_OVERLONG] = "protocol_overlong_line",
    };
    return (unsigned)e < sizeof names / sizeof names[0] ? names[e] : "unknown";
}

void buf_reserve(struct buf *b, size_t n)
{
    if (b->off && b->off == b->len)
        b->off = b->len = 0;
    if (b->len + n <= b->cap)
        return;
    if (b->off) {                    /* slide before growing */
        memmove(b->p, b->p + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
        if (b->len + n <= b->cap)
            return;
    }
    size_t cap = b->cap ? b->cap : 512;
    while (cap < b->len + n)
        cap *= 2;
    char *p = xrealloc(b->p, cap);
    b->p = p;
    b->cap = cap;
}

void buf_append(struct buf *b, const void *p, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void buf_free(struct buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static void conn_io(struct loop *l, struct io_handler *h, uint32_t ev);
static void conn_timer(struct loop *l, struct timer *t);

void conn_init(struct conn *c, struct loop *l, conn_cb cb, void *ud)
{
    memset(c, 0, sizeof *c);
    c->io.fd = -1;
    c->io.fn = conn_io;
    c->timer.fn = conn_timer;
    c->loop = l;
    c->cb = cb;
    c->ud = ud;
    c->tr = &transport_plain;
    c->max_line = 4096;
    c->in_min = IN_MIN;
}

void conn_trim(struct conn *c)
{
    if (c->in.cap && c->in.off == c->in.len)
        buf_free(&c->in);
    if (c->out.cap && c->out.off == c->out.len)
        buf_free(&c->out);
}

static enum conn_err classify_errno(int e)
{
    switch (e) {
    case ECONNREFUSED: return CE_REFUSED;
    case ECONNRESET: case EPIPE: return CE_RESET;
    case ETIMEDOUT: return CE_CONNECT_TIMEOUT;
    case ENETUNREACH: case EHOSTUNREACH: return CE_UNREACHABLE;
    case EPROTO: return CE_TLS;      /* only a transport with its own protocol says this */
    default: return CE_IO;
    }
}

static void shut(struct conn *c)
{
    timer_cancel(c->loop, &c->timer);
    c->deadline = 0;
    if (c->io.fd < 0)
        return;
    if (c->tr->close)
        c->tr->close(c);
    c->tr = &transport_plain;
    loop_del(c->loop, &c->io);
    close(c->io.fd);
    c->io.fd = -1;
    c->connecting = c->handshaking = 0;
    c->rd_wait = c->wr_wait = 0;
    c->in.off = c->in.len = 0;
    c->out.off = c->out.len = 0;
    /* Idle sessions hold no buffers: 10k connections must fit in a few KiB each. */
    if (c->in.cap > 4 * IN_MIN) buf_free(&c->in);
    if (c->out.cap > 64 * 1024) buf_free(&c->out);
}

void conn_close(struct conn *c)
{
    c->on_drain = NULL;
    c->err = CE_NONE;
    shut(c);
}

/* Records a failure to be reported from the loop, not from the caller's stack. */
static void fail_later(struct conn *c, enum conn_err e, int sys)
{
    if (c->err == CE_NONE) {
        c->err = e;
        c->sys_errno = sys;
        if (sys && !c->errmsg[0])
            snprintf(c->errmsg, sizeof c->errmsg, "%s", strerror(sys));
    }
    loop_mod(c->loop, &c->io, 0);
    timer_arm(c->loop, &c->timer, 0);
}

static void fail_now(struct conn *c, enum conn_err e, int sys)
{
    if (c->err == CE_NONE) {
        c->err = e;
        c->sys_errno = sys;
        if (sys && !c->errmsg[0])
            snprintf(c->errmsg, sizeof c->errmsg, "%s", strerror(sys));
    }
    shut(c);
    c->cb(c, CONN_CLOSED, c->ud);
}

/* What a read or a write waits for: plain TCP always EPOLLIN / EPOLLOUT, but a TLS
 * read may have to write first (key update) and a write to read (renegotiation). */
static uint32_t rd_events(const struct conn *c) { return c->rd_wait ? c->rd_wait : EPOLLIN; }
static uint32_t wr_events(const struct conn *c) { return c->wr_wait ? c->wr_wait : EPOLLOUT; }

static void update_interest(struct conn *c)
{
    uint32_t ev = rd_events(c);
    if (c->connecting)
        ev = EPOLLOUT;
    else if (conn_pending_out(c))
        ev |= wr_events(c);
    loop_mod(c->loop, &c->io, ev);
}

static int setup_fd(struct conn *c, int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->io.fd = fd;
    c->err = CE_NONE;
    c->sys_errno = 0;
    c->errmsg[0] = 0;
    c->rd_wait = c->wr_wait = 0;
    c->in.off = c->in.len = 0;
    c->out.off = c->out.len = 0;
    return loop_add(c->loop, &c->io, c->connecting ? EPOLLOUT : EPOLLIN);
}

int conn_connect(struct conn *c, const struct sockaddr *sa, socklen_t salen,
                 const struct sockaddr *bind_addr, socklen_t bindlen)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        c->err = CE_IO;
        c->sys_errno = errno;
        snprintf(c->errmsg, sizeof c->errmsg, "socket: %s", strerror(errno));
        return -1;
    }
    c->connecting = 1;
    c->handshaking = 0;
    if (setup_fd(c, fd) < 0) {
        int e = errno;
        close(fd);
        c->io.fd = -1;
        c->err = CE_IO;
        c->sys_errno = e;
        return -1;
    }
    if (bind_addr) {
        int one = 1;
        setsockopt(fd, SOL_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        if (bind(fd, bind_addr, bindlen) < 0) {
            fail_later(c, CE_IO, errno);
            return 0;
        }
    }
    if (connect(fd, sa, salen) < 0 && errno != EINPROGRESS)
        fail_later(c, classify_errno(errno), errno);
    /* Even an immediate success is reported from the loop (EPOLLOUT fires at once). */
    return 0;
}

int conn_adopt(struct conn *c, int fd)
{
    c->connecting = 0;
    c->handshaking = 0;
    return setup_fd(c, fd);
}

int conn_connect_fd(struct conn *c, int fd)
{
    c->connecting = 1;               /* EPOLLOUT reports the "connect" at once */
    c->handshaking = 0;
    return setup_fd(c, fd);
}

static void handshake_step(struct conn *c)
{
    int r = c->tr->handshake(c);
    if (r < 0) {
        int e = errno;               /* EPROTO: TLS said no; 0: the peer closed; else the socket's */
        fail_now(c, e ? classify_errno(e) : CE_EOF, e == EPROTO ? 0 : e);
        return;
    }
    if (r == 0) {
        loop_mod(c->loop, &c->io, c->want_events ? c->want_events : EPOLLIN);
        return;
    }
    int upgrade = c->handshaking == 2;
    c->handshaking = 0;
    update_interest(c);
    c->cb(c, upgrade ? CONN_TLS_UP : CONN_UP, c->ud);
}

int conn_upgrade(struct conn *c, const struct transport *tr, void *tls_state)
{
    if (c->io.fd < 0)
        return -1;
    c->in.off = c->in.len = 0;       /* CVE-2021-22947: nothing read in plaintext survives */
    c->tr = tr;
    c->tls = tls_state;
    c->handshaking = 2;
    c->rd_wait = c->wr_wait = 0;
    /* The first step runs from the loop (a writable socket reports at once), so a
     * failure cannot re-enter the protocol code that asked for the upgrade. */
    if (c->err == CE_NONE)
        loop_mod(c->loop, &c->io, EPOLLOUT);
    return 0;
}

static void do_read(struct conn *c)
{
    if (c->in.cap - c->in.len < c->in_min / 2 || !c->in.cap) {
        if (c->in.off) {
            memmove(c->in.p, c->in.p + c->in.off, c->in.len - c->in.off);
            c->in.len -= c->in.off;
            c->in.off = 0;
        }
        if (c->in.cap - c->in.len < c->in_min / 2) {
            if (c->in.len > c->max_line + 2) {
                /* conn_line would have found a line by now: nothing fits */
                snprintf(c->errmsg, sizeof c->errmsg, "line longer than %zu bytes", c->max_line);
                fail_now(c, CE_OVERLONG, 0);
                return;
            }
            buf_reserve(&c->in, c->in_min);
        }
    }
    ssize_t r = c->tr->read(c, c->in.p + c->in.len, c->in.cap - c->in.len);
    if (r > 0) {
        c->in.len += (size_t)r;
        c->bytes_in += (uint64_t)r;
        c->last_in = loop_now(c->loop);
        size_t more;
        while (c->tr->pending && (more = c->tr->pending(c)) > 0) {
            buf_reserve(&c->in, more);
            r = c->tr->read(c, c->in.p + c->in.len, more);
            if (r <= 0)
                break;               /* cannot happen with data pending; the next read reports it */
            c->in.len += (size_t)r;
            c->bytes_in += (uint64_t)r;
        }
        if (c->rd_wait & EPOLLOUT) { /* a read that had to write first is done */
            c->rd_wait = 0;
            update_interest(c);
        }
        c->rd_wait = 0;
        c->cb(c, CONN_DATA, c->ud);
        return;
    }
    if (r == 0) {
        fail_now(c, CE_EOF, 0);
        return;
    }
    if (errno == EAGAIN || errno == EINTR) {
        if (errno == EAGAIN)
            c->rd_wait = c->want_events ? c->want_events : EPOLLIN;
        update_interest(c);
        return;
    }
    fail_now(c, classify_errno(errno), errno);
}

void conn_flush(struct conn *c)
{
    if (c->io.fd < 0 || c->connecting || c->handshaking || c->err != CE_NONE)
        return;
    while (conn_pending_out(c)) {
        ssize_t w = c->tr->write(c, c->out.p + c->out.off, conn_pending_out(c));
        if (w > 0) {
            c->out.off += (size_t)w;
            c->bytes_out += (uint64_t)w;
            c->wr_wait = 0;
            continue;
        }
        if (w < 0 && errno == EAGAIN) {
            c->wr_wait = c->want_events ? c->want_events : EPOLLOUT;
            break;
        }
        if (w < 0 && errno == EINTR)
            break;
        fail_later(c, classify_errno(errno), errno);
        return;
    }
    if (!conn_pending_out(c)) {
        c->out.off = c->out.len = 0;
        c->wr_wait = 0;
    }
    update_interest(c);
}

static void conn_io(struct loop *l, struct io_handler *h, uint32_t ev)
{
    struct conn *c = (struct conn *)h;
    (void)l;
    if (c->io.fd < 0 || c->err != CE_NONE)
        return;                      /* closed earlier in this batch, or failing */
    if (c->connecting) {
        /* A failed connect sets sk_err, which epoll reports as EPOLLERR: without it
         * there is no error to fetch, and a syscall per connection is saved. */
        int e = 0;
        socklen_t len = sizeof e;
        if (ev & (EPOLLERR | EPOLLHUP))
            getsockopt(c->io.fd, SOL_SOCKET, SO_ERROR, &e, &len);
        if (e) {
            fail_now(c, classify_errno(e), e);
            return;
        }
        c->connecting = 0;
        if (c->tr->handshake) {
            c->handshaking = 1;
            handshake_step(c);
            return;
        }
        update_interest(c);
        c->cb(c, CONN_UP, c->ud);
        return;
    }
    if (c->handshaking) {
        handshake_step(c);
        return;
    }
    if (ev & wr_events(c) && conn_pending_out(c)) {
        int fd = c->io.fd;
        conn_flush(c);
        if (c->io.fd != fd || c->err != CE_NONE)
            return;
        if (c->on_drain && !conn_pending_out(c)) {
            c->on_drain(c, c->ud);
            if (c->io.fd != fd || c->err != CE_NONE)
                return;
        }
    }
    if (ev & (rd_events(c) | EPOLLERR | EPOLLHUP))
        do_read(c);
}

static void conn_timer(struct loop *l, struct timer *t)
{
    struct conn *c = (struct conn *)((char *)t - offsetof(struct conn, timer));
    (void)l;
    if (c->err != CE_NONE) {
        enum conn_err e = c->err;
        int sys = c->sys_errno;
        c->err = CE_NONE;            /* let fail_now record it afresh */
        fail_now(c, e, sys);
        return;
    }
    if (c->io.fd < 0 || !c->deadline)
        return;
    if (loop_now(c->loop) < c->deadline) {
        timer_arm(c->loop, &c->timer, c->deadline);   /* moved later since armed */
        return;
    }
    c->deadline = 0;
    c->cb(c, CONN_TIMEOUT, c->ud);
}

void conn_deadline(struct conn *c, uint64_t after)
{
    if (c->err != CE_NONE)
        return;                      /* the timer carries a pending failure */
    if (!after) {
        c->deadline = 0;
        timer_cancel(c->loop, &c->timer);
        return;
    }
    /* Every command moves the deadline later; re-sorting the timer heap each time
     * would cost more than the rare early wake-up that re-arms it. */
    c->deadline = loop_now(c->loop) + after;
    if (!timer_armed(&c->timer) || c->timer.when > c->deadline)
        timer_arm(c->loop, &c->timer, c->deadline);
}

int conn_line(struct conn *c, char **line, size_t *len)
{
    char *start = c->in.p + c->in.off;
    size_t n = c->in.len - c->in.off;
    char *nl = n ? memchr(start, '\n', n) : NULL;
    if (!nl) {
        if (n > c->max_line + 1)
            return -1;
        return 0;
    }
    size_t l = (size_t)(nl - start);
    c->in.off += l + 1;
    if (l && start[l - 1] == '\r')
        l--;
    if (l > c->max_line)
        return -1;
    start[l] = 0;
    *line = start;
    *len = l;
    return 1;
}

int conn_line_why(struct conn *c, char **line, size_t *len, char *why, size_t whylen)
{
    int r = conn_line(c, line, len);
    if (r < 0)
        snprintf(why, whylen, "line longer than %zu bytes", c->max_line);
    return r;
}

void conn_write(struct conn *c, const void *p, size_t n)
{
    buf_append(&c->out, p, n);
}

void conn_puts(struct conn *c, const char *s)
{
    conn_write(c, s, strlen(s));
}

void conn_printf(struct conn *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    buf_reserve(&c->out, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(c->out.p + c->out.len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    c->out.len += (size_t)n;
}

char *conn_reserve(struct conn *c, size_t n)
{
    buf_reserve(&c->out, n);
    return c->out.p + c->out.len;
}

void conn_commit(struct conn *c, size_t n)
{
    c->out.len += n;
}
