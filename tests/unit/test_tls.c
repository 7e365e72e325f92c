/* test_tls: the OpenSSL transport end to end, a server and a client conn on one loop
 * over 127.0.0.1, with a throwaway CA and certificates made at test time. */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "lib/conn.h"
#include "lib/loop.h"
#include "lib/tls.h"
#include "tmpdir.h"

#define BULK (1024 * 1024)
#define KEY_UPDATE_EVERY (64 * 1024)

/* ---- certificates ---- */

struct certs {
    char dir[64];
    char ca[128];                    /* the CA the server's certificate chains to */
    char other_ca[128];              /* an unrelated CA */
    char chain[128];                 /* server certificate, then the CA */
    char key[128];
};

static void add_ext(X509 *x, X509V3_CTX *v3, int nid, const char *val)
{
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, v3, nid, val);
    assert_non_null(e);
    assert_int_equal(X509_add_ext(x, e, -1), 1);
    X509_EXTENSION_free(e);
}

/* issuer NULL: self-signed CA. */
static X509 *make_cert(const char *cn, EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key, long serial)
{
    X509 *x = X509_new();
    assert_non_null(x);
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    X509_set_pubkey(x, key);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"mailsoak test", -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, issuer ? issuer : x, x, NULL, NULL, 0);
    add_ext(x, &v3, NID_subject_key_identifier, "hash");
    if (!issuer) {
        add_ext(x, &v3, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(x, &v3, NID_key_usage, "critical,keyCertSign,cRLSign");
    } else {
        add_ext(x, &v3, NID_basic_constraints, "CA:FALSE");
        add_ext(x, &v3, NID_key_usage, "critical,digitalSignature");
        add_ext(x, &v3, NID_ext_key_usage, "serverAuth");
        add_ext(x, &v3, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1");
        add_ext(x, &v3, NID_authority_key_identifier, "keyid");
    }
    assert_true(X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256()) > 0);
    return x;
}

static void write_pem(const char *path, X509 *a, X509 *b, EVP_PKEY *key)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    if (a) assert_int_equal(PEM_write_X509(f, a), 1);
    if (b) assert_int_equal(PEM_write_X509(f, b), 1);
    if (key) assert_int_equal(PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL), 1);
    assert_int_equal(fclose(f), 0);
}

static int make_certs(void **state)
{
    struct certs *k = calloc(1, sizeof *k);
    assert_non_null(k);
    test_tmpname(k->dir, sizeof k->dir, "test_tls.XXXXXX");
    assert_non_null(mkdtemp(k->dir));
    snprintf(k->ca, sizeof k->ca, "%s/ca.pem", k->dir);
    snprintf(k->other_ca, sizeof k->other_ca, "%s/other-ca.pem", k->dir);
    snprintf(k->chain, sizeof k->chain, "%s/server.pem", k->dir);
    snprintf(k->key, sizeof k->key, "%s/server.key", k->dir);
    EVP_PKEY *ca_key = EVP_EC_gen("P-256"), *other_key = EVP_EC_gen("P-256"), *key = EVP_EC_gen("P-256");
    assert_true(ca_key && other_key && key);
    X509 *ca = make_cert("test CA", ca_key, NULL, NULL, 1);
    X509 *other = make_cert("other CA", other_key, NULL, NULL, 2);
    X509 *leaf = make_cert("localhost", key, ca, ca_key, 3);
    write_pem(k->ca, ca, NULL, NULL);
    write_pem(k->other_ca, other, NULL, NULL);
    write_pem(k->chain, leaf, ca, NULL);
    write_pem(k->key, NULL, NULL, key);
    X509_free(ca); X509_free(other); X509_free(leaf);
    EVP_PKEY_free(ca_key); EVP_PKEY_free(other_key); EVP_PKEY_free(key);
    *state = k;
    return 0;
}

static int remove_certs(void **state)
{
    struct certs *k = *state;
    unlink(k->ca); unlink(k->other_ca); unlink(k->chain); unlink(k->key);
    rmdir(k->dir);
    free(k);
    return 0;
}

/* ---- a server and a client on one loop ---- */

