/* queue_smtpd: OpenSMTPD's queue: queue/XX/MSGID/ holding "message" and an envelope
 * per recipient still to deliver; see smtpd's queue_fs.c and envelope.c. */
#include "probe/queue_smtpd.h"

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

/* OpenSMTPD: queue/XX/MSGID/ (XX: the message id's top byte in hex) holds "message"
 * and one envelope per recipient still to deliver, named by the 16-hex envelope id
 * and written as "key: value" lines (envelope.c); "rcpt" is the RCPT TO address. */

static void smtpd_message(struct walk *w, int bucketfd, const char *msgid)
{
    DIR *d = qw_open_sub(bucketfd, msgid);
    if (!d) {
        if (errno != ENOENT) {
            qw_begin(w);
            qw_end(w, 0);
        }
        return;
    }
    qw_begin(w);
    w->rcpts_known = 1;
    int readable = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, "message")) {
            ssize_t got = qw_read_file(w, dirfd(d), "message", HEADER_BYTES, NULL);
            readable = got >= 0 && qw_rfc822_id(w, w->buf, (size_t)got);
        } else if (strlen(e->d_name) == 16 && qw_all_hex(e->d_name, 16)) {
            ssize_t got = qw_read_file(w, dirfd(d), e->d_name, ENVELOPE_MAX, NULL);
            if (got < 0)
                continue;
            const char *p = w->buf, *end = w->buf + got, *l;
            size_t n;
            while ((l = qw_next_line(&p, end, &n)))
                if (n > 6 && !strncmp(l, "rcpt: ", 6)) {
                    qw_rcpt(w, l + 6, n - 6);
                    break;
                }
        }
    }
    closedir(d);
    qw_end(w, readable);
}

void queue_smtpd_walk(struct walk *w, DIR *d)
{
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strlen(e->d_name) != 2 || !qw_all_hex(e->d_name, 2))
            continue;
        DIR *bucket = qw_open_sub(dirfd(d), e->d_name);
        if (!bucket)
            continue;
        struct dirent *m;
        while ((m = readdir(bucket))) {
            if (strlen(m->d_name) != 8 || !qw_all_hex(m->d_name, 8))
                continue;
            if (w->deep)
                smtpd_message(w, dirfd(bucket), m->d_name);
            else
                w->count++;
        }
        closedir(bucket);
    }
}
