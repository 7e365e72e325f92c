/* tls: the OpenSSL transport behind struct conn (include/conn.h): implicit TLS and
 * STARTTLS/STLS upgrades, certificate and name verification, and an optional client
 * session cache. Protocol code only chooses when to call tls_start(). */
#ifndef MS_TLS_H
#define MS_TLS_H

#include <stddef.h>

#include "lib/conn.h"

struct tls_ctx;
struct ssl_st;

extern const struct transport transport_tls;

/* ca_file: a PEM file or a hashed directory; NULL or "" = the system store.
 * verify: check the chain and the name given to tls_start (off: anything goes).
 * resume_sessions: keep the last session per server (SNI name + address) and offer
 * it on the next connection. The cache is locked, so several threads may share a
 * ctx; one ctx per worker thread avoids even that lock. NULL with a reason in err. */
struct tls_ctx *tls_client_ctx(const char *ca_file, int verify, int resume_sessions,
                               char *err, size_t errlen);
/* cert_file holds the certificate and then its chain (PEM); key_file its key. */
struct tls_ctx *tls_server_ctx(const char *cert_file, const char *key_file, char *err, size_t errlen);
/* Only once no connection uses it any more. */
void tls_ctx_free(struct tls_ctx *ctx);

/* Implicit TLS: call right after conn_connect() (client: the handshake runs once TCP
 * is up, then CONN_UP) or conn_adopt() (server: then CONN_TLS_UP).
 * Upgrade (STARTTLS/STLS): the client calls it after the server's go-ahead, the
 * server after queueing its go-ahead (sent in the clear before the handshake starts);
 * unread input is discarded (CVE-2021-22947), then CONN_TLS_UP.
 * sni_host (client only) is sent as SNI unless it is an IP literal, and is the name
 * (or address) the certificate must match when verifying; NULL = chain check only.
 * 0, or -1 with c->errmsg set and the connection left as it was. A failed handshake
 * arrives as CONN_CLOSED with c->err = CE_TLS and the reason in c->errmsg, e.g.
 * "certificate verify failed: self-signed certificate in certificate chain". */
int tls_start(struct conn *c, struct tls_ctx *ctx, const char *sni_host, int implicit);

/* 1 when the connection runs over TLS (maybe still handshaking). */
int tls_active(const struct conn *c);
/* 1 when the handshake resumed a cached session. */
int tls_session_reused(const struct conn *c);
/* "TLSv1.3" etc. once the handshake is done; "" otherwise. */
const char *tls_version(const struct conn *c);
/* The OpenSSL object, for anything this API does not cover; NULL without TLS. */
struct ssl_st *tls_ssl(const struct conn *c);

#endif
