/* tls: OpenSSL 3 under struct conn. The SSL object talks to the connection's own socket
 * through a small BIO (like SSL_set_fd: no extra copies or buffers, epoll readiness is the
 * socket's) that sends with MSG_NOSIGNAL, so a peer reset cannot raise SIGPIPE.
 * Known limit, OpenSSL's own (openssl/openssl#13729): a TLS 1.3 KeyUpdate request that
 * arrives while one of our writes is blocked mid-record fails the connection ("bad
 * length"). Mail servers do not send such requests; memory BIOs would avoid it at the
 * cost of a copy and a second output buffer per connection. */
#include "lib/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "lib/alloc.h"

/* One slot per server a client talks to; a load run has a handful of targets. */
#define SESSION_SLOTS 16

struct session_slot {
    char *key;                       /* SNI name | peer address */
    SSL_SESSION *sess;
};

struct tls_ctx {
    SSL_CTX *ssl;
    BIO_METHOD *bio;                 /* per ctx, so there is no global to initialise */
    int server, verify, resume;
    pthread_mutex_t lock;            /* guards slots and next_slot */
    struct session_slot slots[SESSION_SLOTS];
    unsigned next_slot;
};

struct tls_conn {
    SSL *ssl;
    struct tls_ctx *ctx;
    char *host;                      /* client: the name asked for, for the cache key */
    char *key;                       /* client with resumption: cache key, once known */
    int started;                     /* first handshake step taken */
    int dead;                        /* fatal error: no close_notify on close */
};

/* ---- the socket BIO ---- */

static int sock_fd(BIO *b) { return (int)(intptr_t)BIO_get_data(b); }

static int sock_write(BIO *b, const char *p, int n)
{
    BIO_clear_retry_flags(b);
    ssize_t r = send(sock_fd(b), p, (size_t)n, MSG_NOSIGNAL);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        BIO_set_retry_write(b);
    return (int)r;
}

static int sock_read(BIO *b, char *p, int n)
{
    BIO_clear_retry_flags(b);
    ssize_t r = recv(sock_fd(b), p, (size_t)n, 0);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        BIO_set_retry_read(b);
    else if (r == 0)
        BIO_set_flags(b, BIO_FLAGS_IN_EOF);   /* OpenSSL asks BIO_eof() to tell EOF from error */
    return (int)r;
}

static long sock_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)num;
    switch (cmd) {
    case BIO_CTRL_FLUSH: return 1;
    case BIO_CTRL_EOF: return BIO_test_flags(b, BIO_FLAGS_IN_EOF) != 0;
    case BIO_C_GET_FD:               /* SSL_get_fd() and friends */
        if (ptr)
            *(int *)ptr = sock_fd(b);
        return sock_fd(b);
    default: return 0;
    }
}

static BIO_METHOD *sock_method(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, "mailsoak socket");
    if (m && (!BIO_meth_set_write(m, sock_write) || !BIO_meth_set_read(m, sock_read) ||
              !BIO_meth_set_ctrl(m, sock_ctrl))) {
        BIO_meth_free(m);
        m = NULL;
    }
    return m;
}

/* ---- contexts ---- */

static void ssl_err(char *err, size_t errlen, const char *what)
{
    unsigned long e = ERR_get_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    snprintf(err, errlen, "%s: %s", what, r ? r : "unknown OpenSSL error");
    ERR_clear_error();
}

static int new_session(SSL *ssl, SSL_SESSION *sess);

static struct tls_ctx *ctx_new(const SSL_METHOD *method, char *err, size_t errlen)
{
    struct tls_ctx *ctx = xcalloc(1, sizeof *ctx);
    pthread_mutex_init(&ctx->lock, NULL);
    ERR_clear_error();
    ctx->ssl = SSL_CTX_new(method);
    ctx->bio = sock_method();
    if (!ctx->ssl || !ctx->bio) {
        ssl_err(err, errlen, "cannot set up OpenSSL");
        tls_ctx_free(ctx);
        return NULL;
    }
    SSL_CTX_set_app_data(ctx->ssl, ctx);
    SSL_CTX_set_min_proto_version(ctx->ssl, TLS1_2_VERSION);
    /* Mail protocols end their own sessions (QUIT, "."), so a close without
     * close_notify is an ordinary EOF, as servers commonly send it. */
    SSL_CTX_set_options(ctx->ssl, SSL_OP_IGNORE_UNEXPECTED_EOF);
    /* conn retries a write with a buffer that may have moved or grown, and wants
     * partial progress; idle sessions by the thousand should not hold 34 KiB each. */
    SSL_CTX_set_mode(ctx->ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                   SSL_MODE_RELEASE_BUFFERS);
    return ctx;
}