enum scenario {
    SC_PING,          /* implicit TLS; client sends PING, server answers PONG */
    SC_BULK,          /* implicit TLS; 1 MB each way at once, small socket buffers */
    SC_KEY_UPDATE,    /* 1 MB server to client in 64 KB chunks, each acknowledged; new keys
                         both ways before each chunk */
    SC_STLS,          /* plaintext, then STLS with bytes injected around the go-ahead */
    SC_PLAIN_SERVER,  /* the server never speaks TLS, only a plaintext greeting */
    SC_HANGUP,        /* the server closes as soon as it accepts */
};

struct peer {
    struct conn c;
    struct harness *h;
    int server;
    int ups, tls_ups, closed;
    enum conn_err err;
    char errmsg[128];
    char lines[8][32];
    int nlines;
    size_t got;                      /* bulk bytes received and checked */
    int corrupt, blocked, key_updates, key_updates_in;
    size_t last_key_update;
};

struct harness {
    struct loop *loop;
    struct io_handler listener;
    struct sockaddr_in addr;
    struct tls_ctx *sctx, *cctx;
    enum scenario sc;
    const char *host;
    int close_after_pong;            /* 1: conn_close (close_notify), 2: bare FIN */
    struct peer srv, cli;
    int done;
};

static unsigned char pattern(int server, size_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u ^ (server ? 0x5a5a5a5au : 0x3c3c3c3cu);
    return (unsigned char)(x >> 13);
}

/* A small send buffer makes writes block early. Not the receive buffer: below the
 * loopback MSS the receiver never reopens its window and TCP crawls on persist probes. */
static void small_buffers(int fd)
{
    int n = 4096;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &n, sizeof n);
}

static void send_bulk(struct peer *p, size_t off, size_t n)
{
    char *dst = conn_reserve(&p->c, n);
    for (size_t i = 0; i < n; i++)
        dst[i] = (char)pattern(p->server, off + i);
    conn_commit(&p->c, n);
    conn_flush(&p->c);
    if (conn_pending_out(&p->c))
        p->blocked = 1;
}

/* Counts KeyUpdate messages the peer sent us. */
static void on_tls_msg(int write_p, int version, int content_type, const void *buf, size_t len,
                       SSL *ssl, void *arg)
{
    struct peer *p = arg;
    (void)version; (void)ssl;
    if (!write_p && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
        ((const unsigned char *)buf)[0] == SSL3_MT_KEY_UPDATE)
        p->key_updates_in++;
}

static void on_up(struct peer *p, enum conn_event ev)
{
    struct harness *h = p->h;
    if (h->sc == SC_BULK) {
        send_bulk(p, 0, BULK);
    } else if (h->sc == SC_KEY_UPDATE) {
        SSL_set_msg_callback(tls_ssl(&p->c), on_tls_msg);
        SSL_set_msg_callback_arg(tls_ssl(&p->c), p);
        if (p->server)
            send_bulk(p, 0, KEY_UPDATE_EVERY);
    } else if (!p->server && h->sc == SC_STLS && ev == CONN_UP) {
        conn_puts(&p->c, "STLS\r\nEVIL\r\n");   /* EVIL must not survive the server's upgrade */
        conn_flush(&p->c);
    } else if (!p->server && h->sc != SC_PLAIN_SERVER) {
        conn_puts(&p->c, "PING\r\n");
        conn_flush(&p->c);
    }
}

static void on_bulk(struct peer *p)
{
    struct harness *h = p->h;
    size_t n = conn_avail(&p->c);
    const unsigned char *in = (const unsigned char *)p->c.in.p + p->c.in.off;
    int acks = h->sc == SC_KEY_UPDATE && p->server;
    for (size_t i = 0; i < n; i++)
        if (acks ? in[i] != (unsigned char)"ACK\r\n"[(p->got + i) % 5]
                 : p->got + i >= BULK || in[i] != pattern(!p->server, p->got + i))
            p->corrupt = 1;
    p->c.in.off += n;
    size_t before = p->got;
    p->got += n;
    if (h->sc == SC_KEY_UPDATE && !p->server && p->got / KEY_UPDATE_EVERY != before / KEY_UPDATE_EVERY) {
        conn_puts(&p->c, "ACK\r\n");
        conn_flush(&p->c);
    }
    /* An acknowledged chunk has left OpenSSL's buffers, and OpenSSL (3.0, see tls.c)
     * only copes with a key update while no write is half done on either side. */
    if (acks && p->got % 5 == 0 && p->got / 5 * KEY_UPDATE_EVERY < BULK) {
        assert_int_equal(SSL_key_update(tls_ssl(&p->c), SSL_KEY_UPDATE_REQUESTED), 1);
        p->key_updates++;
        send_bulk(p, p->got / 5 * KEY_UPDATE_EVERY, KEY_UPDATE_EVERY);
    }
    if (h->sc == SC_BULK ? h->cli.got >= BULK && h->srv.got >= BULK
                         : h->cli.got >= BULK && h->srv.got == 5 * (BULK / KEY_UPDATE_EVERY))
        h->done = 1;
}

