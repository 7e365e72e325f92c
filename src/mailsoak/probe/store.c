/* store: walks the server's mail store and counts its messages and bytes, by the
 * layout each directory shows (or the one server.store_format names): maildir, mbox,
 * sdbox, mdbox (dbox.c replays the index). A walk reads only what changed since the
 * last: a directory whose times did not change since a listing it could trust is not
 * listed again (a maildir's cur/ and new/ keep their counts with their listing: mail
 * in a maildir is never rewritten in place), an mbox file or a dbox mailbox whose
 * files did not change keeps the count it had. A walk of a large quiet store is one
 * lstat per directory. */
#include "probe/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "probe/dbox.h"
#include "probe/dirs.h"

/* A file or directory seen by the store walk, remembered with what counting it gave. */
struct stamp {
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
};

struct cached {
    dev_t dev;                  /* the mbox file, or the dbox-Mails directory */
    ino_t ino;
    struct stamp key[3];        /* mbox: the file; dbox: index, log, log.2 */
    uint64_t messages;
};

struct cache {
    struct cached *v;
    size_t n, cap;
};

/* A directory as a walk listed it. Its times are those before the listing, so any
 * change during or after it shows in them; the listing is trusted only when they were
 * older than the walk by more than a file system's timestamp granularity (a change in
 * the same tick as the times we saw could leave them as they were). */
struct listing {
    dev_t dev;
    ino_t ino;
    int64_t mtime_ns, ctime_ns;
    int trusted;
    int maildir;                /* it has cur/ and new/ */
    uint64_t messages, bytes;   /* a maildir's cur/ or new/: its messages */
    char *names;                /* anything else: 'd' (subdirectory) or 'f' (a file to look at), name, NUL */
    size_t len;
};

struct listings {
    struct listing *v;
    size_t n, cap;
};

enum { TRUST_AFTER_NS = 2000000000 };   /* covers 1 s and 2 s timestamp granularities */

struct store {
    enum store_format fmt;
    struct cache mbox_cache, dbox_cache;    /* the last walk's counts, sorted by inode */
    struct listings dirs;                   /* the last walk's listings, sorted by inode */
};

struct walk {
    struct store *st;
    struct cache mbox, dbox;    /* this walk's entries, replacing the store's */
    struct listings dirs;
    int64_t now_ns;             /* CLOCK_REALTIME when the walk began */
    char path[4096];            /* of the directory being walked */
    char why[512];              /* the first file that could not be read, and why */
    uint64_t messages, bytes;
};

