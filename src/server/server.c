/* server: the reference server's process: listeners, the signal thread that stops it,
 * the list of live sessions, and the session lifecycle both protocols share
 * (idle deadlines, delays, closing after the last reply, freeing when the store
 * has nothing of theirs left). */
#include "server/server.h"
#include "server/imap.h"
#include "server/pop3.h"
#include "server/proto.h"
#include "server/rate.h"
#include "server/smtp.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/hostport.h"
#include "lib/tls.h"

#define STOP_GRACE_S 5               /* a stop taking longer ends the process */
#define LINGER_STEP (10 * NS_PER_MS)
#define LINGER_TRIES 500             /* five seconds for a slow reader to take its reply */

static void sess_unlink(struct srv_sess *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else if (s->srv->sessions == s)
        s->srv->sessions = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
}

int srv_sess_reap(struct srv_sess *s)
{
    if (!s->dead || s->waiting)
        return 0;
    if (s->on_free)
        s->on_free(s);
    buf_free(&s->c.in);
    buf_free(&s->c.out);
    buf_free(&s->drip);
    free(s->delayed);
    sess_unlink(s);
    s->srv->nconns--;
    loop_defer_free(s->srv->loop, s);
    return 1;
}

void srv_sess_drop(struct srv_sess *s)
{
    if (conn_is_open(&s->c))
        conn_close(&s->c);
    timer_cancel(s->srv->loop, &s->spew);
    s->dead = 1;
    /* A delay holds no store request: cancelling it is enough. */
    if (s->tmode == TM_DELAY) {
        s->waiting = 0;
        s->tmode = TM_NONE;
    }
    srv_sess_reap(s);
}

