/* hostport: binding a listening socket and naming where it ended up, for the
 * reference server's listeners and the HTTP endpoints alike. */
#include "lib/hostport.h"

#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

int hostport_listen(const struct addrinfo *ai, int flags, int backlog, char *bound, size_t boundlen)
{
    int type = SOCK_STREAM | SOCK_CLOEXEC | (flags & HOSTPORT_NONBLOCK ? SOCK_NONBLOCK : 0), one = 1;
    int fd = socket(ai->ai_family, type, 0);
    if (fd < 0)
        return -1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        (ai->ai_family == AF_INET6 && (flags & HOSTPORT_V6ONLY) &&
         setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0) ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, backlog) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char h[NI_MAXHOST] = "?", p[NI_MAXSERV] = "?";
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, p, sizeof p, NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(bound, boundlen, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", h, p);
    return fd;
}
