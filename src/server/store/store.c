/* store: the store thread. It owns the backend, the table of locked mailboxes and
 * the store faults (lose, duplicate, corrupt, tempfail, lock, expunge, lock
 * windows); the loop hands it requests through a queue and gets them back through
 * an eventfd, a batch at a time, so SQLite can commit a batch as one transaction. */
#include "server/store/store.h"
#include "lib/alloc.h"
#include "server/fault.h"
#include "server/store/store_maildir.h"
#include "server/store/store_mbox.h"
#include "server/store/store_memory.h"
#include "server/store/store_sqlite.h"
#include "server/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct srv_store {
    struct srv_backend be;
    const struct srv_config *cfg;
    const struct users *users;
    struct loop *loop;
    struct io_handler done_io;       /* eventfd: completions are waiting */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct srv_req *todo, **todo_tail;
    struct srv_req *done, **done_tail;
    int stopping;
    /* store thread only */
    unsigned char *locked;           /* per user */
    uint64_t *xgen;                  /* per user: expunges done (struct srv_req's xgen) */
    void (*watch)(void *ud, size_t user);   /* loop thread: a delivery was accepted */
    void *watch_ud;
    struct srv_rng rng;
    uint64_t seen[SE_COUNT], fired[SE_COUNT];
    uint64_t start_ns, next_id, start_wall;
    uint64_t delivered, fetched;
};

const struct srv_backend_ops *srv_backend_by_kind(int kind)
{
    switch (kind) {
    case SRV_STORE_MAILDIR: return &srv_store_maildir;
    case SRV_STORE_MBOX: return &srv_store_mbox;
    case SRV_STORE_SQLITE: return &srv_store_sqlite;
    default: return &srv_store_memory;
    }
}

void srv_items_add(struct srv_items *l, const struct srv_item *it)
{
    l->v = grow(l->v, &l->cap, l->n, 1, sizeof *l->v);
    l->v[l->n++] = *it;
}

void srv_items_free(struct srv_items *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].path);
    free(l->v);
    memset(l, 0, sizeof *l);
}

uint64_t srv_crlf_size(const char *p, size_t n)
{
    uint64_t size = n;
    const char *e = p + n, *q = p;
    while ((q = memchr(q, '\n', (size_t)(e - q)))) {
        if (q == p || q[-1] != '\r')
            size++;
        q++;
    }
    if (n && p[n - 1] != '\n')
        size += 2;                   /* RETR ends the last line */
    return size;
}

int srv_mkdirs(const char *path, char *err, size_t errlen)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    for (char *p = tmp + 1; ; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = 0;
            if (mkdir(tmp, 0755) < 0 && errno != EEXIST) {
                snprintf(err, errlen, "mkdir %s: %s", tmp, strerror(errno));
                return -1;
            }
            *p = c;
            if (!c)
                break;
        }
    }
    return 0;
}

int srv_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int srv_fsync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int r = fsync(fd);
    close(fd);
    return r;
}