static void on_line(struct peer *p, const char *line)
{
    struct harness *h = p->h;
    if (p->nlines < 8)
        snprintf(p->lines[p->nlines++], sizeof p->lines[0], "%s", line);
    if (p->server && !strcmp(line, "STLS")) {
        conn_puts(&p->c, "+OK\r\nINJECTED\r\n");
        assert_int_equal(tls_start(&p->c, h->sctx, NULL, 0), 0);
    } else if (p->server && !strcmp(line, "PING")) {
        conn_puts(&p->c, "PONG\r\n");
        conn_flush(&p->c);
        if (h->close_after_pong == 1)
            conn_close(&p->c);
        else if (h->close_after_pong == 2)
            shutdown(p->c.io.fd, SHUT_WR);
    } else if (!p->server && !strcmp(line, "+OK") && !tls_active(&p->c)) {
        assert_int_equal(tls_start(&p->c, h->cctx, h->host, 0), 0);
    } else if (!p->server && !strcmp(line, "PONG") && !h->close_after_pong) {
        h->done = 1;
    }
}

static void peer_cb(struct conn *c, enum conn_event ev, void *ud)
{
    struct peer *p = ud;
    char *line;
    size_t len;
    switch (ev) {
    case CONN_UP:
    case CONN_TLS_UP:
        p->ups++;
        p->tls_ups += ev == CONN_TLS_UP;
        on_up(p, ev);
        break;
    case CONN_DATA:
        if (p->h->sc == SC_BULK || p->h->sc == SC_KEY_UPDATE) {
            on_bulk(p);
            break;
        }
        /* After an upgrade the buffer is gone: conn_line says "more" at once. */
        while (conn_is_open(c) && conn_line(c, &line, &len) == 1)
            on_line(p, line);
        break;
    case CONN_TIMEOUT:
        break;
    case CONN_CLOSED:
        p->closed = 1;
        p->err = c->err;
        snprintf(p->errmsg, sizeof p->errmsg, "%s", c->errmsg);
        break;
    }
}

static void on_accept(struct loop *l, struct io_handler *io, uint32_t ev)
{
    struct harness *h = (struct harness *)((char *)io - offsetof(struct harness, listener));
    (void)ev;
    int fd = accept4(io->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    if (h->sc == SC_HANGUP || conn_is_open(&h->srv.c)) {
        close(fd);
        return;
    }
    if (h->sc == SC_BULK || h->sc == SC_KEY_UPDATE)
        small_buffers(fd);
    assert_int_equal(conn_adopt(&h->srv.c, fd), 0);
    if (h->sc == SC_PLAIN_SERVER) {
        conn_puts(&h->srv.c, "220 plain text only\r\n");
        conn_flush(&h->srv.c);
    } else if (h->sc != SC_STLS) {
        assert_int_equal(tls_start(&h->srv.c, h->sctx, NULL, 1), 0);
    }
    (void)l;
}

static struct harness *harness_new(const struct certs *k, enum scenario sc)
{
    struct harness *h = calloc(1, sizeof *h);
    char err[256];
    assert_non_null(h);
    h->sc = sc;
    h->host = "localhost";
    h->loop = loop_new();
    assert_non_null(h->loop);
    conn_init(&h->srv.c, h->loop, peer_cb, &h->srv);
    conn_init(&h->cli.c, h->loop, peer_cb, &h->cli);
    h->sctx = tls_server_ctx(k->chain, k->key, err, sizeof err);
    if (!h->sctx)
        fail_msg("server ctx: %s", err);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    h->addr.sin_family = AF_INET;
    h->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof h->addr;
    assert_int_equal(bind(fd, (struct sockaddr *)&h->addr, sizeof h->addr), 0);
    assert_int_equal(listen(fd, 8), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&h->addr, &alen), 0);
    h->listener.fd = fd;
    h->listener.fn = on_accept;
    assert_int_equal(loop_add(h->loop, &h->listener, EPOLLIN), 0);
    return h;
}

