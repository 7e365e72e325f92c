/* store_maildir: a file per message in STORE_DIR/ADDRESS/{tmp,new,cur}. A message is
 * written to tmp/ and renamed into new/ only once its bytes are on disk, so a crash
 * leaves either no message or a whole one. With fsync on, a batch of deliveries is
 * group-committed: all tmp files, one syncfs(), all renames, one more syncfs(),
 * then the 250s; a commit that fails takes the whole batch back (what is renamed
 * goes again), since every message of it is then answered 451. Sizes ride in the name (",S=,W=" as Dovecot does): LIST needs no stat. */
#include "server/store/store_maildir.h"
#include "server/store/store.h"
#include "lib/alloc.h"
#include "lib/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATHMAX 4096

/* Deliveries of the current batch waiting for the group commit. */
struct md_pending {
    char *tmp, *fin;
};
struct md {
    struct md_pending *v;
    size_t n, cap;
    int dirty;                       /* an expunge to make durable */
    int dirfd;                       /* the store's directory, for syncfs */
};

static int box_path(const struct srv_backend *b, size_t user, const char *sub, const char *name,
                    char *out)
{
    int n = snprintf(out, PATHMAX, "%s/%s%s%s%s%s", b->dir, b->users->v[user].addr,
                     sub ? "/" : "", sub ? sub : "", name ? "/" : "", name ? name : "");
    return n < PATHMAX ? 0 : -1;
}