int srv_syncfs(int fd, const char *dir, char *err, size_t errlen)
{
    if (syncfs(fd) < 0) {
        snprintf(err, errlen, "syncfs(%s) failed: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

int srv_open_dir(const char *dir, char *err, size_t errlen)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        snprintf(err, errlen, "open(%s) failed: %s", dir, strerror(errno));
    return fd;
}

/* --- faults applied to the store --- */

static int strikes(struct srv_store *s, enum srv_store_event e)
{
    const struct srv_rule *r = &s->cfg->faults.store.rule[e];
    if (r->odds <= 0 && !r->every)
        return 0;
    return srv_rule_strikes(r, &s->seen[e], &s->fired[e], &s->rng);
}

static int in_window(struct srv_store *s)
{
    return srv_lock_window(&s->cfg->faults.store, mono_ns() - s->start_ns);
}

/* The contention message each backend's real counterpart would write. */
static const char *lock_text(const struct srv_store *s)
{
    switch (s->cfg->store) {
    case SRV_STORE_SQLITE: return "database is locked";
    case SRV_STORE_MBOX: return "Timeout while waiting for lock for file: Resource temporarily unavailable";
    case SRV_STORE_MAILDIR: return "Timeout while waiting for lock for dovecot-uidlist: Resource temporarily unavailable";
    default: return "mailbox is locked";
    }
}

/* One byte of the body changes, so size checks pass and only the digest catches it. */
static void corrupt(char *m, size_t *len, size_t cap)
{
    size_t body = 0;
    for (size_t i = 0; i + 1 < *len; i++) {
        if (m[i] == '\n' && (m[i + 1] == '\n' || (m[i + 1] == '\r' && i + 2 < *len && m[i + 2] == '\n'))) {
            body = i + (m[i + 1] == '\n' ? 2 : 3);
            break;
        }
    }
    for (size_t i = *len; i-- > body;) {
        char c = m[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            m[i] = (char)(c ^ 0x20);
            return;
        }
        if (c >= '0' && c <= '9') {
            m[i] = c == '9' ? '0' : (char)(c + 1);
            return;
        }
    }
    /* No letter in the body: a line appears where there was none. */
    if (*len + 3 <= cap) {
        memcpy(m + *len, "X\r\n", 3);
        *len += 3;
    }
}

static void make_uid(struct srv_store *s, char *uid, size_t n)
{
    snprintf(uid, n, "%llu.M%010lluP%d", (unsigned long long)s->start_wall,
             (unsigned long long)++s->next_id, (int)getpid());
}

static void do_deliver(struct srv_store *s, struct srv_req *r)
{
    if (in_window(s) || strikes(s, SE_LOCK)) {
        r->status = SS_IN_USE;
        snprintf(r->err, sizeof r->err, "%s", lock_text(s));
        return;
    }
    if (strikes(s, SE_TEMPFAIL)) {
        r->status = SS_TEMP;
        snprintf(r->err, sizeof r->err, "lmtp: timed out while waiting for the store");
        return;
    }
    for (size_t i = 0; i < r->nrcpts; i++) {
        size_t u = r->rcpts[i];
        const char *addr = s->users->v[u].addr;
        char uid[72];
        make_uid(s, uid, sizeof uid);
        if (strikes(s, SE_LOSE)) {
            char why[200];
            switch (s->cfg->store) {
            case SRV_STORE_MAILDIR:
                snprintf(why, sizeof why, "link(tmp/%s, new/%s) failed: No such file or directory", uid, uid);
                break;
            case SRV_STORE_MBOX:
                snprintf(why, sizeof why, "write(%s) failed: No space left on device", addr);
                break;
            case SRV_STORE_SQLITE:
                snprintf(why, sizeof why, "INSERT rolled back: disk I/O error");
                break;
            default:
                snprintf(why, sizeof why, "Out of memory");
                break;
            }
            srv_log("%s: Error: msg %s: save failed to INBOX of %s: %s (message discarded after acceptance)",
                    s->be.ops->name, r->qid, addr, why);
            continue;
        }
        int copies = 1;
        if (strikes(s, SE_DUPLICATE)) {
            copies = 2;
            srv_log("%s: Warning: msg %s: delivery to %s retried after a timeout; "
                    "the first attempt had already been saved", s->be.ops->name, r->qid, addr);
        }
        char *cp = NULL;
        const char *data = r->data;
        size_t len = r->len;
        if (strikes(s, SE_CORRUPT)) {
            cp = xmalloc(len + 3);
            memcpy(cp, r->data, len);
            corrupt(cp, &len, len + 3);
            data = cp;
            srv_log("%s: Error: msg %s: Corrupted record in mailbox of %s: "
                    "cached body does not match the stored one", s->be.ops->name, r->qid, addr);
        }
        for (int c = 0; c < copies; c++) {
            if (c)
                make_uid(s, uid, sizeof uid);
            if (s->be.ops->deliver(&s->be, u, uid, data, len, r->err, sizeof r->err) < 0) {
                r->status = SS_TEMP;
                srv_log("%s: Error: msg %s: delivery to %s failed: %s", s->be.ops->name, r->qid, addr, r->err);
                free(cp);
                return;
            }
            s->delivered++;
        }
        free(cp);
    }
}

static void do_open(struct srv_store *s, struct srv_req *r)
{
    r->xgen = s->xgen[r->user];
    const char *addr = s->users->v[r->user].addr;
    if (s->locked[r->user]) {
        r->status = SS_IN_USE;
        snprintf(r->err, sizeof r->err, "Mailbox is locked by another session");
        return;
    }
    if (in_window(s) || strikes(s, SE_LOCK)) {
        r->status = SS_IN_USE;
        snprintf(r->err, sizeof r->err, "%s", lock_text(s));
        srv_log("pop3(%s): Error: Couldn't open INBOX: %s", addr, lock_text(s));
        return;
    }
    if (s->be.ops->list(&s->be, r->user, &r->items, r->err, sizeof r->err) < 0) {
        r->status = SS_TEMP;
        srv_log("pop3(%s): Error: Couldn't open INBOX: %s", addr, r->err);
        srv_items_free(&r->items);
        return;
    }
    s->locked[r->user] = 1;
}

static void do_commit(struct srv_store *s, struct srv_req *r)
{
    const char *addr = s->users->v[r->user].addr;
    s->locked[r->user] = 0;
    if (!r->ndel)
        return;
    if (in_window(s) || strikes(s, SE_EXPUNGE)) {
        /* James's words (JAMES-393): the session ends, the mail stays. */
        r->status = SS_TEMP;
        snprintf(r->err, sizeof r->err, "Cannot lock Mail%s to remove it", r->del[0]->uid);
        srv_log("pop3(%s): Error: %s", addr, r->err);
        return;
    }
    s->xgen[r->user]++;
    if (s->be.ops->expunge(&s->be, r->user, r->del, r->ndel, r->err, sizeof r->err) < 0) {
        r->status = SS_TEMP;
        srv_log("pop3(%s): Error: expunge failed: %s", addr, r->err);
    }
}

/* IMAP's listing: no lock, a mailbox is shared by its sessions. */
static void do_list(struct srv_store *s, struct srv_req *r)
{
    srv_items_free(&r->items);
    r->xgen = s->xgen[r->user];
    if (in_window(s) || strikes(s, SE_LOCK)) {
        r->status = SS_IN_USE;
        snprintf(r->err, sizeof r->err, "%s", lock_text(s));
        srv_log("imap(%s): Error: Couldn't open INBOX: %s", s->users->v[r->user].addr, lock_text(s));
        return;
    }
    if (s->be.ops->list(&s->be, r->user, &r->items, r->err, sizeof r->err) < 0) {
        r->status = SS_TEMP;
        srv_log("imap(%s): Error: Couldn't open INBOX: %s", s->users->v[r->user].addr, r->err);
        srv_items_free(&r->items);
    }
}

/* IMAP's EXPUNGE: the store faults of POP3's commit, without its lock. */
static void do_expunge(struct srv_store *s, struct srv_req *r)
{
    const char *addr = s->users->v[r->user].addr;
    if (!r->ndel)
        return;
    if (in_window(s) || strikes(s, SE_EXPUNGE)) {
        r->status = SS_TEMP;
        snprintf(r->err, sizeof r->err, "%s", lock_text(s));
        srv_log("imap(%s): Error: Mailbox INBOX: expunge failed: %s", addr, r->err);
        return;
    }
    s->xgen[r->user]++;
    if (s->be.ops->expunge(&s->be, r->user, r->del, r->ndel, r->err, sizeof r->err) < 0) {
        r->status = SS_TEMP;
        srv_log("imap(%s): Error: Mailbox INBOX: expunge failed: %s", addr, r->err);
    }
}

/* A FETCH from a listing older than the mailbox's last expunge: the item is looked
 * up again by its uid in a fresh listing (its offsets may have moved), and a
 * message that is gone is an error, not another message's bytes. */
static void do_fetch(struct srv_store *s, struct srv_req *r)
{
    const char *addr = s->users->v[r->user].addr;
    struct srv_items fresh = { 0 };
    const struct srv_item *it = r->item;
    if (r->xgen != s->xgen[r->user]) {
        it = NULL;
        if (s->be.ops->list(&s->be, r->user, &fresh, r->err, sizeof r->err) == 0)
            for (size_t i = 0; i < fresh.n && !it; i++)
                if (!strcmp(fresh.v[i].uid, r->item->uid))
                    it = &fresh.v[i];
        if (!it) {
            r->status = SS_PERM;
            snprintf(r->err, sizeof r->err, "message %s was expunged", r->item->uid);
            srv_items_free(&fresh);
            return;
        }
    }
    if (s->be.ops->fetch(&s->be, r->user, it, &r->out, r->err, sizeof r->err) < 0) {
        r->status = SS_TEMP;
        srv_log("%s(%s): Error: read of message %s failed: %s", r->imap ? "imap" : "pop3", addr, it->uid, r->err);
    } else {
        s->fetched++;
    }
    srv_items_free(&fresh);
}

static int is_write(const struct srv_req *r)
{
    return r->op == SOP_DELIVER || r->op == SOP_COMMIT || r->op == SOP_EXPUNGE;
}

static void run_one(struct srv_store *s, struct srv_req *r)
{
    r->status = SS_OK;
    r->err[0] = 0;
    switch (r->op) {
    case SOP_DELIVER:
        do_deliver(s, r);
        break;
    case SOP_OPEN:
        do_open(s, r);
        break;
    case SOP_FETCH:
        do_fetch(s, r);
        break;
    case SOP_LIST:
        do_list(s, r);
        break;
    case SOP_EXPUNGE:
        do_expunge(s, r);
        break;
    case SOP_COMMIT:
        do_commit(s, r);
        break;
    case SOP_CLOSE:
        s->locked[r->user] = 0;
        break;
    case SOP_COUNT:
        break;
    }
}

static void *store_main(void *arg)
{
    struct srv_store *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->todo && !s->stopping)
            pthread_cond_wait(&s->cv, &s->mu);
        if (!s->todo)
            break;
        struct srv_req *batch = s->todo;
        s->todo = NULL;
        s->todo_tail = &s->todo;
        pthread_mutex_unlock(&s->mu);

        char err[256];
        int began = !s->be.ops->begin || s->be.ops->begin(&s->be, err, sizeof err) == 0;
        struct srv_req *last = NULL;
        for (struct srv_req *r = batch; r; r = r->next) {
            if (!began && is_write(r)) {
                r->status = SS_TEMP;
                snprintf(r->err, sizeof r->err, "%s", err);
            } else {
                run_one(s, r);
            }
            last = r;
        }
        if (began && s->be.ops->end && s->be.ops->end(&s->be, err, sizeof err) < 0) {
            srv_log("%s: Error: commit failed: %s", s->be.ops->name, err);
            for (struct srv_req *r = batch; r; r = r->next)
                if (is_write(r) && r->status == SS_OK) {
                    r->status = SS_TEMP;
                    snprintf(r->err, sizeof r->err, "%s", err);
                }
        }

        pthread_mutex_lock(&s->mu);
        *s->done_tail = batch;
        s->done_tail = &last->next;
        pthread_mutex_unlock(&s->mu);
        uint64_t one = 1;
        if (write(s->done_io.fd, &one, sizeof one) < 0) { /* counter full: loop is awake */ }
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void on_done(struct loop *l, struct io_handler *h, uint32_t ev)
{
    struct srv_store *s = (struct srv_store *)((char *)h - offsetof(struct srv_store, done_io));
    uint64_t v;
    (void)l; (void)ev;
    if (read(h->fd, &v, sizeof v) < 0) { /* EAGAIN: drained by an earlier read */ }
    pthread_mutex_lock(&s->mu);
    struct srv_req *r = s->done;
    s->done = NULL;
    s->done_tail = &s->done;
    pthread_mutex_unlock(&s->mu);
    while (r) {
        struct srv_req *next = r->next;
        r->next = NULL;
        if (r->op == SOP_DELIVER && r->status == SS_OK && s->watch)
            for (size_t i = 0; i < r->nrcpts; i++)
                s->watch(s->watch_ud, r->rcpts[i]);
        r->done(r);
        r = next;
    }
}

struct srv_store *srv_store_start(const struct srv_config *cfg, const struct users *u,
                                  struct loop *l, char *err, size_t errlen)
{
    struct srv_store *s = xcalloc(1, sizeof *s);
    s->cfg = cfg;
    s->users = u;
    s->loop = l;
    s->be.ops = srv_backend_by_kind(cfg->store);
    s->be.users = u;
    s->be.dir = cfg->store_dir;
    s->be.fsync = cfg->fsync;
    s->locked = xcalloc(u->n, 1);
    s->xgen = xcalloc(u->n ? u->n : 1, sizeof *s->xgen);
    s->todo_tail = &s->todo;
    s->done_tail = &s->done;
    s->start_ns = mono_ns();
    s->start_wall = (uint64_t)time(NULL);
    srv_rng_seed(&s->rng, cfg->seed, 0x570e);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->done_io.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    s->done_io.fn = on_done;
    if (!s->locked || s->done_io.fd < 0) {
        snprintf(err, errlen, "store: %s", strerror(errno));
        goto fail;
    }
    if (s->be.ops->init(&s->be, err, errlen) < 0)
        goto fail;
    if (loop_add(l, &s->done_io, EPOLLIN) < 0 || pthread_create(&s->thread, NULL, store_main, s)) {
        snprintf(err, errlen, "store: cannot start its thread");
        s->be.ops->fini(&s->be);
        goto fail;
    }
    return s;
fail:
    if (s->done_io.fd >= 0)
        close(s->done_io.fd);
    free(s->locked);
    free(s->xgen);
    free(s);
    return NULL;
}

void srv_store_submit(struct srv_store *s, struct srv_req *r)
{
    r->next = NULL;
    pthread_mutex_lock(&s->mu);
    int wake = !s->todo;
    *s->todo_tail = r;
    s->todo_tail = &r->next;
    if (wake)
        pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void srv_store_watch(struct srv_store *s, void (*fn)(void *ud, size_t user), void *ud)
{
    s->watch = fn;
    s->watch_ud = ud;
}

void srv_store_stop(struct srv_store *s)
{
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    srv_log("store %s: stopped after %llu deliveries and %llu retrievals", s->be.ops->name,
            (unsigned long long)s->delivered, (unsigned long long)s->fetched);
    /* Completions that never reached the loop: run them so their owners free them. */
    on_done(s->loop, &s->done_io, EPOLLIN);
    loop_del(s->loop, &s->done_io);
    close(s->done_io.fd);
    s->be.ops->fini(&s->be);
    free(s->locked);
    free(s->xgen);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
