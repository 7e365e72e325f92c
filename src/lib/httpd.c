/* httpd: the read-only HTTP endpoint (see httpd.h). libmicrohttpd parses HTTP and
 * runs its own thread; we bind the listening socket ourselves, so that a port in
 * use or a bad address is reported with its reason (libmicrohttpd only says that
 * it could not start) and so that port 0 tells us which port it got. */
#include "lib/httpd.h"
#include "lib/alloc.h"
#include "lib/hostport.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
    MAX_CONNECTIONS = 32,        /* a few scrapers and pullers, not a web server */
    IDLE_TIMEOUT_S = 30,         /* a stalled client loses its slot */
};

struct httpd {
    struct MHD_Daemon *d;
    httpd_fn fn;
    void *ud;
    char *token;
    char address[128];
};

const char *httpd_arg(const struct httpd_request *req, const char *name)
{
    return MHD_lookup_connection_value((struct MHD_Connection *)req, MHD_GET_ARGUMENT_KIND, name);
}

/* Comparison in time independent of where the strings first differ. */
static int token_ok(const char *want, const char *got)
{
    static const char bearer[] = "Bearer ";
    if (!got || strncmp(got, bearer, sizeof bearer - 1))
        return 0;
    got += sizeof bearer - 1;
    size_t n = strlen(want), m = strlen(got);
    unsigned char diff = n != m;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(want[i] ^ (i < m ? got[i] : 0));
    return !diff;
}

static enum MHD_Result send_reply(struct MHD_Connection *c, int status, const char *type, char *body,
                                  size_t len, int auth_challenge)
{
    if (!body) {
        status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        type = "text/plain; charset=utf-8";
        body = NULL;
        len = 0;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (auth_challenge)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
    struct httpd *h = cls;
    static const char text[] = "text/plain; charset=utf-8";
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
        return send_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, text, xstrdup("GET only\n"), 9, 0);
    if (h->token && !token_ok(h->token, MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                                   MHD_HTTP_HEADER_AUTHORIZATION)))
        return send_reply(c, MHD_HTTP_UNAUTHORIZED, text, xstrdup("a token is required\n"), 20, 1);
    struct httpd_response r = { .status = MHD_HTTP_OK, .type = text };
    h->fn(h->ud, url, (const struct httpd_request *)c, &r);
    return send_reply(c, r.status, r.type, r.body, r.len, 0);
}

/* "ADDR:PORT", "[V6]:PORT" or "PORT" (on 127.0.0.1) into a host and a port number. */
static int split_listen(const char *spec, char *host, size_t hostlen, char *port, size_t portlen)
{
    if (spec[0] && strspn(spec, "0123456789") == strlen(spec)) {
        snprintf(host, hostlen, "127.0.0.1");
        snprintf(port, portlen, "%s", spec);
    } else if (hostport_split(spec, host, hostlen, port, portlen) < 0 || !host[0]) {
        return -1;
    }
    return strspn(port, "0123456789") == strlen(port) && atoi(port) <= 65535 ? 0 : -1;
}

static int listen_on(const char *spec, char *address, size_t addrlen, char *err, size_t errlen)
{
    char host[64], port[16];
    if (split_listen(spec, host, sizeof host, port, sizeof port) < 0) {
        snprintf(err, errlen, "'%s': expected ADDR:PORT, [IPV6]:PORT or PORT", spec);
        return -1;
    }
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE },
                    *ai;
    int rc = getaddrinfo(host, port, &hints, &ai);
    if (rc) {
        snprintf(err, errlen, "'%s': not a numeric address and port (%s)", spec, gai_strerror(rc));
        return -1;
    }
    int fd = hostport_listen(ai, HOSTPORT_V6ONLY, 64, address, addrlen);
    if (fd < 0)
        snprintf(err, errlen, "%s: %s", spec, strerror(errno));
    freeaddrinfo(ai);
    return fd;
}

struct httpd *httpd_start(const char *listen, const char *token, httpd_fn fn, void *ud, char *err, size_t errlen)
{
    struct httpd *h = xcalloc(1, sizeof *h);
    h->fn = fn;
    h->ud = ud;
    if (token && token[0])
        h->token = xstrdup(token);
    int fd = listen_on(listen, h->address, sizeof h->address, err, errlen);
    if (fd < 0) {
        httpd_stop(h);
        return NULL;
    }
    h->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request, h,
                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S, MHD_OPTION_END);
    if (!h->d) {
        snprintf(err, errlen, "%s: libmicrohttpd could not start", h->address);
        close(fd);
        httpd_stop(h);
        return NULL;
    }
    return h;
}

const char *httpd_address(const struct httpd *h)
{
    return h->address;
}

void httpd_stop(struct httpd *h)
{
    if (!h)
        return;
    if (h->d)
        MHD_stop_daemon(h->d);   /* closes the listening socket too */
    free(h->token);
    free(h);
}