static void peer_reset(struct harness *h, struct peer *p, int server);

static void client_ctx(struct harness *h, const char *ca, int verify, int resume)
{
    char err[256];
    peer_reset(h, &h->cli, 0);       /* a ctx outlives its connections */
    tls_ctx_free(h->cctx);
    h->cctx = tls_client_ctx(ca, verify, resume, err, sizeof err);
    if (!h->cctx)
        fail_msg("client ctx: %s", err);
}

static void peer_reset(struct harness *h, struct peer *p, int server)
{
    if (conn_is_open(&p->c))
        conn_close(&p->c);
    buf_free(&p->c.in);
    buf_free(&p->c.out);
    memset(p, 0, sizeof *p);
    conn_init(&p->c, h->loop, peer_cb, p);
    p->h = h;
    p->server = server;
}

/* One connection: runs until the scenario is done or the client is closed, then
 * lets the server side see the end too. Bounded at 20 s. */
static void run(struct harness *h)
{
    peer_reset(h, &h->srv, 1);
    peer_reset(h, &h->cli, 0);
    h->done = 0;
    assert_int_equal(conn_connect(&h->cli.c, (struct sockaddr *)&h->addr, sizeof h->addr, NULL, 0), 0);
    if (h->sc == SC_BULK || h->sc == SC_KEY_UPDATE)
        small_buffers(h->cli.c.io.fd);
    if (h->sc != SC_STLS)
        assert_int_equal(tls_start(&h->cli.c, h->cctx, h->host, 1), 0);
    uint64_t end = mono_ns() + 20 * NS_PER_S;
    while (!h->done && !h->cli.closed && mono_ns() < end)
        loop_run_once(h->loop, 50 * NS_PER_MS);
    if (!h->done && (h->sc == SC_BULK || h->sc == SC_KEY_UPDATE))
        print_message("client: closed %d err %s '%s' got %zu; server: closed %d err %s '%s' got %zu\n",
                      h->cli.closed, conn_err_name(h->cli.err), h->cli.errmsg, h->cli.got,
                      h->srv.closed, conn_err_name(h->srv.err), h->srv.errmsg, h->srv.got);
    if (!h->done && !h->cli.closed)
        fail_msg("timed out: client got %zu, server got %zu bytes", h->cli.got, h->srv.got);
    if (h->cli.closed && conn_is_open(&h->srv.c)) {
        end = mono_ns() + 2 * NS_PER_S;
        while (conn_is_open(&h->srv.c) && mono_ns() < end)
            loop_run_once(h->loop, 20 * NS_PER_MS);
    }
}

static void harness_free(struct harness *h)
{
    peer_reset(h, &h->srv, 1);
    peer_reset(h, &h->cli, 0);
    buf_free(&h->srv.c.in);
    buf_free(&h->cli.c.in);
    loop_del(h->loop, &h->listener);
    close(h->listener.fd);
    tls_ctx_free(h->sctx);
    tls_ctx_free(h->cctx);
    loop_free(h->loop);
    free(h);
}

/* A harness whose client trusts the test CA (or the unrelated one). */
static struct harness *harness_with(void **state, enum scenario sc, int trust_other, int verify, int resume)
{
    const struct certs *k = *state;
    struct harness *h = harness_new(k, sc);
    client_ctx(h, trust_other ? k->other_ca : k->ca, verify, resume);
    return h;
}

/* One connection to host whose handshake the client must refuse with errmsg. */
static void expect_tls_failure(struct harness *h, const char *host, const char *errmsg)
{
    h->host = host;
    run(h);
    assert_false(h->done);
    assert_int_equal(h->cli.ups, 0);
    assert_int_equal(h->cli.err, CE_TLS);
    assert_string_equal(h->cli.errmsg, errmsg);
}

