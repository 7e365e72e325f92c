/* queue_sendmail: sendmail's queue: qfID (envelope and headers) and dfID (body) per
 * message, hfID when quarantined, in the queue directory, its qf/ subdirectory or its
 * queue groups; see sendmail's queue.c (queueup, readqf). */
#include "probe/queue_sendmail.h"

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

/* qfID and hfID: a queued and a quarantined message; ids are 7 or more characters. */
int queue_sendmail_qf(const char *name)
{
    size_t n = strlen(name);
    return n >= 9 && (name[0] == 'q' || name[0] == 'h') && name[1] == 'f' && qw_all_alnum(name + 2, n - 2);
}

/* sendmail: the qf file (queue.c's queueup and readqf): one item per line, the first
 * character saying which; R lines are the recipients still to deliver ("R<flags>:
 * address"), H lines the headers ("H?<flags>?Name: value", continued on lines starting
 * with a blank), "." ends the file. */

static int sendmail_read(struct walk *w, int dfd, const char *name)
{
    ssize_t got = qw_read_file(w, dfd, name, EXIM_H_MAX, NULL);
    if (got < 0)
        return errno == ENOENT ? -1 : 0;
    const char *p = w->buf, *end = w->buf + got, *l;
    size_t n;
    int ended = 0;
    w->rcpts_known = 1;
    while ((l = qw_next_line(&p, end, &n))) {
        if (n == 1 && l[0] == '.') {
            ended = 1;
            break;
        }
        if (n > 1 && l[0] == 'R') {
            const char *a = l + 1, *colon = memchr(a, ':', n - 1);
            /* flags are letters; an address without flags has no colon before it */
            if (colon) {
                const char *f = a;
                while (f < colon && isalpha((unsigned char)*f))
                    f++;
                if (f == colon)
                    a = colon + 1;
            }
            qw_rcpt(w, a, (size_t)(l + n - a));
        } else if (n > 1 && l[0] == 'H') {
            const char *h = l + 1, *e = l + n;
            if (*h == '?') {
                const char *q = memchr(h + 1, '?', (size_t)(e - h - 1));
                h = q ? q + 1 : e;
            }
            const char *v;
            size_t vn;
            if (qw_id_header(h, (size_t)(e - h), &v, &vn))
                qw_id(w, v, vn);
        }
    }
    return ended || w->have_id;
}

void queue_sendmail_walk(struct walk *w, DIR *d, int depth)
{
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        unsigned char type = dirs_entry_type(dirfd(d), e);
        if (type == DT_DIR && depth < 2 && strcmp(e->d_name, "df") && strcmp(e->d_name, "xf")) {
            DIR *sub = qw_open_sub(dirfd(d), e->d_name);     /* qf/, or queue groups q1, q2 */
            if (sub) {
                queue_sendmail_walk(w, sub, depth + 1);
                closedir(sub);
            }
        } else if (type == DT_REG && queue_sendmail_qf(e->d_name)) {
            if (!w->deep) {
                w->count++;
                continue;
            }
            qw_begin(w);
            int rc = sendmail_read(w, dirfd(d), e->d_name);
            if (rc >= 0)
                qw_end(w, rc);
        }
    }
}