struct tls_ctx *tls_client_ctx(const char *ca_file, int verify, int resume_sessions,
                               char *err, size_t errlen)
{
    struct tls_ctx *ctx = ctx_new(TLS_client_method(), err, errlen);
    if (!ctx)
        return NULL;
    ctx->verify = verify;
    ctx->resume = resume_sessions;
    int ok;
    if (ca_file && *ca_file) {
        struct stat st;
        if (stat(ca_file, &st) < 0) {
            snprintf(err, errlen, "tls_ca %s: %s", ca_file, strerror(errno));
            tls_ctx_free(ctx);
            return NULL;
        }
        ok = S_ISDIR(st.st_mode) ? SSL_CTX_load_verify_locations(ctx->ssl, NULL, ca_file)
                                 : SSL_CTX_load_verify_locations(ctx->ssl, ca_file, NULL);
    } else {
        ok = SSL_CTX_set_default_verify_paths(ctx->ssl);
    }
    if (!ok) {
        char what[300];
        snprintf(what, sizeof what, "tls_ca %s", ca_file && *ca_file ? ca_file : "(system store)");
        ssl_err(err, errlen, what);
        tls_ctx_free(ctx);
        return NULL;
    }
    SSL_CTX_set_verify(ctx->ssl, verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
    if (resume_sessions) {
        /* OpenSSL's client cache is never consulted by itself: we look sessions up. */
        SSL_CTX_set_session_cache_mode(ctx->ssl, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(ctx->ssl, new_session);
    } else {
        SSL_CTX_set_session_cache_mode(ctx->ssl, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(ctx->ssl, SSL_OP_NO_TICKET);
    }
    return ctx;
}

struct tls_ctx *tls_server_ctx(const char *cert_file, const char *key_file, char *err, size_t errlen)
{
    static const unsigned char sid_ctx[] = "mailsoak";
    struct tls_ctx *ctx = ctx_new(TLS_server_method(), err, errlen);
    if (!ctx)
        return NULL;
    ctx->server = 1;
    char what[600];
    if (SSL_CTX_use_certificate_chain_file(ctx->ssl, cert_file) != 1) {
        snprintf(what, sizeof what, "certificate %s", cert_file);
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx->ssl, key_file, SSL_FILETYPE_PEM) != 1) {
        snprintf(what, sizeof what, "key %s", key_file);
        goto fail;
    }
    if (SSL_CTX_check_private_key(ctx->ssl) != 1) {
        snprintf(what, sizeof what, "key %s does not match certificate %s", key_file, cert_file);
        goto fail;
    }
    SSL_CTX_set_session_id_context(ctx->ssl, sid_ctx, sizeof sid_ctx - 1);
    return ctx;
fail:
    ssl_err(err, errlen, what);
    tls_ctx_free(ctx);
    return NULL;
}

void tls_ctx_free(struct tls_ctx *ctx)
{
    if (!ctx)
        return;
    for (int i = 0; i < SESSION_SLOTS; i++) {
        free(ctx->slots[i].key);
        SSL_SESSION_free(ctx->slots[i].sess);
    }
    SSL_CTX_free(ctx->ssl);
    BIO_meth_free(ctx->bio);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

/* ---- the client session cache ---- */

/* Called by OpenSSL when a session (a TLS 1.3 ticket arrives after the handshake, read
 * along with application data) can be resumed later. Returning 1 keeps the reference. */
static int new_session(SSL *ssl, SSL_SESSION *sess)
{
    struct tls_conn *t = SSL_get_app_data(ssl);
    struct tls_ctx *ctx = t->ctx;
    if (!t->key || !SSL_SESSION_is_resumable(sess))
        return 0;
    pthread_mutex_lock(&ctx->lock);
    struct session_slot *s = NULL;
    for (int i = 0; i < SESSION_SLOTS && !s; i++)
        if (ctx->slots[i].key && !strcmp(ctx->slots[i].key, t->key))
            s = &ctx->slots[i];
    if (!s) {
        s = &ctx->slots[ctx->next_slot++ % SESSION_SLOTS];
        free(s->key);
        s->key = xstrdup(t->key);
    }
    SSL_SESSION_free(s->sess);
    s->sess = sess;
    pthread_mutex_unlock(&ctx->lock);
    return 1;
}

/* The key is only known once TCP is up: the same name may resolve to several servers. */
static void offer_session(struct conn *c, struct tls_conn *t)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char addr[INET6_ADDRSTRLEN] = "?", key[600];
    unsigned port = 0;
    if (getpeername(c->io.fd, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &s6->sin6_addr, addr, sizeof addr);
            port = ntohs(s6->sin6_port);
        } else if (ss.ss_family == AF_INET) {
            struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &s4->sin_addr, addr, sizeof addr);
            port = ntohs(s4->sin_port);
        }
    }
    snprintf(key, sizeof key, "%s|%s|%u", t->host ? t->host : "", addr, port);
    t->key = xstrdup(key);
    pthread_mutex_lock(&t->ctx->lock);
    for (int i = 0; i < SESSION_SLOTS; i++)
        if (t->ctx->slots[i].key && !strcmp(t->ctx->slots[i].key, key)) {
            if (t->ctx->slots[i].sess)
                SSL_set_session(t->ssl, t->ctx->slots[i].sess);
            break;
        }
    pthread_mutex_unlock(&t->ctx->lock);
}

