/* util: the server's log (syslog-style lines, one write() each so two threads never
 * interleave a line) and its address book (a hash from address to user index, since
 * RCPT is on the hot path and users_find is linear). */
#include "server/util.h"
#include "server/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"

/* The log: two of the project's three mutable globals (DEVELOPERS.md, "Rules the
 * code keeps"): set once at start, read-only afterwards from every thread, reset by
 * srv_log_close at the end. */
static int log_fd = 2;
static char log_ident[64] = "mailsoak-server";

int srv_log_open(const char *path, const char *ident)
{
    snprintf(log_ident, sizeof log_ident, "%s", ident);
    if (!path || !*path)
        return 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    log_fd = fd;
    return 0;
}

void srv_log_close(void)
{
    if (log_fd > 2)
        close(log_fd);
    log_fd = 2;
}

void srv_log(const char *fmt, ...)
{
    char line[1024];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(line, sizeof line, "%b %e %H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof line - n, " localhost %s[%d]: ", log_ident, (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        return;
    n += (size_t)m < sizeof line - n - 1 ? (size_t)m : sizeof line - n - 2;
    line[n++] = '\n';
    if (write(log_fd, line, n) < 0) { /* nowhere left to complain */ }
}

static uint64_t hash_addr(const char *a, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)tolower((unsigned char)a[i])) * 1099511628211ull;
    return h;
}

int srv_book_init(struct srv_book *b, const struct users *u)
{
    b->u = u;
    b->cap = 16;
    while (b->cap < u->n * 2)
        b->cap *= 2;
    b->slot = xmalloc(b->cap * sizeof *b->slot);
    for (size_t i = 0; i < b->cap; i++)
        b->slot[i] = -1;
    for (size_t i = 0; i < u->n; i++) {
        size_t n = strlen(u->v[i].addr);
        if (srv_book_find(b, u->v[i].addr, n) >= 0)
            continue;                /* a repeated address: the first one wins */
        size_t s = hash_addr(u->v[i].addr, n) & (b->cap - 1);
        while (b->slot[s] >= 0)
            s = (s + 1) & (b->cap - 1);
        b->slot[s] = (long)i;
    }
    return 0;
}

long srv_book_find(const struct srv_book *b, const char *addr, size_t len)
{
    size_t s = hash_addr(addr, len) & (b->cap - 1);
    while (b->slot[s] >= 0) {
        const char *a = b->u->v[b->slot[s]].addr;
        if (strlen(a) == len && !strncasecmp(a, addr, len))
            return b->slot[s];
        s = (s + 1) & (b->cap - 1);
    }
    return -1;
}

void srv_book_free(struct srv_book *b)
{
    free(b->slot);
    b->slot = NULL;
}

int srv_users_load(const struct srv_config *cfg, struct users *u, char *err, size_t errlen)
{
    if (cfg->users_file && *cfg->users_file)
        return users_load_file(u, cfg->users_file, err, errlen);
    return users_from_pattern(u, cfg->user_pattern, cfg->user_password ? cfg->user_password : "",
                              (size_t)cfg->user_count, err, errlen);
}
