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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
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

/* A separator carries a date ("From sender Sat Nov 29 19:00:00 2025"): a body line
 * such as "From here on" is not one, as Dovecot's own reader decides. */
static int from_line(const char *p, size_t n, size_t pos)
{
    if (pos + 5 > n || memcmp(p + pos, "From ", 5))
        return 0;
    const char *nl = memchr(p + pos, '\n', n - pos);
    size_t end = nl ? (size_t)(nl - p) : n;
    for (size_t i = pos + 5; i + 5 <= end; i++)
        if (p[i] == ' ' && p[i + 3] == ':' && p[i + 1] >= '0' && p[i + 1] <= '9' &&
            p[i + 2] >= '0' && p[i + 2] <= '9' && p[i + 4] >= '0' && p[i + 4] <= '9')
            return 1;
    return 0;
}

/* mbox messages: a dated "From " line at the start of the file or after an empty
 * line. A Content-Length header (Dovecot writes one, and does not escape "From " in
 * bodies) is trusted when it lands on the next separator or the end of the file. */
static uint64_t mbox_count(const char *p, size_t n)
{
    uint64_t count = 0;
    size_t pos = 0;
    while (pos + 5 <= n && !memcmp(p + pos, "From ", 5)) {
        count++;
        const char *nl = memchr(p + pos, '\n', n - pos);
        if (!nl)
            break;
        size_t h = (size_t)(nl - p) + 1, body = n;
        long long clen = -1;
        while (h < n) {
            const char *e = memchr(p + h, '\n', n - h);
            size_t end = e ? (size_t)(e - p) : n;
            if (end == h || (end == h + 1 && p[h] == '\r')) {
                body = end + 1;
                break;
            }
            /* Dovecot's "DON'T DELETE THIS MESSAGE -- FOLDER INTERNAL DATA" keeps the
             * mailbox's UIDs once its first message is gone: an X-IMAP header on the
             * first message, which is no mail. */
            if (pos == 0 && end - h > 7 && !memcmp(p + h, "X-IMAP:", 7))
                count--;
            if (end - h > 15 && !strncasecmp(p + h, "Content-Length:", 15)) {
                char *stop;
                errno = 0;
                clen = strtoll(p + h + 15, &stop, 10);
                if (errno || stop == p + h + 15 || clen < 0)
                    clen = -1;
            }
            h = end + 1;
        }
        if (body >= n)
            break;
        if (clen >= 0 && body + (size_t)clen <= n) {
            size_t next = body + (size_t)clen;
            if (next == n || (next + 1 == n && p[next] == '\n'))
                break;
            if (p[next] == '\n' && from_line(p, n, next + 1)) {
                pos = next + 1;
                continue;
            }
        }
        /* No usable length: the next dated "From " line after an empty line. */
        pos = n;
        for (size_t from = body - 1; from < n;) {
            const char *f = memmem(p + from, n - from, "\n\nFrom ", 7);
            if (!f)
                break;
            if (from_line(p, n, (size_t)(f - p) + 2)) {
                pos = (size_t)(f - p) + 2;
                break;
            }
            from = (size_t)(f - p) + 1;
        }
    }
    return count;
}

static void walk_mbox_file(struct walk *w, int parent, const char *name)
{
    int fd = openat(parent, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return;
    char head[5];
    if (fstat(fd, &st) < 0 || st.st_size < 5 || pread(fd, head, 5, 0) != 5 || memcmp(head, "From ", 5)) {
        close(fd);
        return;
    }
    struct stamp key = stamp_of(&st);
    const struct cached *hit = cache_find(&w->st->mbox_cache, st.st_dev, st.st_ino, &key, 1);
    uint64_t count;
    if (hit) {
        count = hit->messages;
    } else {
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            close(fd);
            return;
        }
        count = mbox_count(map, (size_t)st.st_size);
        munmap(map, (size_t)st.st_size);
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

void store_walk(struct store *st, char *const *dirs, size_t ndirs, uint64_t *messages, uint64_t *bytes)
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
