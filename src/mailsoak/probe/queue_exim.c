/* queue_exim: Exim's queue: input/ID-H (envelope, recipients, headers) and ID-D per
 * message, input/X/ with split_spool_directory, ID-J for deliveries in progress; see
 * the spec's chapter "Format of spool files" and src/spool_in.c, spool_out.c. */
#include "probe/queue_exim.h"

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

/* "1xXxvJ-00059h-07" (Exim 4.96) or "1xXxvJ-00000059h-07Ab" (4.97 on), then suffix. */
int queue_exim_file(const char *name, char suffix)
{
    size_t n = strlen(name);
    if (n < 3 || name[n - 2] != '-' || name[n - 1] != suffix)
        return 0;
    n -= 2;
    if (!(n == 16 || n == 23) || name[6] != '-' || name[n == 16 ? 13 : 18] != '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && name[i] != '-')
            return 0;
    return 1;
}

/* Exim: the -H file (spec chapter "Format of spool files", src/spool_in.c). */

/* A recipient line: the address, then optionally more fields, read from the right as
 * spool_in.c does: "<address> <d>,<d>,<d>" (Exim 3), "<address> <pno>" (early Exim 4),
 * "<address> <orcpt> <len>,<dsn> <errors_to> <len>,<pno>#<flags>" (spool_out.c).
 * Returns the address's length. */
static size_t exim_rcpt_len(const char *s, size_t n)
{
    long i = (long)n - 1;
    while (i > 0 && isdigit((unsigned char)s[i]))
        i--;
    if (i <= 0)
        return n;
    if (s[i] == ',') {
        do
            i--;
        while (i > 0 && (isdigit((unsigned char)s[i]) || s[i] == ','));
        return s[i] == ' ' ? (size_t)i : n;
    }
    if (s[i] == ' ')
        return (size_t)i;
    if (s[i] != '#')
        return n;
    int flags = atoi(s + i + 1);
    for (int bit = 1; bit <= 2; bit <<= 1) {
        if (flags & bit) {
            /* step left over "<len>,<n>" to the blank before it, then over the field */
            do
                i--;
            while (i > 0 && (isdigit((unsigned char)s[i]) || s[i] == ',' || s[i] == '-'));
            long len = atol(s + i + 1);
            if (len < 0 || len > i)
                return n;
            i -= len;
        }
        i--;                        /* the blank that ends the previous field */
    }
    return i > 0 ? (size_t)i : n;
}

static int exim_read(struct walk *w, int dfd, const char *name)
{
    int too_big = 0;
    ssize_t got = qw_read_file(w, dfd, name, EXIM_H_MAX, &too_big);
    if (got < 0)
        return errno == ENOENT ? -1 : 0;
    if (too_big)
        return 0;
    const char *p = w->buf, *end = w->buf + got, *l;
    size_t n;
    for (int i = 0; i < 4; i++)         /* name, user uid gid, <sender>, time count */
        if (!qw_next_line(&p, end, &n))
            return 0;
    /* Options: "-name value"; -aclc/-aclm/-acl are followed by <len> bytes and a newline. */
    for (;;) {
        const char *save = p;
        if (!(l = qw_next_line(&p, end, &n)))
            return 0;
        if (l[0] != '-') {
            p = save;
            break;
        }
        const char *var = l + 1 + (n > 1 && l[1] == '-');
        if (*var == '(') {
            const char *close = memchr(var, ')', (size_t)(l + n - var));
            var = close ? close + 1 : l + n;
        }
        if (l + n - var > 4 && (!strncmp(var, "aclc ", 5) || !strncmp(var, "aclm ", 5) ||
                                !strncmp(var, "acl ", 4))) {
            const char *sp = l + n;
            while (sp > var && sp[-1] != ' ')
                sp--;
            long len = atol(sp);
            if (len < 0 || len + 1 > end - p)
                return 0;
            p += len + 1;
        }
    }
    /* The non-recipients tree: "XX", or nodes "<left Y|N><right Y|N> address". */
    size_t pending = 1;
    const char *done_start = p;
    size_t ndone = 0;
    while (pending) {
        if (!(l = qw_next_line(&p, end, &n)))
            return 0;
        pending--;
        if (n == 2 && !strncmp(l, "XX", 2) && ndone == 0)
            break;
        if (n < 4 || (l[0] != 'Y' && l[0] != 'N') || (l[1] != 'Y' && l[1] != 'N'))
            return 0;
        pending += (l[0] == 'Y') + (l[1] == 'Y');
        ndone++;
    }
    const char *done_end = p;
    if (!(l = qw_next_line(&p, end, &n)))
        return 0;
    long count = atol(l);
    if (count < 0 || count > 16384)
        return 0;
    for (long i = 0; i < count; i++) {
        if (!(l = qw_next_line(&p, end, &n)))
            return 0;
        qw_rcpt(w, l, exim_rcpt_len(l, n));
    }
    w->rcpts_known = 1;
    /* Delivered: the tree's addresses, and the journal of an attempt in progress. */
    const char *q = done_start;
    while (ndone && (l = qw_next_line(&q, done_end, &n)) && n >= 3) {
        char a[ADDR_MAX + 1];
        size_t an = n - 3 < ADDR_MAX ? n - 3 : ADDR_MAX;
        memcpy(a, l + 3, an);
        a[an] = 0;
        qw_unrcpt(w, a);
    }
    if (!(l = qw_next_line(&p, end, &n)) || n != 0)
        return 0;
    /* Headers: "<length><flag> text", length counting every byte of the text. */
    while (p < end) {
        char *num_end;
        long len = strtol(p, &num_end, 10);
        if (num_end == p || num_end >= end || len < 0)
            return 0;
        char flag = *num_end;
        const char *text = num_end + 1;
        while (text < end && (*text == ' ' || *text == '\t' || *text == '\n'))
            text++;
        if (len > end - text)
            return 0;
        const char *v;
        size_t vn;
        if (flag != '*' && qw_id_header(text, (size_t)len, &v, &vn)) {
            const char *nl = memchr(v, '\n', vn);
            qw_id(w, v, nl ? (size_t)(nl - v) : vn);
        }
        p = text + len;
    }
    return 1;
}

/* ID-J: one delivered address per line (or "address/transport" for homonyms). */
static void exim_journal(struct walk *w, int dfd, const char *hname)
{
    char jname[64];
    size_t n = strlen(hname);
    if (n >= sizeof jname)
        return;
    memcpy(jname, hname, n + 1);
    jname[n - 1] = 'J';
    ssize_t got = qw_read_file(w, dfd, jname, ENVELOPE_MAX, NULL);
    if (got <= 0)
        return;
    char *p = w->buf;
    for (char *nl; (nl = strchr(p, '\n')); p = nl + 1) {
        *nl = 0;
        qw_unrcpt(w, p);
    }
}

void queue_exim_walk(struct walk *w, DIR *d, int depth)
{
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        unsigned char type = dirs_entry_type(dirfd(d), e);
        if (type == DT_DIR && depth == 0 && strlen(e->d_name) == 1) {
            DIR *sub = qw_open_sub(dirfd(d), e->d_name);     /* split_spool_directory */
            if (sub) {
                queue_exim_walk(w, sub, 1);
                closedir(sub);
            }
        } else if (type == DT_REG && queue_exim_file(e->d_name, 'H')) {
            if (!w->deep) {
                w->count++;
                continue;
            }
            qw_begin(w);
            int rc = exim_read(w, dirfd(d), e->d_name);
            if (rc > 0)
                exim_journal(w, dirfd(d), e->d_name);
            if (rc >= 0)
                qw_end(w, rc);
        }
    }
}
