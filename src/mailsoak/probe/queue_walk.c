/* queue_walk: the helpers every queue format reader uses: the message being read
 * (its id, its recipients, the totals and the caller's function), bounded file
 * reads, header matching, names. */
#include "probe/queue_walk.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "probe/dirs.h"

/* Names */

int qw_all_alnum(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]))
            return 0;
    return 1;
}

int qw_all_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

/* The configured directory may be a link (/var/spool/postfix often is); below it,
 * nothing is followed. */
DIR *qw_open_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    return d;
}

DIR *qw_open_sub(int dfd, const char *name)
{
    int fd = dirs_open_at(dfd, name);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    return d;
}

void qw_begin(struct walk *w)
{
    w->have_id = 0;
    w->idlen = 0;
    w->rcpts_known = 0;
    w->too_many = 0;
    w->alen = 0;
    w->naddr = 0;
}

void qw_id(struct walk *w, const char *v, size_t n)
{
    while (n && (*v == ' ' || *v == '\t'))
        v++, n--;
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r' || v[n - 1] == '\n'))
        n--;
    if (w->have_id || n > ID_MAX)
        return;                     /* the first one counts, as for the readers */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < ' ' || (unsigned char)v[i] >= 127)
            return;                 /* ours are printable ASCII: this is not one */
    memcpy(w->id, v, n);
    w->id[n] = 0;
    w->idlen = n;
    w->have_id = 1;
}

void qw_rcpt(struct walk *w, const char *a, size_t n)
{
    w->rcpts_known = 1;
    w->t->recipients++;
    if (w->naddr == RCPTS_LISTED) {
        w->too_many = 1;
        return;
    }
    while (n && (*a == ' ' || *a == '\t'))
        a++, n--;
    while (n && (a[n - 1] == ' ' || a[n - 1] == '\t' || a[n - 1] == '\r' || a[n - 1] == '\n'))
        n--;
    if (n >= 2 && a[0] == '<' && a[n - 1] == '>')
        a++, n -= 2;
    if (n > ADDR_MAX)
        n = ADDR_MAX;
    w->addrs = grow(w->addrs, &w->acap, w->alen, n + 1, 1);
    w->aoff = grow(w->aoff, &w->aoffcap, w->naddr, 1, sizeof *w->aoff);
    memcpy(w->addrs + w->alen, a, n);
    w->addrs[w->alen + n] = 0;
    w->aoff[w->naddr++] = w->alen;
    w->alen += n + 1;
}

/* A recipient the layout lists as still to deliver, found delivered elsewhere. */
void qw_unrcpt(struct walk *w, const char *a)
{
    for (size_t i = 0; i < w->naddr; i++)
        if (!strcasecmp(w->addrs + w->aoff[i], a)) {
            memmove(&w->aoff[i], &w->aoff[i + 1], (w->naddr - i - 1) * sizeof *w->aoff);
            w->naddr--;
            w->t->recipients--;
            return;
        }
}

void qw_end(struct walk *w, int readable)
{
    struct queue_totals *t = w->t;
    t->messages++;
    if (!readable) {
        t->unreadable++;
        w->have_id = 0;
        w->rcpts_known = 0;
    }
    if (!w->rcpts_known)
        t->no_recipients++;
    if (w->have_id)
        t->with_id++;
    if (!w->fn)
        return;
    w->rcpts = grow(w->rcpts, &w->rcap, 0, w->naddr + 1, sizeof *w->rcpts);
    for (size_t i = 0; i < w->naddr; i++)
        w->rcpts[i] = w->addrs + w->aoff[i];
    struct queue_msg m = {
        .id = w->have_id ? w->id : NULL,
        .idlen = w->have_id ? w->idlen : 0,
        .rcpts = w->rcpts,
        .nrcpts = w->naddr,
        .rcpts_known = w->rcpts_known && !w->too_many,
    };
    w->fn(w->ctx, &m);
}

/* Up to max bytes of a file into w->buf (NUL-terminated); -1 if it cannot be read
 * (errno ENOENT: it went away meanwhile). too_big: the file holds more than max. */
ssize_t qw_read_file(struct walk *w, int dfd, const char *name, size_t max, int *too_big)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    w->buf = grow(w->buf, &w->bcap, 0, max + 1, 1);
    size_t got = 0;
    while (got < max) {
        ssize_t n = read(fd, w->buf + got, max - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            close(fd);
            return -1;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    char extra;
    if (too_big)
        *too_big = got == max && read(fd, &extra, 1) == 1;
    close(fd);
    w->buf[got] = 0;
    return (ssize_t)got;
}

/* Whether line (n bytes) is the header "X-Mailsoak-Id:"; v is its value. */
int qw_id_header(const char *line, size_t n, const char **v, size_t *vn)
{
    static const char name[] = "X-Mailsoak-Id:";
    size_t k = sizeof name - 1;
    if (n < k || strncasecmp(line, name, k))
        return 0;
    *v = line + k;
    *vn = n - k;
    return 1;
}

/* Whether the text starts like a message: a header field ("Name:", the name printable
 * ASCII without blanks) or an mbox "From " line. A compressed or encrypted queue file
 * does not, and must not pass for foreign mail: it may be one of ours. */
static int starts_like_message(const char *p, size_t n)
{
    if (n >= 5 && !memcmp(p, "From ", 5))
        return 1;
    size_t i = 0;
    while (i < n && p[i] > ' ' && p[i] < 127 && p[i] != ':')
        i++;
    return i > 0 && i < n && p[i] == ':';
}

int qw_rfc822_id(struct walk *w, const char *p, size_t n)
{
    if (!starts_like_message(p, n))
        return 0;
    const char *end = p + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (len && p[len - 1] == '\r')
            len--;
        if (len == 0)
            break;                  /* end of the headers */
        const char *v;
        size_t vn;
        if (qw_id_header(p, len, &v, &vn))
            qw_id(w, v, vn);
        if (!nl)
            break;
        p = nl + 1;
    }
    return 1;
}

/* The next line of [*p, end): returns its start, sets *n to its length without the
 * newline and moves *p past it; NULL at the end. */
const char *qw_next_line(const char **p, const char *end, size_t *n)
{
    if (*p >= end)
        return NULL;
    const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
    *n = nl ? (size_t)(nl - s) : (size_t)(end - s);
    *p = nl ? nl + 1 : end;
    return s;
}
