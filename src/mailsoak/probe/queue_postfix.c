/* queue_postfix: Postfix's queue: one file per message in incoming, active, deferred,
 * hold and maildrop (hashed subdirectories), written as records; see Postfix's
 * src/global/record.c, rec_type.h and qmgr_message.c. */
#include "probe/queue_postfix.h"

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

enum {
    PF_LINE = 1024,                 /* of a Postfix header record, what is kept */
    PF_JUMPS = 10000,               /* pointer records followed per file (Postfix's limit) */
    RR_BUF = 16 * 1024,
};

/* Short ids are hex, long ids (enable_long_queue_ids) base 52 plus digits. */
static int postfix_id(const char *name)
{
    size_t n = strlen(name);
    return n >= 6 && qw_all_alnum(name, n);
}

/* Postfix: queue files are records (type byte, length in 7-bit groups, data); see
 * src/global/record.c and rec_type.h. Recipients still to deliver are R records
 * (D when done, '/' when cancelled), each after its O (original recipient); the
 * message content starts at M, headers are N records (L for the first parts of a
 * long line) up to an empty N; p records point elsewhere in the file (edits). */

struct rec_reader {
    int fd;
    off_t pos, bstart;
    size_t blen;
    unsigned char buf[RR_BUF];
};

static int rr_byte(struct rec_reader *r)
{
    if (r->pos < r->bstart || r->pos >= r->bstart + (off_t)r->blen) {
        ssize_t n;
        do
            n = pread(r->fd, r->buf, sizeof r->buf, r->pos);
        while (n < 0 && errno == EINTR);
        if (n <= 0)
            return -1;
        r->bstart = r->pos;
        r->blen = (size_t)n;
    }
    return r->buf[r->pos++ - r->bstart];
}

/* One record: its type, and up to cap bytes of its data in out (the rest skipped).
 * Returns the type, -1 at the end of the file or on a malformed record. */
static int rec_get(struct rec_reader *r, char *out, size_t cap, size_t *len)
{
    int type = rr_byte(r);
    if (type < 0)
        return -1;
    size_t n = 0;
    for (unsigned shift = 0;; shift += 7) {
        int b = rr_byte(r);
        if (b < 0 || shift > 28)
            return -1;
        n |= (size_t)(b & 0177) << shift;
        if (!(b & 0200))
            break;
    }
    size_t keep = n < cap ? n : cap;
    for (size_t i = 0; i < keep; i++) {
        int b = rr_byte(r);
        if (b < 0)
            return -1;
        out[i] = (char)b;
    }
    r->pos += (off_t)(n - keep);
    *len = keep;
    return type;
}

static int postfix_read(struct walk *w, int dfd, const char *name)
{
    struct rec_reader *r = xcalloc(1, sizeof *r);
    r->fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (r->fd < 0) {
        int gone = errno == ENOENT;
        free(r);
        return gone ? -1 : 0;
    }
    enum { ENVELOPE, HEADERS, BODY, EXTRACTED } seg = ENVELOPE;
    char data[PF_LINE + 1], orig[ADDR_MAX + 1], line[PF_LINE + 1];
    size_t len, linelen = 0;
    int have_orig = 0, jumps = 0, complete = 0, type;
    long content_size = 0, data_offset = 0;
    while ((type = rec_get(r, data, PF_LINE, &len)) >= 0) {
        data[len] = 0;
        if (type == 'p') {
            long to = strtol(data, NULL, 10);
            if (to > 0) {
                if (++jumps > PF_JUMPS)
                    break;
                r->pos = to;
            }
            continue;
        }
        if (type == 'E') {
            complete = 1;
            break;
        }
        if (type == 'C' && seg == ENVELOPE) {
            char *end;
            content_size = strtol(data, &end, 10);
            data_offset = strtol(end, NULL, 10);
        } else if (type == 'M') {
            seg = HEADERS;
            if (!data_offset)
                data_offset = (long)r->pos;
        } else if (type == 'X') {
            seg = EXTRACTED;
        } else if (seg == HEADERS && (type == 'N' || type == 'L')) {
            size_t room = PF_LINE - linelen;
            memcpy(line + linelen, data, len < room ? len : room);
            linelen += len < room ? len : room;
            if (type == 'L')
                continue;
            if (linelen == 0) {
                /* End of the headers: the body is data_offset + content_size long, then X.
                 * A jump, as a p record's: one back to an earlier M would read the same
                 * headers for ever, so it counts against the same limit. */
                seg = BODY;
                if (content_size > 0 && data_offset > 0) {
                    if (jumps++ >= PF_JUMPS)
                        break;
                    r->pos = (off_t)data_offset + content_size;
                }
                continue;
            }
            const char *v;
            size_t vn;
            if (qw_id_header(line, linelen, &v, &vn))
                qw_id(w, v, vn);
            linelen = 0;
        } else if (seg == ENVELOPE || seg == EXTRACTED) {
            if (type == 'O') {
                memcpy(orig, data, len < ADDR_MAX ? len : ADDR_MAX);
                orig[len < ADDR_MAX ? len : ADDR_MAX] = 0;
                have_orig = 1;
            } else if (type == 'R') {
                /* The address the client gave (O) is the one mailsoak knows. */
                if (have_orig)
                    qw_rcpt(w, orig, strlen(orig));
                else
                    qw_rcpt(w, data, len);
                have_orig = 0;
            } else if (type == 'D' || type == '/') {
                have_orig = 0;
                w->rcpts_known = 1;
            }
        }
    }
    close(r->fd);
    free(r);
    return complete || w->have_id ? 1 : 0;
}