/* ---- tests ---- */

static void test_verified_handshake(void **state)
{
    struct harness *h = harness_with(state, SC_PING, 0, 1, 0);
    run(h);
    assert_true(h->done);
    assert_int_equal(h->cli.ups, 1);
    assert_int_equal(h->cli.tls_ups, 0);         /* implicit TLS: CONN_UP after the handshake */
    assert_int_equal(h->srv.tls_ups, 1);
    assert_string_equal(h->srv.lines[0], "PING");
    assert_string_equal(h->cli.lines[0], "PONG");
    assert_true(tls_active(&h->cli.c));
    assert_string_equal(tls_version(&h->cli.c), "TLSv1.3");
    assert_false(tls_session_reused(&h->cli.c));
    harness_free(h);
}

static void test_ip_literal_verified(void **state)
{
    struct harness *h = harness_with(state, SC_PING, 0, 1, 0);
    h->host = "127.0.0.1";                       /* in the certificate as an IP SAN */
    run(h);
    assert_true(h->done);
    expect_tls_failure(h, "127.0.0.2", "certificate verify failed: IP address mismatch");
    harness_free(h);
}

static void test_untrusted_fails(void **state)
{
    struct harness *h = harness_with(state, SC_PING, 1, 1, 0);
    expect_tls_failure(h, "localhost", "certificate verify failed: self-signed certificate in certificate chain");
    /* The server hears the client's alert. */
    assert_true(h->srv.closed);
    assert_int_equal(h->srv.err, CE_TLS);
    assert_string_equal(h->srv.errmsg, "tlsv1 alert unknown ca");
    harness_free(h);
}

static void test_untrusted_verify_off(void **state)
{
    struct harness *h = harness_with(state, SC_PING, 1, 0, 0);
    h->host = "not-the-name.example";            /* no name check either */
    run(h);
    assert_true(h->done);
    assert_string_equal(h->cli.lines[0], "PONG");
    harness_free(h);
}

static void test_hostname_mismatch(void **state)
{
    struct harness *h = harness_with(state, SC_PING, 0, 1, 0);
    expect_tls_failure(h, "mail.example.org", "certificate verify failed: hostname mismatch");
    harness_free(h);
}

static void test_bulk_both_ways(void **state)
{
    struct harness *h = harness_with(state, SC_BULK, 0, 1, 0);
    run(h);
    assert_true(h->done);
    assert_int_equal(h->cli.got, BULK);
    assert_int_equal(h->srv.got, BULK);
    assert_false(h->cli.corrupt);
    assert_false(h->srv.corrupt);
    assert_true(h->cli.blocked && h->srv.blocked);   /* the EAGAIN path was taken */
    assert_int_equal(h->cli.c.bytes_out, BULK);
    assert_int_equal(h->srv.c.bytes_out, BULK);
    harness_free(h);
}

static void test_key_updates(void **state)
{
    struct harness *h = harness_with(state, SC_KEY_UPDATE, 0, 1, 0);
    run(h);
    assert_true(h->done);
    assert_int_equal(h->cli.got, BULK);
    assert_false(h->srv.corrupt);
    assert_false(h->cli.corrupt);
    assert_true(h->srv.blocked);
    assert_int_equal(h->srv.key_updates, BULK / KEY_UPDATE_EVERY - 1);
    /* Both directions changed keys: the client answered each request. */
    assert_int_equal(h->cli.key_updates_in, h->srv.key_updates);
    assert_int_equal(h->srv.key_updates_in, h->srv.key_updates);
    harness_free(h);
}

static void test_upgrade_discards_injected(void **state)
{
    struct harness *h = harness_with(state, SC_STLS, 0, 1, 0);
    run(h);
    assert_true(h->done);
    assert_int_equal(h->cli.ups, 2);
    assert_int_equal(h->cli.tls_ups, 1);
    assert_int_equal(h->srv.tls_ups, 1);
    /* Each side saw exactly the plaintext before its upgrade and the TLS after it. */
    assert_int_equal(h->cli.nlines, 2);
    assert_string_equal(h->cli.lines[0], "+OK");
    assert_string_equal(h->cli.lines[1], "PONG");
    assert_int_equal(h->srv.nlines, 2);
    assert_string_equal(h->srv.lines[0], "STLS");
    assert_string_equal(h->srv.lines[1], "PING");
    harness_free(h);
}