/* ---- the transport ---- */

/* c->errmsg from OpenSSL's error queue, in words a user can act on. */
static void describe(struct conn *c, struct tls_conn *t, int sslerr, int sys)
{
    unsigned long e = ERR_peek_error();
    if (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_CERTIFICATE_VERIFY_FAILED) {
        snprintf(c->errmsg, sizeof c->errmsg, "certificate verify failed: %s",
                 X509_verify_cert_error_string(SSL_get_verify_result(t->ssl)));
    } else if (e) {
        const char *r = ERR_reason_error_string(e);
        if (r)
            snprintf(c->errmsg, sizeof c->errmsg, "%s", r);
        else
            ERR_error_string_n(e, c->errmsg, sizeof c->errmsg);
    } else if (sslerr == SSL_ERROR_SYSCALL && sys) {
        snprintf(c->errmsg, sizeof c->errmsg, "%s", strerror(sys));
    } else if (sslerr == SSL_ERROR_SYSCALL || sslerr == SSL_ERROR_ZERO_RETURN) {
        snprintf(c->errmsg, sizeof c->errmsg, "connection closed during the TLS handshake");
    } else {
        snprintf(c->errmsg, sizeof c->errmsg, "TLS error %d", sslerr);
    }
    ERR_clear_error();
}

/* After a failed SSL call: -1 with errno EAGAIN (want_events set), a socket errno, or
 * EPROTO (errmsg set); 0 for EOF. */
static ssize_t io_result(struct conn *c, struct tls_conn *t, int r, int sys, int reading)
{
    int e = SSL_get_error(t->ssl, r);
    switch (e) {
    case SSL_ERROR_WANT_READ:
        c->want_events = EPOLLIN;
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_WANT_WRITE:
        c->want_events = EPOLLOUT;
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_ZERO_RETURN:      /* close_notify, or EOF (SSL_OP_IGNORE_UNEXPECTED_EOF) */
        if (reading)
            return 0;
        errno = EPIPE;
        return -1;
    case SSL_ERROR_SYSCALL:
        t->dead = 1;
        ERR_clear_error();
        if (!sys && reading)
            return 0;
        errno = sys ? sys : EPIPE;
        return -1;
    default:
        t->dead = 1;
        describe(c, t, e, sys);
        errno = EPROTO;
        return -1;
    }
}

static ssize_t tls_read(struct conn *c, void *p, size_t n)
{
    struct tls_conn *t = c->tls;
    ERR_clear_error();
    errno = 0;
    int r = SSL_read(t->ssl, p, n > INT_MAX ? INT_MAX : (int)n);
    if (r > 0)
        return r;
    return io_result(c, t, r, errno, 1);
}

static ssize_t tls_write(struct conn *c, const void *p, size_t n)
{
    struct tls_conn *t = c->tls;
    ERR_clear_error();
    errno = 0;
    int r = SSL_write(t->ssl, p, n > INT_MAX ? INT_MAX : (int)n);
    if (r > 0)
        return r;
    return io_result(c, t, r, errno, 0);
}

/* An upgrading server's go-ahead may still sit in the output buffer: it must go out
 * in the clear before the first handshake byte. 1 sent, 0 blocked, -1 failed. */