static int make_box(const struct srv_backend *b, size_t user, char *err, size_t errlen)
{
    static const char *const subs[] = { "tmp", "new", "cur" };
    char p[PATHMAX];
    for (int i = 0; i < 3; i++) {
        if (box_path(b, user, subs[i], NULL, p) < 0 || srv_mkdirs(p, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* tmp/ files are half-written messages of a crashed run: never delivered, so removed. */
static void clean_tmp(const struct srv_backend *b)
{
    for (size_t u = 0; u < b->users->n; u++) {
        char p[PATHMAX], f[PATHMAX];
        if (box_path(b, u, "tmp", NULL, p) < 0)
            continue;
        DIR *d = opendir(p);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d)))
            if (e->d_name[0] != '.' && snprintf(f, sizeof f, "%s/%s", p, e->d_name) < (int)sizeof f)
                unlink(f);
        closedir(d);
    }
}

static int md_init(struct srv_backend *b, char *err, size_t errlen)
{
    if (srv_mkdirs(b->dir, err, errlen) < 0)
        return -1;
    clean_tmp(b);
    struct md *m = xcalloc(1, sizeof *m);
    b->priv = m;
    m->dirfd = srv_open_dir(b->dir, err, errlen);
    return m->dirfd < 0 ? -1 : 0;
}

static void drop_pending(struct md *m, int unlink_tmp)
{
    for (size_t i = 0; i < m->n; i++) {
        if (unlink_tmp)
            unlink(m->v[i].tmp);
        free(m->v[i].tmp);
        free(m->v[i].fin);
    }
    m->n = 0;
}

static void md_fini(struct srv_backend *b)
{
    struct md *m = b->priv;
    if (!m)
        return;
    drop_pending(m, 1);
    if (m->dirfd >= 0)
        close(m->dirfd);
    free(m->v);
    free(m);
    b->priv = NULL;
}

/* The group commit: data durable, then names, then the batch's replies go out. */
static int md_end(struct srv_backend *b, char *err, size_t errlen)
{
    struct md *m = b->priv;
    int rc = 0;
    if (!m->n && !m->dirty)
        return 0;
    if (m->n && srv_syncfs(m->dirfd, b->dir, err, errlen) < 0) {
        drop_pending(m, 1);
        return -1;
    }
    size_t renamed = 0;
    for (; renamed < m->n; renamed++)
        if (rename(m->v[renamed].tmp, m->v[renamed].fin) < 0) {
            snprintf(err, errlen, "rename(%s, %s) failed: %s", m->v[renamed].tmp, m->v[renamed].fin,
                     strerror(errno));
            rc = -1;
            break;
        }
    if (rc == 0 && m->n && srv_syncfs(m->dirfd, b->dir, err, errlen) < 0)
        rc = -1;
    /* Failed: every message of the batch gets a 451, so none may stay delivered. The
     * store thread runs retrievals too, between batches: no reader saw these yet. */
    for (size_t i = 0; rc < 0 && i < renamed; i++)
        unlink(m->v[i].fin);
    drop_pending(m, rc < 0);
    m->dirty = 0;
    if (rc == 0 && !renamed && srv_syncfs(m->dirfd, b->dir, err, errlen) < 0)
        rc = -1;                     /* an expunge alone */
    return rc;
}

static int md_deliver(struct srv_backend *b, size_t user, const char *uid, const char *data,
                      size_t len, char *err, size_t errlen)
{
    char tmp[PATHMAX], fin[PATHMAX], name[160];
    snprintf(name, sizeof name, "%s,S=%zu,W=%llu", uid, len,
             (unsigned long long)srv_crlf_size(data, len));
    if (box_path(b, user, "tmp", uid, tmp) < 0 || box_path(b, user, "new", name, fin) < 0) {
        snprintf(err, errlen, "path too long");
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == ENOENT) {
        if (make_box(b, user, err, errlen) < 0)
            return -1;
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    }
    if (fd < 0) {
        snprintf(err, errlen, "open(%s) failed: %s", tmp, strerror(errno));
        return -1;
    }
    if (srv_write_all(fd, data, len) < 0) {
        snprintf(err, errlen, "write(%s) failed: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    close(fd);
    if (b->fsync) {                  /* renamed by md_end once the batch is on disk */
        struct md *m = b->priv;
        m->v = grow(m->v, &m->cap, m->n, 1, sizeof *m->v);
        m->v[m->n].tmp = xstrdup(tmp);
        m->v[m->n].fin = xstrdup(fin);
        m->n++;
        return 0;
    }
    if (rename(tmp, fin) < 0) {
        snprintf(err, errlen, "rename(%s, %s) failed: %s", tmp, fin, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    const struct srv_item *x = a, *y = b;
    return strcmp(x->uid, y->uid);
}

static int md_list(struct srv_backend *b, size_t user, struct srv_items *out, char *err, size_t errlen)
{
    static const char *const subs[] = { "new", "cur" };
    for (int s = 0; s < 2; s++) {
        char p[PATHMAX];
        if (box_path(b, user, subs[s], NULL, p) < 0) {
            snprintf(err, errlen, "path too long");
            return -1;
        }
        DIR *d = opendir(p);
        if (!d) {
            if (errno == ENOENT)
                continue;            /* never got mail */
            snprintf(err, errlen, "opendir(%s) failed: %s", p, strerror(errno));
            return -1;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            struct srv_item it = { 0 };
            const char *comma = strchr(e->d_name, ',');
            size_t ul = comma ? (size_t)(comma - e->d_name) : strlen(e->d_name);
            if (ul >= sizeof it.uid)
                ul = sizeof it.uid - 1;
            memcpy(it.uid, e->d_name, ul);
            const char *w = strstr(e->d_name, ",W=");
            it.path = xasprintf("%s/%s", subs[s], e->d_name);
            if (w) {
                it.size = strtoull(w + 3, NULL, 10);
            } else {
                /* A file someone dropped in by hand: read it to learn its size. */
                struct buf tmp = { 0 };
                char f[PATHMAX];
                if (box_path(b, user, it.path, NULL, f) == 0 && file_read(AT_FDCWD, f, 0, &tmp) == 0)
                    it.size = srv_crlf_size(tmp.p ? tmp.p : "", tmp.len);
                buf_free(&tmp);
            }
            srv_items_add(out, &it);
        }
        closedir(d);
    }
    /* Names start with the delivery second and a counter: name order is arrival order. */
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, by_name);
    return 0;
}

static int md_fetch(struct srv_backend *b, size_t user, const struct srv_item *it, struct buf *out,
                    char *err, size_t errlen)
{
    char f[PATHMAX];
    if (box_path(b, user, it->path, NULL, f) < 0 || file_read(AT_FDCWD, f, 0, out) < 0) {
        snprintf(err, errlen, "open(%s) failed: %s", f, strerror(errno));
        return -1;
    }
    return 0;
}

static int md_expunge(struct srv_backend *b, size_t user, const struct srv_item *const *its, size_t n,
                      char *err, size_t errlen)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char f[PATHMAX];
        if (box_path(b, user, its[i]->path, NULL, f) < 0 || (unlink(f) < 0 && errno != ENOENT)) {
            snprintf(err, errlen, "unlink(%s) failed: %s", f, strerror(errno));
            rc = -1;
        }
    }
    ((struct md *)b->priv)->dirty |= b->fsync;
    return rc;
}

const struct srv_backend_ops srv_store_maildir = {
    .name = "maildir", .init = md_init, .fini = md_fini, .end = md_end,
    .deliver = md_deliver,
    .list = md_list, .fetch = md_fetch, .expunge = md_expunge,
};