/* A set of queue ids (file names), open addressing: a scan reads each message once. */
struct pf_ids {
    char **v;
    size_t cap, n;
};

static size_t ids_slot(const struct pf_ids *s, const char *id)
{
    size_t h = 5381;
    for (const char *p = id; *p; p++)
        h = h * 33 + (unsigned char)*p;
    size_t i = h & (s->cap - 1);
    while (s->v[i] && strcmp(s->v[i], id))
        i = (i + 1) & (s->cap - 1);
    return i;
}

static int ids_has(const struct pf_ids *s, const char *id)
{
    return s->cap && s->v[ids_slot(s, id)] != NULL;
}

static int ids_add(struct pf_ids *s, const char *id)
{
    if (2 * (s->n + 1) > s->cap) {
        struct pf_ids bigger = { xcalloc(s->cap ? 2 * s->cap : 64, sizeof (char *)), s->cap ? 2 * s->cap : 64, 0 };
        for (size_t i = 0; i < s->cap; i++)
            if (s->v[i]) {
                bigger.v[ids_slot(&bigger, s->v[i])] = s->v[i];
                bigger.n++;
            }
        free(s->v);
        *s = bigger;
    }
    size_t i = ids_slot(s, id);
    if (s->v[i])
        return 0;
    s->v[i] = xstrdup(id);
    s->n++;
    return 1;
}

/* Deleting from open addressing: the entries after it in its run are put back. */
static void ids_del(struct pf_ids *s, const char *id)
{
    if (!s->cap)
        return;
    size_t i = ids_slot(s, id);
    if (!s->v[i])
        return;
    free(s->v[i]);
    s->v[i] = NULL;
    s->n--;
    for (size_t j = (i + 1) & (s->cap - 1); s->v[j]; j = (j + 1) & (s->cap - 1)) {
        char *k = s->v[j];
        s->v[j] = NULL;
        s->v[ids_slot(s, k)] = k;
    }
}

static void ids_free(struct pf_ids *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->v[i]);
    free(s->v);
}

/* Incoming and maildrop files count once their writer set the owner execute bit. */
static int postfix_ready(int dfd, const char *name)
{
    struct stat st;
    return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
           (st.st_mode & S_IRWXU) == S_IRWXU;
}

void queue_postfix_walk(struct walk *w, DIR *d, int depth, int ready_check)
{
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        unsigned char type = dirs_entry_type(dirfd(d), e);
        if (type == DT_DIR && depth < 3) {
            /* hash_queue_depth is at most 3 levels of one-character names */
            DIR *sub = qw_open_sub(dirfd(d), e->d_name);
            if (sub) {
                queue_postfix_walk(w, sub, depth + 1, ready_check);
                closedir(sub);
            }
        } else if (type == DT_REG && postfix_id(e->d_name)) {
            if (ready_check && !postfix_ready(dirfd(d), e->d_name))
                continue;
            if (!w->deep) {
                w->count++;
                continue;
            }
            if (w->pf_vanished && !ids_has(w->pf_vanished, e->d_name))
                continue;           /* the last pass looks for the vanished only */
            if (w->pf_seen && !ids_add(w->pf_seen, e->d_name))
                continue;           /* read already, in the queue it moved from */
            qw_begin(w);
            int rc = postfix_read(w, dirfd(d), e->d_name);
            if (rc >= 0) {
                qw_end(w, rc);
            } else if (w->pf_seen) {
                /* moved (or delivered) between listing and opening: looked for again */
                ids_del(w->pf_seen, e->d_name);
                ids_add(w->pf_gone, e->d_name);
            }
        }
    }
}

static void scan_dir(struct walk *w, const char *dir, int ready_check)
{
    DIR *d = qw_open_path(dir);
    if (!d)
        return;
    queue_postfix_walk(w, d, 0, ready_check);
    closedir(d);
}

/* qmgr moves files incoming -> active, deferred <-> active, hold -> active or deferred.
 * Listed in the order incoming, maildrop, hold, deferred, active, deferred again, a
 * message that moves once during the scan is listed in one queue or the other; the
 * ids already read are skipped, and one that vanished between listing and reading is
 * looked for in every queue once more at the end. */
void queue_postfix_scan(struct walk *w, char *const *dirs, const unsigned char *ready_check, size_t n)
{
    static const char *const order[] = { "incoming", "maildrop", "hold", "deferred", "active", "deferred" };
    struct pf_ids seen = { 0 }, gone = { 0 };
    w->pf_seen = &seen;
    w->pf_gone = &gone;
    char base[64];
    unsigned char *done = xcalloc(n ? n : 1, 1);
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        for (size_t i = 0; i < n; i++) {
            const char *slash = strrchr(dirs[i], '/');
            snprintf(base, sizeof base, "%s", slash ? slash + 1 : dirs[i]);
            if (!strcmp(base, order[k])) {
                scan_dir(w, dirs[i], ready_check[i]);
                done[i] = 1;
            }
        }
    for (size_t i = 0; i < n; i++)      /* a queue directory of another name */
        if (!done[i])
            scan_dir(w, dirs[i], ready_check[i]);
    if (gone.n) {
        w->pf_vanished = &gone;
        for (size_t i = 0; i < n; i++)
            scan_dir(w, dirs[i], ready_check[i]);
        w->pf_vanished = NULL;
    }
    w->pf_seen = w->pf_gone = NULL;
    free(done);
    ids_free(&seen);
    ids_free(&gone);
}