void srv_sess_abort(struct srv_sess *s, int rst)
{
    if (rst && conn_is_open(&s->c)) {
        struct linger lg = { .l_onoff = 1, .l_linger = 0 };
        setsockopt(s->c.io.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    srv_sess_drop(s);
}

void srv_sess_idle(struct srv_sess *s)
{
    if (s->closing || s->dead)
        return;
    s->tmode = TM_IDLE;
    conn_deadline(&s->c, s->proto == SRV_IMAP ? s->srv->cfg->imap_timeout : s->srv->cfg->idle_timeout);
}

/* A fault's text as the bytes it names, then CRLF. */
static void write_text(struct srv_sess *s, const char *text)
{
    char raw[4096];
    conn_write(&s->c, raw, srv_unescape(text, raw, sizeof raw));
    conn_puts(&s->c, "\r\n");
}

static size_t sess_pending(const struct srv_sess *s)
{
    return conn_pending_out(&s->c) + (s->drip.len - s->drip.off);
}

void srv_sess_flush(struct srv_sess *s)
{
    struct conn *c = &s->c;
    if (s->extra) {                  /* unasked, right behind the reply it follows */
        write_text(s, s->extra->text);
        s->extra = NULL;
    }
    if (!s->drip_ns) {
        conn_flush(c);
        return;
    }
    buf_append(&s->drip, c->out.p + c->out.off, conn_pending_out(c));
    c->out.off = c->out.len = 0;
    if (!timer_armed(&s->spew) && s->drip.len > s->drip.off)
        timer_arm_in(s->srv->loop, &s->spew, 0);
}

#define SPEW_CHUNK (64 * 1024)

/* The spew timer: a trickle's next byte, or more of an endless or overlong reply
 * whenever the socket has taken what was written (memory stays flat however long
 * the client reads). */
static void spew_step(struct loop *l, struct timer *t)
{
    struct srv_sess *s = (struct srv_sess *)((char *)t - offsetof(struct srv_sess, spew));
    struct conn *c = &s->c;
    if (s->dead || !conn_is_open(c))
        return;
    if (s->drip.len > s->drip.off) {
        conn_write(c, s->drip.p + s->drip.off++, 1);
        if (s->drip.off == s->drip.len)
            s->drip.off = s->drip.len = 0;
        conn_flush(c);
        if (s->drip.len)
            timer_arm_in(l, t, s->drip_ns);
        return;
    }
    while (s->spew_left && conn_pending_out(c) < SPEW_CHUNK) {
        if (s->spew_left == UINT64_MAX) {
            s->spew_lines++;
            if (s->proto == SRV_SMTP)
                conn_printf(c, "250-endless reply, line %llu\r\n", (unsigned long long)s->spew_lines);
            else if (s->proto == SRV_IMAP)
                conn_printf(c, "* OK endless reply, line %llu\r\n", (unsigned long long)s->spew_lines);
            else
                conn_printf(c, "%llu 1000\r\n", (unsigned long long)s->spew_lines);
            continue;
        }
        size_t n = s->spew_left < SPEW_CHUNK ? (size_t)s->spew_left : SPEW_CHUNK;
        memset(conn_reserve(c, n), 'x', n);
        conn_commit(c, n);
        if (!(s->spew_left -= n))
            conn_puts(c, "\r\n");
    }
    conn_flush(c);
    if (s->spew_left || conn_pending_out(c))
        timer_arm_in(l, t, NS_PER_MS);
}

void srv_sess_close_after_flush(struct srv_sess *s)
{
    s->closing = 1;
    srv_sess_flush(s);
    if (!conn_is_open(&s->c) || !sess_pending(s)) {
        srv_sess_drop(s);
        return;
    }
    s->tmode = TM_LINGER;
    s->linger_tries = 0;
    conn_deadline(&s->c, LINGER_STEP);
}

void srv_sess_delay(struct srv_sess *s, int what, const char *line, size_t len, uint64_t ns)
{
    s->delayed_what = what;
    free(s->delayed);
    s->delayed = xstrndup(line, len);
    s->waiting = 1;
    s->tmode = TM_DELAY;
    conn_deadline(&s->c, ns ? ns : 1);
}

int srv_sess_event(struct srv_sess *s, enum conn_event ev)
{
    if (ev == CONN_CLOSED) {
        srv_sess_drop(s);
        return 1;
    }
    if (ev != CONN_TIMEOUT)
        return 0;
    switch (s->tmode) {
    case TM_DELAY:
        s->tmode = TM_NONE;
        s->waiting = 0;
        s->on_timer(s);
        return 1;
    case TM_LINGER:
        srv_sess_flush(s);
        if (!sess_pending(s) || ++s->linger_tries >= LINGER_TRIES)
            srv_sess_drop(s);
        else
            conn_deadline(&s->c, LINGER_STEP);
        return 1;
    case TM_IDLE:
        return 0;                    /* the protocol says goodbye in its own words */
    case TM_NONE:
        return 1;
    }
    return 1;
}

void srv_sess_pump(struct srv_sess *s, int (*raw)(struct srv_sess *s),
                   void (*line)(struct srv_sess *s, char *l, size_t n), const char *too_long)
{
    struct conn *c = &s->c;
    while (!s->waiting && !s->closing && !s->dead && conn_is_open(c) && conn_avail(c)) {
        if (s->stalled) {
            c->in.off = c->in.len;   /* a stalled server reads nothing; dropping keeps memory flat */
            break;
        }
        int r = raw ? raw(s) : -1;
        if (r == 0)
            break;
        if (r > 0)
            continue;
        char *l;
        size_t n;
        r = conn_line(c, &l, &n);
        if (r == 0)
            break;
        if (r < 0) {
            conn_puts(c, too_long);
            srv_sess_close_after_flush(s);
            return;
        }
        line(s, l, n);
    }
    if (s->dead || s->closing)
        return;
    srv_sess_flush(s);
    if (!s->waiting)
        srv_sess_idle(s);
}

void srv_sess_idle_timeout(struct srv_sess *s, const char *bye)
{
    if (s->stalled) {
        srv_sess_drop(s);            /* a stalled server has nothing left to say */
        return;
    }
    conn_puts(&s->c, bye);
    srv_sess_close_after_flush(s);
}

const struct srv_cmd_fault *srv_sess_fault(struct srv_sess *s, enum srv_stage stage)
{
    if (!s->srv->cfg->faults.ncmd)
        return NULL;
    return srv_fault_pick(&s->srv->cfg->faults, &s->srv->fst, stage, &s->rng);
}

void srv_fault_log(const struct srv_sess *s, const struct srv_cmd_fault *f, const char *dflt)
{
    (void)s;
    srv_log("%s", f->log ? f->log : dflt);
}

int srv_sess_apply_fault(struct srv_sess *s, const struct srv_cmd_fault *f, int dly_tag,
                         const char *line, size_t len, const char *reply, const char *rlog,
                         const char *bye, const char *where, int close_after_reply, int rst)
{
    char logl[800];
    switch (f->kind) {
    case SF_TEMP:
    case SF_PERM:
        srv_fault_log(s, f, rlog);
        conn_printf(&s->c, "%s\r\n", reply);
        if (close_after_reply)
            srv_sess_close_after_flush(s);
        return 1;
    case SF_421:
        snprintf(logl, sizeof logl, "warning: %s: service shutting down: %s", where, bye);
        srv_fault_log(s, f, logl);
        conn_printf(&s->c, "%s\r\n", bye);
        srv_sess_close_after_flush(s);
        return 1;
    case SF_DISCONNECT:
    case SF_RESET:
        snprintf(logl, sizeof logl, "warning: %s: process died: connection %s", where,
                 f->kind == SF_RESET ? "reset" : "dropped");
        srv_fault_log(s, f, logl);
        srv_sess_flush(s);           /* earlier replies left before the crash */
        srv_sess_abort(s, rst || f->kind == SF_RESET);
        return 1;
    case SF_REPLY:
        snprintf(logl, sizeof logl, "warning: %s: hostile reply instead of the answer", where);
        srv_fault_log(s, f, logl);
        write_text(s, f->text);
        return 1;
    case SF_EXTRA:
        snprintf(logl, sizeof logl, "warning: %s: hostile reply after the answer", where);
        srv_fault_log(s, f, logl);
        s->extra = f;
        return 0;
    case SF_TRICKLE:
        snprintf(logl, sizeof logl, "warning: %s: replies trickle from here on", where);
        srv_fault_log(s, f, logl);
        s->drip_ns = f->delay.hi ? srv_dist_draw(&f->delay, &s->rng) : NS_PER_MS;
        if (!s->drip_ns)
            s->drip_ns = 1;
        return 0;
    case SF_ENDLESS:
    case SF_OVERLONG:
        snprintf(logl, sizeof logl, "warning: %s: %s reply", where, f->kind == SF_ENDLESS ? "endless" : "overlong");
        srv_fault_log(s, f, logl);
        if (f->kind == SF_ENDLESS) {
            s->spew_left = UINT64_MAX;
            if (s->proto == SRV_POP3)
                conn_puts(&s->c, "+OK\r\n");
        } else {
            s->spew_left = f->size ? f->size : 10 * 1024 * 1024;
            conn_puts(&s->c, s->proto == SRV_SMTP ? "451 " : s->proto == SRV_IMAP ? "* " : "-ERR ");
        }
        s->stalled = 1;              /* it reads nothing more */
        timer_arm_in(s->srv->loop, &s->spew, 0);
        return 1;
    case SF_FORGE:                   /* the protocol rewrites what it retrieves */
    case SF_DROP:                    /* the protocol accepts the message and loses it */
    case SF_UNDONE:                  /* IMAP's: the protocol applies them */
    case SF_SILENT:
    case SF_AGAIN:
    case SF_APPLIED:
        return 0;
    case SF_DELAY: {
        uint64_t ns = srv_dist_draw(&f->delay, &s->rng);
        snprintf(logl, sizeof logl, "warning: %s: reply delayed %llums: lmtp: timed out while waiting for the store",
                 where, (unsigned long long)(ns / NS_PER_MS));
        srv_fault_log(s, f, logl);
        srv_sess_delay(s, dly_tag, line, len, ns);
        return 1;
    }
    case SF_STALL:
        snprintf(logl, sizeof logl, "warning: %s: process stalled: database is locked", where);
        srv_fault_log(s, f, logl);
        s->stalled = 1;
        return 1;
    }
    return 0;
}

void srv_sess_start(struct srv *srv, struct srv_sess *s, enum srv_proto proto, int fd, conn_cb cb)
{
    s->srv = srv;
    s->proto = proto;
    s->spew.fn = spew_step;
    s->id = ++srv->seq[proto];
    /* IMAP's streams lie apart from SMTP's and POP3's, which keep theirs. */
    srv_rng_seed(&s->rng, srv->cfg->seed, proto == SRV_IMAP ? s->id | 1ULL << 40 : s->id * 2 + (uint64_t)proto);
    conn_init(&s->c, srv->loop, cb, s);
    s->c.max_line = 64 * 1024;       /* DATA is parsed raw; this bounds command lines */
    s->next = srv->sessions;
    if (s->next)
        s->next->prev = s;
    srv->sessions = s;
    srv->nconns++;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char h[NI_MAXHOST] = "unknown";
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
        getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, NULL, 0, NI_NUMERICHOST);
    snprintf(s->peer, sizeof s->peer, "localhost[%.50s]", h);
    if (conn_adopt(&s->c, fd) < 0) {
        close(fd);
        s->c.io.fd = -1;
        s->dead = 1;
        srv_sess_reap(s);
        return;
    }
    srv_sess_idle(s);
}

long srv_check_login(const struct srv *srv, const char *user, size_t ulen, const char *pass, size_t plen)
{
    long u = srv_book_find(&srv->book, user, ulen);
    if (u < 0)
        return -1;
    const char *want = srv->users.v[u].pass;
    return strlen(want) == plen && !memcmp(want, pass, plen) ? u : -1;
}

/* --- listeners --- */

/* A connection beyond what the server can hold: a 421 / -ERR and closed. why is
 * NULL for max_conns, else the error that left no descriptor. */
static void refuse(struct srv *srv, enum srv_proto proto, int fd, const char *why)
{
    static const char *const busy[] = {
        "421 4.7.0 Too many connections, try again later\r\n",
        "-ERR [SYS/TEMP] Too many connections, try again later\r\n",
        "* BYE [UNAVAILABLE] Too many connections, try again later\r\n",
    };
    if (send(fd, busy[proto], strlen(busy[proto]), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) { /* gone */ }
    if (why)
        srv_log("warning: accept: %s (%llu connections): refusing one", why, (unsigned long long)srv->nconns);
    else
        srv_log("warning: too many connections (%llu): refusing one", (unsigned long long)srv->nconns);
    close(fd);
}

static void on_accept(struct loop *l, struct io_handler *h, uint32_t ev)
{
    struct srv_listener *ls = (struct srv_listener *)h;
    struct srv *srv = ls->srv;
    enum srv_proto proto = ls->proto;
    (void)l; (void)ev;
    for (int i = 0; i < 64; i++) {
        int fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EMFILE || errno == ENFILE) && srv->spare_fd >= 0) {
            /* Out of descriptors (the store's files took the reserve): the spare one
             * lets this client hear a 421 now instead of waiting in the queue of a
             * listener that stays readable, which would spin this loop. */
            int why = errno;
            close(srv->spare_fd);
            fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd >= 0)
                refuse(srv, proto, fd, strerror(why));
            srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
            continue;
        }
        if (fd < 0) {
            if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                srv_log("warning: accept: %s", strerror(errno));
            return;
        }
        if (srv->nconns >= srv->max_conns) {
            refuse(srv, proto, fd, NULL);
            continue;
        }
        if (proto == SRV_SMTP)
            srv_smtp_accept(srv, fd);
        else if (proto == SRV_POP3)
            srv_pop3_accept(srv, fd);
        else
            srv_imap_accept(srv, fd, ls->tls);
    }
}

