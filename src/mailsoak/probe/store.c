/* store: walks the server's mail store and counts its messages and bytes, by the
 * layout each directory shows (or the one server.store_format names): maildir, mbox,
 * sdbox, mdbox (dbox.c replays the index). An mbox file or a dbox mailbox whose
 * files did not change since the last walk keeps the count it had, so a walk of a
 * large quiet store reads directories, not mail. */
#include "probe/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
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

struct store {
    enum store_format fmt;
    struct cache mbox_cache, dbox_cache;    /* the last walk's counts, sorted by inode */
};

struct walk {
    struct store *st;
    struct cache mbox, dbox;    /* this walk's entries, replacing the store's */
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

static void walk_maildir_sub(struct walk *w, int parent, const char *sub)
{
    int fd = dirs_open_at(parent, sub);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && dirs_entry_type(dirfd(d), e) == DT_REG) {
            w->messages++;
            w->bytes += maildir_size(dirfd(d), e->d_name);
        }
    closedir(d);
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

static int has_subdir(int dfd, const char *name)
{
    struct stat st;
    return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* One directory of the store, by its layout: a maildir (cur/ and new/), a dbox
 * mailbox (dbox-Mails: u.N files for sdbox, index replay for mdbox), mdbox storage
 * (m.N files: bytes only) or mbox files. Takes ownership of fd. */
static void walk_store_dir(struct walk *w, int fd, const char *name, int depth)
{
    enum store_format f = w->st->fmt;
    int maildir = (f == FMT_AUTO || f == FMT_MAILDIR) && has_subdir(fd, "cur") && has_subdir(fd, "new");
    int dbox = (f == FMT_AUTO || f == FMT_SDBOX || f == FMT_MDBOX) && !strcmp(name, "dbox-Mails");
    if (maildir) {
        walk_maildir_sub(w, fd, "cur");
        walk_maildir_sub(w, fd, "new");
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    uint64_t sdbox_files = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (dirs_dots(e->d_name))
            continue;
        unsigned char type = dirs_entry_type(dirfd(d), e);
        if (type == DT_DIR) {
            if (maildir && (!strcmp(e->d_name, "cur") || !strcmp(e->d_name, "new") || !strcmp(e->d_name, "tmp")))
                continue;
            int sub = depth < DIRS_MAX_DEPTH ? dirs_open_at(dirfd(d), e->d_name) : -1;
            if (sub >= 0)
                walk_store_dir(w, sub, e->d_name, depth + 1);
            continue;
        }
        if (type != DT_REG || maildir)
            continue;
        struct stat st;
        if ((f == FMT_AUTO || f == FMT_SDBOX) && numbered(e->d_name, 'u')) {
            if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                sdbox_files++;
                w->bytes += (uint64_t)st.st_size;
            }
        } else if ((f == FMT_AUTO || f == FMT_MDBOX) && numbered(e->d_name, 'm')) {
            if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                w->bytes += (uint64_t)st.st_size;
        } else if ((f == FMT_AUTO || f == FMT_MBOX) && strncmp(e->d_name, "dovecot", 7) &&
                   strcmp(e->d_name, "subscriptions")) {
            walk_mbox_file(w, dirfd(d), e->d_name);
        }
    }
    /* sdbox keeps one file per message; an mdbox mailbox has none and needs its index. */
    if (dbox && sdbox_files)
        w->messages += sdbox_files;
    else if (dbox && f != FMT_SDBOX)
        w->messages += dbox_messages(w, dirfd(d));
    closedir(d);
}

void store_walk(struct store *st, char *const *dirs, size_t ndirs, uint64_t *messages, uint64_t *bytes)
{
    struct walk w = { .st = st };
    for (size_t i = 0; i < ndirs; i++) {
        int fd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0)
            walk_store_dir(&w, fd, "", 0);
    }
    cache_replace(&st->mbox_cache, &w.mbox);
    cache_replace(&st->dbox_cache, &w.dbox);
    *messages = w.messages;
    *bytes = w.bytes;
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
    free(st);
}
