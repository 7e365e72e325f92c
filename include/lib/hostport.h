/* hostport: "HOST:PORT" and "[IPV6]:PORT" cut into host and port, the one way
 * both programs read an address (the server's listeners, run --metrics, the
 * probe). The host may come out empty (":2525"); what that means is the caller's.
 * And hostport_listen, the one way they bind one. */
#ifndef MS_HOSTPORT_H
#define MS_HOSTPORT_H

#include <netdb.h>
#include <stdio.h>
#include <string.h>

/* 0, or -1 when there is no port (or an unclosed '['). */
static inline int hostport_split(const char *spec, char *host, size_t hn, char *port, size_t pn)
{
    const char *colon;
    if (spec[0] == '[') {
        const char *end = strchr(spec, ']');
        if (!end || end[1] != ':')
            return -1;
        snprintf(host, hn, "%.*s", (int)(end - spec - 1), spec + 1);
        colon = end + 1;
    } else {
        colon = strrchr(spec, ':');
        if (!colon)
            return -1;
        snprintf(host, hn, "%.*s", (int)(colon - spec), spec);
    }
    snprintf(port, pn, "%s", colon + 1);
    return *port ? 0 : -1;
}

enum { HOSTPORT_NONBLOCK = 1, HOSTPORT_V6ONLY = 2 };

/* A TCP socket bound to ai's address (SO_REUSEADDR, close-on-exec; flags add
 * non-blocking and, for IPv6, v6-only) and listening with backlog; where it ended
 * up (port 0 takes a free one) as "HOST:PORT" or "[V6]:PORT" in bound. The
 * descriptor, or -1 with errno set. */
int hostport_listen(const struct addrinfo *ai, int flags, int backlog, char *bound, size_t boundlen);

#endif