static int listen_on(struct srv *srv, int which, const char *spec, char *err, size_t errlen)
{
    static const char *const names[] = { "listen_smtp", "listen_pop3", "listen_imap", "listen_imaps" };
    static const enum srv_proto protos[] = { SRV_SMTP, SRV_POP3, SRV_IMAP, SRV_IMAP };
    char host[256], port[32];
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai = NULL;
    struct io_handler *h = &srv->lsn[which].io;
    srv->lsn[which].srv = srv;
    srv->lsn[which].proto = protos[which];
    srv->lsn[which].tls = which == SRV_LSN_IMAPS;
    h->fd = -1;
    if (!spec || !*spec)
        return 0;
    if (hostport_split(spec, host, sizeof host, port, sizeof port) < 0) {
        snprintf(err, errlen, "server.%s: '%s': expected HOST:PORT", names[which], spec);
        return -1;
    }
    int gr = getaddrinfo(*host ? host : NULL, port, &hints, &ai);
    if (gr) {
        snprintf(err, errlen, "server.%s: '%s': %s", names[which], spec, gai_strerror(gr));
        return -1;
    }
    int fd = hostport_listen(ai, HOSTPORT_NONBLOCK, 1024, srv->addr[which], sizeof srv->addr[which]);
    freeaddrinfo(ai);
    if (fd < 0) {
        snprintf(err, errlen, "server.%s: cannot listen on %s: %s", names[which], spec, strerror(errno));
        return -1;
    }
    h->fd = fd;
    h->fn = on_accept;
    return loop_add(srv->loop, h, EPOLLIN);
}