static struct stamp stamp_of(const struct stat *st)
{
    return (struct stamp){ st->st_dev, st->st_ino, st->st_size,
                           (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec };
}

static int same_stamps(const struct stamp *a, const struct stamp *b, int n)
{
    return !memcmp(a, b, (size_t)n * sizeof *a);
}

static int by_inode(const void *a, const void *b)
{
    const struct cached *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return (x->ino > y->ino) - (x->ino < y->ino);
}

/* The last walk's count for this inode, if none of its files changed since. The
 * cache is sorted by inode at the end of each walk. */
static const struct cached *cache_find(const struct cache *cache, dev_t dev, ino_t ino,
                                       const struct stamp *key, int n)
{
    struct cached probe = { .dev = dev, .ino = ino };
    const struct cached *e = cache->n ? bsearch(&probe, cache->v, cache->n, sizeof *cache->v, by_inode) : NULL;
    return e && same_stamps(e->key, key, n) ? e : NULL;
}

static void cache_put(struct cache *cache, dev_t dev, ino_t ino, const struct stamp *key, int n,
                      uint64_t messages)
{
    cache->v = grow(cache->v, &cache->cap, cache->n, 1, sizeof *cache->v);
    struct cached *e = &cache->v[cache->n++];
    memset(e, 0, sizeof *e);
    e->dev = dev;
    e->ino = ino;
    memcpy(e->key, key, (size_t)n * sizeof *key);
    e->messages = messages;
}

static void cache_replace(struct cache *old, struct cache *fresh)
{
    if (fresh->n)
        qsort(fresh->v, fresh->n, sizeof *fresh->v, by_inode);
    free(old->v);
    *old = *fresh;
}

/* Maildir names carry their size (",S=1234") when Dovecot wrote them: no stat needed. */
static uint64_t maildir_size(int dfd, const char *name)
{
    const char *s = strstr(name, ",S=");
    if (s) {
        char *end;
        unsigned long long v = strtoull(s + 3, &end, 10);
        if (end > s + 3 && (*end == ',' || *end == ':' || !*end))
            return v;
    }
    struct stat st;
    return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? (uint64_t)st.st_size : 0;
}

/* An mbox is read in pieces of a fixed buffer, never mapped: another process (Dovecot
 * on expunge) may shorten it while it is read, and a mapping beyond the new end faults.
 * A read that ends early is the file's new end. */
enum { MBOX_BUF = 64 * 1024, MBOX_LINE = 4096 };

struct mbox_reader {
    int fd;
    off_t size;                 /* fstat's, lowered when a read finds the end sooner */
    off_t base;                 /* the file offset of buf[0] */
    size_t len;                 /* bytes of buf read */
    int err;                    /* a read's errno: the count stops there */
    char buf[MBOX_BUF];
};

/* The bytes at off, at least want of them (as far as the file goes); *have: how many. */
static const char *mbox_at(struct mbox_reader *r, off_t off, size_t want, size_t *have)
{
    if (off >= r->size) {
        *have = 0;
        return r->buf;
    }
    size_t left = (size_t)(r->size - off);
    if (want > left)
        want = left;
    if (off < r->base || off + (off_t)want > r->base + (off_t)r->len) {
        size_t ask = left < sizeof r->buf ? left : sizeof r->buf;
        ssize_t got;
        do
            got = pread(r->fd, r->buf, ask, off);
        while (got < 0 && errno == EINTR);
        r->base = off;
        r->len = got > 0 ? (size_t)got : 0;
        if (got < 0)
            r->err = errno;
        if (r->len < ask)
            r->size = off + (off_t)r->len;
    }
    *have = (size_t)(r->base + (off_t)r->len - off);
    return r->buf + (off - r->base);
}

/* A line of the mbox as the counting needs it: where the next one starts, and what
 * its first MBOX_LINE bytes show (a separator's date is in its first few dozen). */
struct mbox_line {
    off_t next;
    int exists, blank;          /* blank: empty, or "\r" alone */
    int from, dated;            /* starts with "From "; a date follows (a separator) */
    int ximap;                  /* an X-IMAP header */
    long long clen;             /* a Content-Length header's value (-1: not a number), else -2 */
};

/* A separator carries a date ("From sender Sat Nov 29 19:00:00 2025"): a body line
 * such as "From here on" is not one, as Dovecot's own reader decides. */
static int dated(const char *p, size_t n)
{
    for (size_t i = 5; i + 5 <= n; i++)
        if (p[i] == ' ' && p[i + 3] == ':' && p[i + 1] >= '0' && p[i + 1] <= '9' &&
            p[i + 2] >= '0' && p[i + 2] <= '9' && p[i + 4] >= '0' && p[i + 4] <= '9')
            return 1;
    return 0;
}

static long long content_length(const char *p, size_t n)
{
    size_t i = 15;
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    long long v = 0;
    size_t digits = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, digits++) {
        if (v > (LLONG_MAX - 9) / 10)
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    return digits ? v : -1;
}

static struct mbox_line mbox_line(struct mbox_reader *r, off_t off)
{
    struct mbox_line l = { .next = off, .clen = -2 };
    size_t have;
    const char *p = mbox_at(r, off, MBOX_LINE, &have);
    if (!have)
        return l;
    l.exists = 1;
    const char *nl = memchr(p, '\n', have);
    size_t n = nl ? (size_t)(nl - p) : have;
    l.blank = n == 0 || (n == 1 && p[0] == '\r');
    l.from = n >= 5 && !memcmp(p, "From ", 5);
    l.dated = l.from && dated(p, n);
    l.ximap = n > 7 && !memcmp(p, "X-IMAP:", 7);
    if (n > 15 && !strncasecmp(p, "Content-Length:", 15))
        l.clen = content_length(p, n);
    if (nl) {
        l.next = off + (off_t)n + 1;
        return l;
    }
    /* A line longer than what was read: its end is further on, or the file's. */
    off_t at = off + (off_t)have;
    while ((p = mbox_at(r, at, 1, &have)), have) {
        if ((nl = memchr(p, '\n', have))) {
            l.next = at + (nl - p) + 1;
            return l;
        }
        at += (off_t)have;
    }
    l.next = at;
    return l;
}

/* The next dated "From " line after an empty line, from the line at off on: the
 * empty line may be the one at off. -1 when there is none. */
static off_t mbox_next_separator(struct mbox_reader *r, off_t off)
{
    /* "\n\nFrom " is searched from the newline ending the line before off; a piece
     * read keeps the last 6 bytes of the one before, so none straddles unseen. */
    off_t from = off - 1;
    size_t have;
    const char *p;
    while ((p = mbox_at(r, from, 7, &have)), have >= 7) {
        const char *f = memmem(p, have, "\n\nFrom ", 7);
        if (!f) {
            from += (off_t)have - 6;
            continue;
        }
        off_t sep = from + (f - p) + 2;
        if (mbox_line(r, sep).dated)
            return sep;
        from = sep - 1;
    }
    return -1;
}

/* mbox messages: a dated "From " line at the start of the file or after an empty
 * line. A Content-Length header (Dovecot writes one, and does not escape "From " in
 * bodies) is trusted when it lands on the next separator or the end of the file. */
uint64_t store_mbox_count(int fd, off_t size, int *err)
{
    struct mbox_reader *r = xmalloc(sizeof *r);
    r->fd = fd;
    r->size = size;
    r->base = 0;
    r->len = 0;
    r->err = 0;
    uint64_t count = 0;
    off_t pos = 0;
    int ximap = 0;
    for (;;) {
        struct mbox_line l = mbox_line(r, pos);
        if (!l.exists || !l.from)
            break;
        count++;
        off_t body = -1;
        long long clen = -1;
        for (off_t h = l.next; h < r->size;) {
            struct mbox_line hl = mbox_line(r, h);
            if (!hl.exists)
                break;
            if (hl.blank) {
                body = hl.next;
                break;
            }
            /* Dovecot's "DON'T DELETE THIS MESSAGE -- FOLDER INTERNAL DATA" keeps the
             * mailbox's UIDs once its first message is gone: an X-IMAP header on the
             * first message, which is no mail. */
            if (pos == 0 && hl.ximap && !ximap) {
                ximap = 1;              /* once: a second such header must not count below 0 */
                count--;
            }
            if (hl.clen != -2)
                clen = hl.clen;         /* the last one counts */
            h = hl.next;
        }
        if (body < 0 || body >= r->size)
            break;
        if (clen >= 0 && clen <= r->size - body) {
            off_t next = body + (off_t)clen;
            size_t have;
            const char *c = mbox_at(r, next, 1, &have);
            if (next == r->size || (next + 1 == r->size && have && c[0] == '\n'))
                break;
            if (have && c[0] == '\n' && mbox_line(r, next + 1).dated) {
                pos = next + 1;
                continue;
            }
        }
        /* No usable length: the next dated "From " line after an empty line. */
        if ((pos = mbox_next_separator(r, body)) < 0)
            break;
    }
    *err = r->err;
    free(r);
    return count;
}

/* The walk's first file it could not read: the count goes on without it, and the
 * collector says so. */
static void walk_failed(struct walk *w, const char *name, int err)
{
    if (!w->why[0])
        /* The message is a hint: a long path keeps its last part's room. */
        snprintf(w->why, sizeof w->why, "%.300s/%.120s: %s", w->path, name, strerror(err));
}

static void walk_mbox_file(struct walk *w, int parent, const char *name)
{
    int fd = openat(parent, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        if (errno != ENOENT && errno != ELOOP)     /* gone meanwhile; a link is not followed */
            walk_failed(w, name, errno);
        return;
    }
    char head[5];
    ssize_t got = 0;
    if (fstat(fd, &st) < 0 || st.st_size < 5 || (got = pread(fd, head, 5, 0)) != 5 || memcmp(head, "From ", 5)) {
        if (got < 0)
            walk_failed(w, name, errno);
        close(fd);
        return;
    }
    struct stamp key = stamp_of(&st);
    const struct cached *hit = cache_find(&w->st->mbox_cache, st.st_dev, st.st_ino, &key, 1);
    uint64_t count;
    if (hit) {
        count = hit->messages;
    } else {
        int err;
        count = store_mbox_count(fd, st.st_size, &err);
        if (err) {
            walk_failed(w, name, err);
            key.mtime_ns = -1;          /* never a hit: read again next walk */
        }
    }
    close(fd);
    cache_put(&w->mbox, st.st_dev, st.st_ino, &key, 1, count);
    w->messages += count;
    w->bytes += (uint64_t)st.st_size;
}

static struct stamp file_stamp(int dfd, const char *name)
{
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
        return (struct stamp){ 0, 0, 0, 0 };
    return stamp_of(&st);
}

/* Replays only mailboxes whose index or logs changed since the last walk. */
static uint64_t dbox_messages(struct walk *w, int dfd)
{
    struct stat dir;
    if (fstat(dfd, &dir) < 0)
        return 0;
    struct stamp key[3] = { file_stamp(dfd, "dovecot.index"), file_stamp(dfd, "dovecot.index.log"),
                            file_stamp(dfd, "dovecot.index.log.2") };
    const struct cached *hit = cache_find(&w->st->dbox_cache, dir.st_dev, dir.st_ino, key, 3);
    uint64_t n = hit ? hit->messages : dbox_mailbox_messages(dfd);
    cache_put(&w->dbox, dir.st_dev, dir.st_ino, key, 3, n);
    return n;
}

static int numbered(const char *name, char prefix)
{
    if (name[0] != prefix || name[1] != '.' || !name[2])
        return 0;
    for (const char *p = name + 2; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

static int64_t ns_of(struct timespec ts)
{
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int by_dir_inode(const void *a, const void *b)
{
    const struct listing *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return (x->ino > y->ino) - (x->ino < y->ino);
}

static void listings_free(struct listings *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].names);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* The files of a directory that a walk looks at, by the store's format. */
static int wanted_file(enum store_format f, const char *name)
{
    if ((f == FMT_AUTO || f == FMT_SDBOX) && numbered(name, 'u'))
        return 1;
    if ((f == FMT_AUTO || f == FMT_MDBOX) && numbered(name, 'm'))
        return 1;
    return (f == FMT_AUTO || f == FMT_MBOX) && strncmp(name, "dovecot", 7) && strcmp(name, "subscriptions");
}

static void add_name(struct listing *l, size_t *cap, char type, const char *name)
{
    size_t n = strlen(name) + 2;
    l->names = grow(l->names, cap, l->len, n, 1);
    l->names[l->len] = type;
    memcpy(l->names + l->len + 1, name, n - 1);
    l->len += n;
}

/* Lists the directory at w->path now. leaf: a maildir's cur/ or new/, whose regular
 * files not starting with '.' are its messages. */
static int list_dir(struct walk *w, int leaf, int root, struct listing *out)
{
    int fd = open(w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (root ? 0 : O_NOFOLLOW));
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->dev = st.st_dev;
    out->ino = st.st_ino;
    out->mtime_ns = ns_of(st.st_mtim);
    out->ctime_ns = ns_of(st.st_ctim);
    int64_t newest = out->mtime_ns > out->ctime_ns ? out->mtime_ns : out->ctime_ns;
    out->trusted = newest < w->now_ns - TRUST_AFTER_NS;
    size_t cap = 0;
    int cur = 0, new = 0;
    char buf[32 * 1024];
    ssize_t got;
    while ((got = getdents64(fd, buf, sizeof buf)) > 0)
        for (ssize_t off = 0; off < got;) {
            const struct dirent64 *e = (const void *)(buf + off);
            off += e->d_reclen;
            if (dirs_dots(e->d_name))
                continue;
            unsigned char type = dirs_type_at(fd, e->d_name, e->d_type);
            if (leaf) {
                if (e->d_name[0] != '.' && type == DT_REG) {
                    out->messages++;
                    out->bytes += maildir_size(fd, e->d_name);
                }
            } else if (type == DT_DIR) {
                add_name(out, &cap, 'd', e->d_name);
                cur |= !strcmp(e->d_name, "cur");
                new |= !strcmp(e->d_name, "new");
            } else if (type == DT_REG && wanted_file(w->st->fmt, e->d_name)) {
                add_name(out, &cap, 'f', e->d_name);
            }
        }
    if (got < 0)
        out->trusted = 0;       /* a partial listing counts once, and is listed again */
    out->maildir = (w->st->fmt == FMT_AUTO || w->st->fmt == FMT_MAILDIR) && cur && new;
    close(fd);
    return 0;
}

/* The listing of the directory at w->path (st: what lstat said of it): the last
 * walk's when the directory is unchanged since a trusted listing, else listed now.
 * The walk keeps it for the next; out shares its names. */
static int listing_of(struct walk *w, const struct stat *st, int leaf, int root, struct listing *out)
{
    struct listing key = { .dev = st->st_dev, .ino = st->st_ino };
    const struct listings *old = &w->st->dirs;
    const struct listing *hit = old->n ? bsearch(&key, old->v, old->n, sizeof *old->v, by_dir_inode) : NULL;
    if (hit && hit->trusted && hit->mtime_ns == ns_of(st->st_mtim) && hit->ctime_ns == ns_of(st->st_ctim)) {
        *out = *hit;
        out->names = hit->len ? xmalloc(hit->len) : NULL;
        if (hit->len)
            memcpy(out->names, hit->names, hit->len);
    } else if (list_dir(w, leaf, root, out) < 0) {
        return -1;
    }
    w->dirs.v = grow(w->dirs.v, &w->dirs.cap, w->dirs.n, 1, sizeof *w->dirs.v);
    w->dirs.v[w->dirs.n++] = *out;
    return 0;
}

/* Appends "/name" to w->path; 0 when it would not fit. */
static int path_push(struct walk *w, size_t len, const char *name)
{
    size_t n = strlen(name);
    if (len + 1 + n >= sizeof w->path)
        return 0;
    w->path[len] = '/';
    memcpy(w->path + len + 1, name, n + 1);
    return 1;
}

static void walk_leaf(struct walk *w, size_t len, const char *sub)
{
    struct stat st;
    struct listing l;
    if (path_push(w, len, sub) && lstat(w->path, &st) == 0 && S_ISDIR(st.st_mode) &&
        listing_of(w, &st, 1, 0, &l) == 0) {
        w->messages += l.messages;
        w->bytes += l.bytes;
    }
    w->path[len] = 0;
}

/* One directory of the store (w->path, its last component name), by its layout: a
 * maildir (cur/ and new/), a dbox mailbox (dbox-Mails: u.N files for sdbox, index
 * replay for mdbox), mdbox storage (m.N files: bytes only) or mbox files. */
static void walk_store_dir(struct walk *w, const char *name, int depth, int root)
{
    struct stat st;
    struct listing l;
    if ((root ? stat(w->path, &st) : lstat(w->path, &st)) < 0 || !S_ISDIR(st.st_mode) ||
        listing_of(w, &st, 0, root, &l) < 0)
        return;
    size_t len = strlen(w->path);
    enum store_format f = w->st->fmt;
    if (l.maildir) {
        walk_leaf(w, len, "cur");
        walk_leaf(w, len, "new");
    }
    int dbox = (f == FMT_AUTO || f == FMT_SDBOX || f == FMT_MDBOX) && !strcmp(name, "dbox-Mails");
    int dfd = -1;               /* opened for the files to look at, if any */
    uint64_t sdbox_files = 0;
    for (size_t off = 0; off < l.len; off += strlen(l.names + off) + 1) {
        const char *e = l.names + off + 1;
        if (l.names[off] == 'd') {
            if (l.maildir && (!strcmp(e, "cur") || !strcmp(e, "new") || !strcmp(e, "tmp")))
                continue;
            if (depth < DIRS_MAX_DEPTH && path_push(w, len, e))
                walk_store_dir(w, e, depth + 1, 0);
            w->path[len] = 0;
            continue;
        }
        if (l.maildir)
            continue;
        if (dfd < 0 && (dfd = open(w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (root ? 0 : O_NOFOLLOW))) < 0)
            break;
        struct stat fst;
        if ((f == FMT_AUTO || f == FMT_SDBOX) && numbered(e, 'u')) {
            if (fstatat(dfd, e, &fst, AT_SYMLINK_NOFOLLOW) == 0) {
                sdbox_files++;
                w->bytes += (uint64_t)fst.st_size;
            }
        } else if ((f == FMT_AUTO || f == FMT_MDBOX) && numbered(e, 'm')) {
            if (fstatat(dfd, e, &fst, AT_SYMLINK_NOFOLLOW) == 0)
                w->bytes += (uint64_t)fst.st_size;
        } else {
            walk_mbox_file(w, dfd, e);
        }
    }
    /* sdbox keeps one file per message; an mdbox mailbox has none and needs its index. */
    if (dbox && sdbox_files)
        w->messages += sdbox_files;
    else if (dbox && f != FMT_SDBOX && (dfd >= 0 || (dfd = dirs_open_at(AT_FDCWD, w->path)) >= 0))
        w->messages += dbox_messages(w, dfd);
    if (dfd >= 0)
        close(dfd);
}

void store_walk(struct store *st, char *const *dirs, size_t ndirs, uint64_t *messages, uint64_t *bytes, char *why,
                size_t whylen)
{
    struct walk *w = xcalloc(1, sizeof *w);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    w->st = st;
    w->now_ns = ns_of(now);
    for (size_t i = 0; i < ndirs; i++) {
        snprintf(w->path, sizeof w->path, "%s", dirs[i]);
        walk_store_dir(w, "", 0, 1);
    }
    cache_replace(&st->mbox_cache, &w->mbox);
    cache_replace(&st->dbox_cache, &w->dbox);
    if (w->dirs.n)
        qsort(w->dirs.v, w->dirs.n, sizeof *w->dirs.v, by_dir_inode);
    listings_free(&st->dirs);
    st->dirs = w->dirs;
    *messages = w->messages;
    *bytes = w->bytes;
    snprintf(why, whylen, "%s", w->why);
    free(w);
}

int store_format_parse(const char *name, enum store_format *out)
{
    static const char *const names[] = { "auto", "maildir", "mbox", "sdbox", "mdbox" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(name, names[i])) {
            *out = (enum store_format)i;
            return 0;
        }
    return -1;
}

struct store *store_new(enum store_format fmt)
{
    struct store *st = xcalloc(1, sizeof *st);
    st->fmt = fmt;
    return st;
}

void store_free(struct store *st)
{
    if (!st)
        return;
    free(st->mbox_cache.v);
    free(st->dbox_cache.v);
    listings_free(&st->dirs);
    free(st);
}
