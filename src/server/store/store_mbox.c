/* store_mbox: one mboxrd file per user (STORE_DIR/ADDRESS), LF line ends, "From "
 * lines quoted with '>'. Appends and rewrites hold flock() on the file; a writer
 * that waited for the lock checks it still has the live inode, since an expunge
 * replaces the file by rename (crash safe: the old file stays whole until then).
 * Each message carries a hidden "X-UIDL:" line so UIDL survives expunges. With
 * fsync on, a batch of appends is made durable by one syncfs() before its 250s. */
#include "server/store/store_mbox.h"
#include "server/store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/file.h"

#define PATHMAX 4096

static int mbox_path(const struct srv_backend *b, size_t user, char *out)
{
    return snprintf(out, PATHMAX, "%s/%s", b->dir, b->users->v[user].addr) < PATHMAX ? 0 : -1;
}

struct mb {
    int dirty;                       /* appends of this batch not yet on disk */
    int dirfd;                       /* the store's directory, for syncfs */
};

static int mb_init(struct srv_backend *b, char *err, size_t errlen)
{
    struct mb *m = xcalloc(1, sizeof *m);
    b->priv = m;
    m->dirfd = -1;
    if (srv_mkdirs(b->dir, err, errlen) < 0)
        return -1;
    m->dirfd = srv_open_dir(b->dir, err, errlen);
    return m->dirfd < 0 ? -1 : 0;
}

static void mb_fini(struct srv_backend *b)
{
    struct mb *m = b->priv;
    if (m && m->dirfd >= 0)
        close(m->dirfd);
    free(m);
    b->priv = NULL;
}

static int mb_end(struct srv_backend *b, char *err, size_t errlen)
{
    struct mb *m = b->priv;
    if (!m->dirty)
        return 0;
    m->dirty = 0;
    return srv_syncfs(m->dirfd, b->dir, err, errlen);
}

/* Opens and locks the live file: after the lock, the path must still name our inode. */
static int open_locked(const char *path, int flags, char *err, size_t errlen)
{
    for (int tries = 0; tries < 100; tries++) {
        int fd = open(path, flags | O_CLOEXEC, 0600);
        if (fd < 0) {
            snprintf(err, errlen, "open(%s) failed: %s", path, strerror(errno));
            return -1;
        }
        if (flock(fd, LOCK_EX) < 0) {
            snprintf(err, errlen, "flock(%s) failed: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
            return fd;
        close(fd);                   /* replaced while we waited: take the new one */
    }
    snprintf(err, errlen, "%s keeps being replaced", path);
    return -1;
}

static int is_from_line(const char *p, const char *end)
{
    while (p < end && *p == '>')
        p++;
    return end - p >= 5 && !memcmp(p, "From ", 5);
}

static int mb_deliver(struct srv_backend *b, size_t user, const char *uid, const char *data,
                      size_t len, char *err, size_t errlen)
{
    char path[PATHMAX];
    if (mbox_path(b, user, path) < 0) {
        snprintf(err, errlen, "path too long");
        return -1;
    }
    struct buf m = { 0 };
    char hdr[200];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    size_t hn = strftime(hdr, sizeof hdr, "From MAILER-DAEMON %a %b %e %H:%M:%S %Y\n", &tm);
    hn += (size_t)snprintf(hdr + hn, sizeof hdr - hn, "X-UIDL: %s\n", uid);
    buf_reserve(&m, len + hn + 64);
    buf_append(&m, hdr, hn);
    const char *p = data, *end = data + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *ce = le > p && le[-1] == '\r' && nl ? le - 1 : le;
        if (is_from_line(p, ce))
            buf_append(&m, ">", 1);
        buf_append(&m, p, (size_t)(ce - p));
        buf_append(&m, "\n", 1);
        p = nl ? nl + 1 : end;
    }
    buf_append(&m, "\n", 1);         /* the blank line before the next "From " */
    int fd = open_locked(path, O_WRONLY | O_APPEND | O_CREAT, err, errlen);
    int rc = -1;
    if (fd >= 0) {
        if (srv_write_all(fd, m.p, m.len) < 0) {
            snprintf(err, errlen, "write(%s) failed: %s", path, strerror(errno));
        } else {
            rc = 0;
            ((struct mb *)b->priv)->dirty |= b->fsync;
        }
        close(fd);                   /* releases the lock */
    }
    buf_free(&m);
    return rc;
}

/* Walks the messages of a whole mbox file: fills items with offsets and sizes. */
static void parse(const char *p, size_t n, struct srv_items *out)
{
    size_t pos = 0;
    while (pos < n && n - pos >= 5 && !memcmp(p + pos, "From ", 5)) {
        struct srv_item it = { .key = pos };
        const char *nl = memchr(p + pos, '\n', n - pos);
        if (!nl)
            break;
        size_t c = (size_t)(nl - p) + 1;
        if (n - c >= 8 && !memcmp(p + c, "X-UIDL: ", 8)) {
            const char *ue = memchr(p + c, '\n', n - c);
            if (!ue)
                break;
            size_t ul = (size_t)(ue - p) - c - 8;
            if (ul >= sizeof it.uid)
                ul = sizeof it.uid - 1;
            memcpy(it.uid, p + c + 8, ul);
            c = (size_t)(ue - p) + 1;
        } else {
            snprintf(it.uid, sizeof it.uid, "off%zu", pos);
        }
        /* The message ends where "\n\nFrom " begins; its last LF belongs to it. */
        size_t e = n - 1, next = n;
        const char *q = memmem(p + c - 1, n - (c - 1), "\n\nFrom ", 7);
        if (q) {
            e = (size_t)(q - p) + 1;
            next = e + 1;
        }
        if (e < c)
            e = c;
        it.off = c;
        it.len = e - c;
        uint64_t quoted = 0;
        for (size_t i = c; i < e;) {
            const char *l = memchr(p + i, '\n', e - i);
            size_t le = l ? (size_t)(l - p) : e;
            if (p[i] == '>' && is_from_line(p + i, p + le))
                quoted++;
            i = le + 1;
        }
        it.size = srv_crlf_size(p + c, it.len) - quoted;
        srv_items_add(out, &it);
        pos = next;
    }
}

static int mb_list(struct srv_backend *b, size_t user, struct srv_items *out, char *err, size_t errlen)
{
    char path[PATHMAX];
    struct buf f = { 0 };
    if (mbox_path(b, user, path) < 0) {
        snprintf(err, errlen, "path too long");
        return -1;
    }
    if (file_read(AT_FDCWD, path, 0, &f) < 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "read(%s) failed: %s", path, strerror(errno));
        return -1;
    }
    parse(f.p ? f.p : "", f.len, out);
    buf_free(&f);
    return 0;
}