static void stop_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
}

/* The one thread SIGTERM and SIGINT reach (every other thread blocks them). It asks
 * the loop to stop, then watches the stop: a second signal, or a stop not done in
 * STOP_GRACE_S, ends the process there and then. So the server is gone within
 * seconds whatever its sessions, its store or its loop are doing, as Postfix's
 * watchdog ends a daemon that stopped making progress. */
static void *sig_main(void *arg)
{
    struct srv *srv = arg;
    sigset_t set;
    int sig;
    stop_signals(&set);
    if (sigwait(&set, &sig) != 0)
        return NULL;
    __atomic_store_n(&srv->signal_ns, mono_ns(), __ATOMIC_RELEASE);
    srv_log("received signal %d: shutting down", sig);
    __atomic_store_n(&srv->stopping, 1, __ATOMIC_RELEASE);
    loop_wake(srv->loop);
    struct timespec grace = { .tv_sec = STOP_GRACE_S };
    while ((sig = sigtimedwait(&set, NULL, &grace)) < 0 && errno == EINTR)
        ;
    if (sig > 0)
        srv_log("received signal %d again: exiting now", sig);
    else
        srv_log("error: not stopped %d s after the signal: exiting now", STOP_GRACE_S);
    _exit(1);
}

/* Descriptors beyond the sessions': listeners, the log, the store's files
 * (maildir opens one per message it writes or reads), the spare. */