static int flush_plain(struct conn *c)
{
    while (conn_pending_out(c)) {
        ssize_t w = send(c->io.fd, c->out.p + c->out.off, conn_pending_out(c), MSG_NOSIGNAL);
        if (w > 0) {
            c->out.off += (size_t)w;
            c->bytes_out += (uint64_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            c->want_events = EPOLLOUT;
            return 0;
        } else {
            int e = errno;
            snprintf(c->errmsg, sizeof c->errmsg, "%s", strerror(e));
            errno = e;
            return -1;
        }
    }
    c->out.off = c->out.len = 0;
    return 1;
}

static int tls_handshake(struct conn *c)
{
    struct tls_conn *t = c->tls;
    if (!t->started) {
        int f = flush_plain(c);
        if (f <= 0)
            return f;                /* errno is the socket's */
        if (!t->ctx->server && t->ctx->resume)
            offer_session(c, t);
        t->started = 1;
    }
    ERR_clear_error();
    errno = 0;
    int r = SSL_do_handshake(t->ssl);
    if (r == 1)
        return 1;
    int sys = errno;
    int e = SSL_get_error(t->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        c->want_events = e == SSL_ERROR_WANT_READ ? EPOLLIN : EPOLLOUT;
        return 0;
    }
    t->dead = 1;
    describe(c, t, e, sys);
    /* conn classifies by errno: a reset stays a reset, a close stays a close. */
    errno = e == SSL_ERROR_SYSCALL ? sys : e == SSL_ERROR_ZERO_RETURN ? 0 : EPROTO;
    return -1;
}

static size_t tls_pending(const struct conn *c)
{
    const struct tls_conn *t = c->tls;
    int n = SSL_pending(t->ssl);
    return n > 0 ? (size_t)n : 0;
}

static void tls_free(struct tls_conn *t)
{
    SSL_free(t->ssl);
    free(t->host);
    free(t->key);
    free(t);
}

static void tls_close(struct conn *c)
{
    struct tls_conn *t = c->tls;
    if (!t)
        return;
    /* One non-blocking close_notify, as a courtesy: nobody waits for the answer. */
    if (!t->dead && SSL_is_init_finished(t->ssl)) {
        ERR_clear_error();
        SSL_shutdown(t->ssl);
    }
    ERR_clear_error();
    tls_free(t);
    c->tls = NULL;
}

const struct transport transport_tls = {
    .name = "tls", .read = tls_read, .write = tls_write, .handshake = tls_handshake,
    .close = tls_close, .pending = tls_pending,
};

/* "[::1]" -> "::1"; 1 when the result is an IP literal. */
static int unbracket(const char *host, char *out, size_t n)
{
    size_t len = strlen(host);
    if (len >= 2 && host[0] == '[' && host[len - 1] == ']' && len - 2 < n) {
        memcpy(out, host + 1, len - 2);
        out[len - 2] = 0;
    } else {
        snprintf(out, n, "%s", host);
    }
    unsigned char a[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, out, a) == 1 || inet_pton(AF_INET6, out, a) == 1;
}

int tls_start(struct conn *c, struct tls_ctx *ctx, const char *sni_host, int implicit)
{
    if (c->io.fd < 0 || c->tr != &transport_plain) {
        snprintf(c->errmsg, sizeof c->errmsg, c->io.fd < 0 ? "TLS on a closed connection"
                                                          : "TLS already started");
        return -1;
    }
    struct tls_conn *t = xcalloc(1, sizeof *t);
    BIO *bio = NULL;
    t->ctx = ctx;
    ERR_clear_error();
    t->ssl = SSL_new(ctx->ssl);
    bio = BIO_new(ctx->bio);
    if (!t->ssl || !bio)
        goto oom;
    BIO_set_data(bio, (void *)(intptr_t)c->io.fd);
    BIO_set_init(bio, 1);
    SSL_set_bio(t->ssl, bio, bio);
    bio = NULL;
    SSL_set_app_data(t->ssl, t);
    if (ctx->server) {
        SSL_set_accept_state(t->ssl);
    } else {
        SSL_set_connect_state(t->ssl);
        if (sni_host && *sni_host) {
            char host[256];
            int ip = unbracket(sni_host, host, sizeof host);
            int ok = 1;
            if (!ip)
                ok = SSL_set_tlsext_host_name(t->ssl, host);
            if (ok && ctx->verify) {
                if (ip) {
                    ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), host);
                } else {
                    SSL_set_hostflags(t->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
                    ok = SSL_set1_host(t->ssl, host);
                }
            }
            t->host = xstrdup(host);
            if (!ok) {
                snprintf(c->errmsg, sizeof c->errmsg, "TLS: cannot use host name %.80s", host);
                tls_free(t);
                ERR_clear_error();
                return -1;
            }
        }
    }
    if (implicit && c->connecting) {
        c->tr = &transport_tls;      /* conn runs the handshake once TCP is up */
        c->tls = t;
        return 0;
    }
    return conn_upgrade(c, &transport_tls, t);
oom:
    BIO_free(bio);
    if (t)
        tls_free(t);
    snprintf(c->errmsg, sizeof c->errmsg, "TLS: out of memory");
    ERR_clear_error();
    return -1;
}

int tls_active(const struct conn *c)
{
    return c->tr == &transport_tls && c->tls;
}

int tls_session_reused(const struct conn *c)
{
    return tls_active(c) && SSL_session_reused(((const struct tls_conn *)c->tls)->ssl);
}

const char *tls_version(const struct conn *c)
{
    if (!tls_active(c) || !SSL_is_init_finished(((const struct tls_conn *)c->tls)->ssl))
        return "";
    return SSL_get_version(((const struct tls_conn *)c->tls)->ssl);
}

struct ssl_st *tls_ssl(const struct conn *c)
{
    return tls_active(c) ? ((const struct tls_conn *)c->tls)->ssl : NULL;
}