static int mb_fetch(struct srv_backend *b, size_t user, const struct srv_item *it, struct buf *out,
                    char *err, size_t errlen)
{
    char path[PATHMAX];
    if (mbox_path(b, user, path) < 0) {
        snprintf(err, errlen, "path too long");
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "open(%s) failed: %s", path, strerror(errno));
        return -1;
    }
    char *raw = xmalloc(it->len + 1);
    ssize_t r = pread(fd, raw, it->len, (off_t)it->off);
    close(fd);
    if (r != (ssize_t)it->len) {
        snprintf(err, errlen, "pread(%s) short: message changed under the lock", path);
        free(raw);
        return -1;
    }
    buf_reserve(out, it->len);
    for (size_t i = 0; i < it->len;) {
        const char *nl = memchr(raw + i, '\n', it->len - i);
        size_t le = nl ? (size_t)(nl - raw) + 1 : it->len;
        size_t skip = raw[i] == '>' && is_from_line(raw + i, raw + le) ? 1 : 0;
        buf_append(out, raw + i + skip, le - i - skip);
        i = le;
    }
    free(raw);
    return 0;
}

static int cmp_key(const void *a, const void *b)
{
    const struct srv_item *x = *(const struct srv_item *const *)a, *y = *(const struct srv_item *const *)b;
    return x->key < y->key ? -1 : x->key > y->key;
}

static int mb_expunge(struct srv_backend *b, size_t user, const struct srv_item *const *its, size_t n,
                      char *err, size_t errlen)
{
    char path[PATHMAX], tmp[PATHMAX + 8];
    if (mbox_path(b, user, path) < 0) {
        snprintf(err, errlen, "path too long");
        return -1;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open_locked(path, O_RDWR, err, errlen);
    if (fd < 0)
        return -1;
    struct buf f = { 0 };
    const struct srv_item **sorted = xmalloc(n * sizeof *sorted);
    int rc = -1;
    memcpy(sorted, its, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_key);
    if (file_read(AT_FDCWD, path, 0, &f) < 0) {
        snprintf(err, errlen, "read(%s) failed: %s", path, strerror(errno));
        goto out;
    }
    int tfd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (tfd < 0) {
        snprintf(err, errlen, "open(%s) failed: %s", tmp, strerror(errno));
        goto out;
    }
    size_t pos = 0;
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        size_t s = sorted[i]->key, e = sorted[i]->off + sorted[i]->len + 1;
        if (s < pos || e > f.len || memcmp(f.p + s, "From ", 5)) {
            snprintf(err, errlen, "%s changed under the lock (message %s)", path, sorted[i]->uid);
            bad = 1;
            break;
        }
        bad = srv_write_all(tfd, f.p + pos, s - pos) < 0;
        pos = e;
    }
    if (!bad)
        bad = srv_write_all(tfd, f.p + pos, f.len - pos) < 0 || (b->fsync && fsync(tfd) < 0);
    close(tfd);
    if (bad || rename(tmp, path) < 0) {
        if (!err[0])
            snprintf(err, errlen, "rewrite of %s failed: %s", path, strerror(errno));
        unlink(tmp);
        goto out;
    }
    if (b->fsync)
        srv_fsync_dir(b->dir);
    rc = 0;
out:
    free(sorted);
    buf_free(&f);
    close(fd);
    return rc;
}

const struct srv_backend_ops srv_store_mbox = {
    .name = "mbox", .init = mb_init, .fini = mb_fini, .end = mb_end,
    .deliver = mb_deliver,
    .list = mb_list, .fetch = mb_fetch, .expunge = mb_expunge,
};