#define SRV_FD_RESERVE 256

/* server.max_conns sessions need a descriptor each: the soft limit is raised to
 * hold them (it is 1024 on most machines), and where the hard limit cannot, fewer
 * are taken and the rest refused with 421, which a client can see, rather than
 * left unaccepted until they time out. */
static void fit_nofile(struct srv *srv)
{
    struct rlimit rl;
    srv->max_conns = srv->cfg->max_conns;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
        return;
    uint64_t need = srv->max_conns + SRV_FD_RESERVE;
    if (rl.rlim_cur < need) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur < need) {
        srv->max_conns = rl.rlim_cur > 2 * SRV_FD_RESERVE ? rl.rlim_cur - SRV_FD_RESERVE : rl.rlim_cur / 2;
        srv_log("warning: server.max_conns %llu lowered to %llu: this process may open %llu files "
                "(RLIMIT_NOFILE, ulimit -Hn) and keeps %d for the store; more connections are refused with 421",
                (unsigned long long)srv->cfg->max_conns, (unsigned long long)srv->max_conns,
                (unsigned long long)rl.rlim_cur, SRV_FD_RESERVE);
    }
}

int srv_init(struct srv *srv, const struct srv_config *cfg, char *err, size_t errlen)
{
    memset(srv, 0, sizeof *srv);
    srv->cfg = cfg;
    for (int i = 0; i < SRV_LSN_COUNT; i++)
        srv->lsn[i].io.fd = -1;
    fit_nofile(srv);
    srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    size_t nf = cfg->faults.ncmd ? cfg->faults.ncmd : 1;
    srv->fst.seen = xcalloc(nf, sizeof *srv->fst.seen);
    srv->fst.fired = xcalloc(nf, sizeof *srv->fst.fired);
    srv->loop = loop_new();
    if (!srv->loop) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (srv_users_load(cfg, &srv->users, err, errlen) < 0)
        return -1;
    if (srv_book_init(&srv->book, &srv->users) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    sigset_t set;
    stop_signals(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);   /* before any thread inherits the mask */
    signal(SIGPIPE, SIG_IGN);
    int e = pthread_create(&srv->sig_thread, NULL, sig_main, srv);
    if (e) {
        snprintf(err, errlen, "cannot start the signal thread: %s", strerror(e));
        return -1;
    }
    srv->sig_started = 1;
    if (cfg->tls_cert && *cfg->tls_cert) {
        srv->imap_tls = tls_server_ctx(cfg->tls_cert, cfg->tls_key && *cfg->tls_key ? cfg->tls_key : cfg->tls_cert,
                                       err, errlen);
        if (!srv->imap_tls)
            return -1;
    } else if (cfg->listen_imaps && *cfg->listen_imaps) {
        snprintf(err, errlen, "server.listen_imaps: needs server.tls_cert (and tls_key)");
        return -1;
    }
    srv->imap_uidvalidity = (uint32_t)time(NULL);
    if (listen_on(srv, SRV_LSN_SMTP, cfg->listen_smtp, err, errlen) < 0 ||
        listen_on(srv, SRV_LSN_POP3, cfg->listen_pop3, err, errlen) < 0 ||
        listen_on(srv, SRV_LSN_IMAP, cfg->listen_imap, err, errlen) < 0 ||
        listen_on(srv, SRV_LSN_IMAPS, cfg->listen_imaps, err, errlen) < 0)
        return -1;
    srv->store = srv_store_start(cfg, &srv->users, srv->loop, err, errlen);
    if (!srv->store)
        return -1;
    srv_store_watch(srv->store, srv_imap_delivered, srv);
    err[0] = 0;
    srv->rate = srv_rate_start(srv, err, errlen);
    if (err[0])
        return -1;
    srv->start_wall = (uint64_t)time(NULL);
    return 0;
}

int srv_run(struct srv *srv)
{
    while (!__atomic_load_n(&srv->stopping, __ATOMIC_ACQUIRE))
        loop_run_once(srv->loop, 1000 * NS_PER_MS);
    for (int p = 0; p < SRV_LSN_COUNT; p++)
        if (srv->lsn[p].io.fd >= 0) {
            loop_del(srv->loop, &srv->lsn[p].io);
            close(srv->lsn[p].io.fd);
            srv->lsn[p].io.fd = -1;
        }
    /* Every session ends now; those with a request out are freed when it returns. */
    for (struct srv_sess *s = srv->sessions, *next; s; s = next) {
        next = s->next;
        srv_sess_drop(s);
    }
    srv_rate_stop(srv->rate);        /* before the store: no new deliveries */
    /* The stop runs the last completions, and a POP3 session freed in one would
     * submit the unlock of its mailbox (on_free) to the store that no longer
     * runs, a request nobody frees: the store is gone for them first. */
    struct srv_store *store = srv->store;
    srv->store = NULL;
    srv_store_stop(store);
    for (struct srv_sess *s = srv->sessions, *next; s; s = next) {
        next = s->next;
        s->waiting = 0;              /* a store reply that never came: nothing left to wait for */
        srv_sess_reap(s);
    }
    return 0;
}

void srv_fini(struct srv *srv)
{
    /* The stop is done (or the start failed): the watch ends, before the loop the
     * thread wakes is freed. */
    if (srv->sig_started) {
        pthread_cancel(srv->sig_thread);
        pthread_join(srv->sig_thread, NULL);
    }
    if (srv->store)
        srv_store_stop(srv->store);
    srv_rate_free(srv->rate);
    for (int p = 0; p < SRV_LSN_COUNT; p++)
        if (srv->lsn[p].io.fd >= 0)
            close(srv->lsn[p].io.fd);
    srv_imap_boxes_free(srv);
    if (srv->imap_tls)
        tls_ctx_free(srv->imap_tls);
    if (srv->spare_fd >= 0)
        close(srv->spare_fd);
    loop_free(srv->loop);
    srv_book_free(&srv->book);
    users_free(&srv->users);
    free(srv->fst.seen);
    free(srv->fst.fired);
}