static void test_session_resumption(void **state)
{
    struct harness *h = harness_with(state, SC_PING, 0, 1, 1);
    run(h);
    assert_true(h->done);
    assert_false(tls_session_reused(&h->cli.c));
    run(h);
    assert_true(h->done);
    assert_true(tls_session_reused(&h->cli.c));
    run(h);
    assert_true(tls_session_reused(&h->cli.c));
    /* Another name for the same server is another cache entry. */
    h->host = "127.0.0.1";
    run(h);
    assert_true(h->done);
    assert_false(tls_session_reused(&h->cli.c));

    client_ctx(h, ((struct certs *)*state)->ca, 1, 0);   /* resumption off */
    h->host = "localhost";
    run(h);
    run(h);
    assert_true(h->done);
    assert_false(tls_session_reused(&h->cli.c));
    harness_free(h);
}

static void test_eof_after_tls(void **state)
{
    struct harness *h = harness_with(state, SC_PING, 0, 1, 0);
    h->close_after_pong = 1;                     /* close_notify */
    run(h);
    assert_true(h->cli.closed);
    assert_string_equal(h->cli.lines[0], "PONG");
    assert_int_equal(h->cli.err, CE_EOF);
    h->close_after_pong = 2;                     /* FIN without close_notify: still an EOF */
    run(h);
    assert_true(h->cli.closed);
    assert_string_equal(h->cli.lines[0], "PONG");
    assert_int_equal(h->cli.err, CE_EOF);
    harness_free(h);
}

static void test_not_tls(void **state)
{
    struct harness *h = harness_with(state, SC_PLAIN_SERVER, 0, 1, 0);
    expect_tls_failure(h, "localhost", "wrong version number");
    harness_free(h);
}

static void test_hangup_during_handshake(void **state)
{
    struct harness *h = harness_with(state, SC_HANGUP, 0, 1, 0);
    run(h);
    assert_int_equal(h->cli.ups, 0);
    /* Closed, not a TLS failure: the error classes tell overload from bad certificates. */
    assert_true(h->cli.err == CE_EOF || h->cli.err == CE_RESET);
    assert_true(h->cli.errmsg[0]);
    harness_free(h);
}

static void test_ctx_errors(void **state)
{
    const struct certs *k = *state;
    char err[256];
    assert_null(tls_client_ctx("/nonexistent/ca.pem", 1, 0, err, sizeof err));
    assert_string_equal(err, "tls_ca /nonexistent/ca.pem: No such file or directory");
    assert_null(tls_client_ctx(k->key, 1, 0, err, sizeof err));   /* a key is no CA */
    assert_non_null(strstr(err, "tls_ca"));
    assert_null(tls_server_ctx("/nonexistent/cert.pem", k->key, err, sizeof err));
    assert_non_null(strstr(err, "certificate /nonexistent/cert.pem"));
    assert_null(tls_server_ctx(k->chain, k->ca, err, sizeof err));
    assert_non_null(strstr(err, "key"));
    struct tls_ctx *dir = tls_client_ctx(k->dir, 1, 0, err, sizeof err);   /* a directory is accepted */
    assert_non_null(dir);
    tls_ctx_free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verified_handshake),
        cmocka_unit_test(test_ip_literal_verified),
        cmocka_unit_test(test_untrusted_fails),
        cmocka_unit_test(test_untrusted_verify_off),
        cmocka_unit_test(test_hostname_mismatch),
        cmocka_unit_test(test_bulk_both_ways),
        cmocka_unit_test(test_key_updates),
        cmocka_unit_test(test_upgrade_discards_injected),
        cmocka_unit_test(test_session_resumption),
        cmocka_unit_test(test_eof_after_tls),
        cmocka_unit_test(test_not_tls),
        cmocka_unit_test(test_hangup_during_handshake),
        cmocka_unit_test(test_ctx_errors),
    };
    return cmocka_run_group_tests(tests, make_certs, remove_certs);
}
