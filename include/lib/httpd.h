/* httpd: a small read-only HTTP endpoint over libmicrohttpd, for figures other
 * programs pull (Prometheus scrapes, `mailsoak run` pulling a probe). It knows
 * nothing of either program: a handler gets the path and fills a response.
 * Requests are served on libmicrohttpd's own thread; the handler must only copy
 * what another thread published, never wait for it. */
#ifndef MS_HTTPD_H
#define MS_HTTPD_H

#include <stddef.h>

struct httpd;
struct httpd_request;            /* the connection, for httpd_arg() */

struct httpd_response {
    int status;                  /* 200 unless the handler says otherwise */
    const char *type;            /* Content-Type; a static string */
    char *body;                  /* malloc'd by the handler; the server frees it */
    size_t len;
};

/* Called for every authorised GET or HEAD; path has no query string. */
typedef void (*httpd_fn)(void *ud, const char *path, const struct httpd_request *req,
                         struct httpd_response *out);

/* A query-string argument ("since" of /samples?since=3), or NULL. */
const char *httpd_arg(const struct httpd_request *req, const char *name);

/* Listens on listen ("ADDR:PORT", "[V6ADDR]:PORT" or "PORT", which means
 * 127.0.0.1:PORT; numeric addresses only, port 0 = any free port) and serves until
 * httpd_stop(). With a non-empty token every request must carry "Authorization:
 * Bearer TOKEN" (what Prometheus sends with `authorization: credentials:`) or gets
 * 401. NULL with the reason in err ("ADDR:PORT: Address already in use"). */
struct httpd *httpd_start(const char *listen, const char *token, httpd_fn fn, void *ud,
                          char *err, size_t errlen);
/* The address actually bound, "ADDR:PORT" (the port the kernel chose for 0). */
const char *httpd_address(const struct httpd *h);
/* Stops serving (waits for a request in progress) and frees h; NULL is fine. */
void httpd_stop(struct httpd *h);

#endif
