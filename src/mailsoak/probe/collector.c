/* collector: the server side of a run. One thread samples, every sample_interval:
 * the process set (memory, I/O, crashes), the spool, the mail store and the logs.
 * Samples are kept whole, so any interval of the timeline can be cut from them.
 *
 * I/O of short-lived children. When a parent reaps a child, the kernel adds the
 * child's I/O counts (and those of the child's own reaped children) to the parent's
 * signal->ioac (kernel/exit.c, wait_task_zombie), which /proc/PARENT/io includes.
 * So the set's I/O at any moment is the sum of /proc/PID/io over its live members:
 * a child that did its work and was reaped between two samples is inside its
 * parent's counts. What this cannot see: children of a parent that does not wait
 * (SIGCHLD ignored: the kernel reaps them and the counts are dropped), children
 * orphaned and reaped by init or a subreaper outside the set before we saw them,
 * and processes outside the tree (a server started by another supervisor). */
#include "probe/collector.h"
#include "lib/grow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe/logwatch.h"
#include "probe/procfs.h"
#include "lib/units.h"

enum root_kind { R_NONE, R_PID, R_PIDFILE, R_PROCESS };
enum store_format { FMT_AUTO, FMT_MAILDIR, FMT_MBOX, FMT_SDBOX, FMT_MDBOX };
static const char *const format_names[] = { "auto", "maildir", "mbox", "sdbox", "mdbox", NULL };

enum {
    READ_ATTEMPTS = 4,          /* a member that exits while we read the set: read it again */
    MAX_DEPTH = 64,             /* of directories and of process ancestry */
};

/* A master named by pid or pidfile. */
struct slot {
    int kind;
    char *pidfile;
    int pid;
    uint64_t start;
    char comm[32];
    int gone;                   /* its death was counted; a pidfile may name a successor */
};

struct member {
    int pid, ppid;
    uint64_t start;
    int kind;
    char state;
    int have_io, io_denied, zombie_noted;
    struct proc_io io;
    uint64_t rss, pss;
    char comm[32];
};

struct members {
    struct member *v;
    size_t n, cap;
};

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

struct sample {
    uint64_t t;
    uint64_t mem, pss, spool, store_messages, store_bytes, log_lines;
    unsigned procs;
    struct proc_io io;          /* since the start, field by field never decreasing */
};

struct event {
    uint64_t t;
    char kind[16];
    char *text;
};

struct collector {
    /* What to sample; fixed after start. */
    char *proc_root;
    int rootfd;
    int has_procs, has_spool, has_store, has_logs, active, manual;
    struct slot *slots;
    size_t nslots;
    regex_t *pats;
    char **pat_src;
    size_t npats;
    char **spool_dirs, **store_dirs;
    size_t nspool, nstore;
    enum store_format fmt;
    uint64_t t0, interval, start_ticks;
    struct logwatch *lw;
    size_t ncls;

    /* The sampler's own state (the thread, or the caller once the thread is joined). */
    struct proc_table table;
    struct members prev;
    struct proc_io departed, offsets, io_total;
    struct cache mbox_cache, dbox_cache;
    uint64_t *hits_scratch;

    /* Results, under mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int thread_running, stopping, stopped;
    struct sample *s;
    size_t ns, cap;
    uint64_t *hits;             /* ns x ncls */
    uint64_t mem_peak, pss_peak, spool_peak, crashes;
    unsigned procs_peak;
    struct event *ev;
    size_t nev;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *xrealloc(void *p, size_t size)
{
    p = realloc(p, size ? size : 1);
    if (!p)
        abort();
    return p;
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        abort();
    return d;
}

static void add_event(struct collector *c, uint64_t t, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_event(struct collector *c, uint64_t t, const char *kind, const char *fmt, ...)
{
    char text[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&c->mu);
    c->ev = xrealloc(c->ev, (c->nev + 1) * sizeof *c->ev);
    struct event *e = &c->ev[c->nev++];
    e->t = t;
    snprintf(e->kind, sizeof e->kind, "%s", kind);
    e->text = xstrdup(text);
    pthread_mutex_unlock(&c->mu);
}

static void on_log_event(void *ctx, uint64_t t, const char *kind, const char *text)
{
    add_event(ctx, t, kind, "%s", text);
}

/* ------------------------------------------------------------------------------ */
/* The process set */

static const struct proc_stat *live(const struct proc_table *t, int pid, uint64_t start)
{
    const struct proc_stat *e = procfs_find(t, pid);
    return e && e->starttime == start ? e : NULL;
}

static int by_member_pid(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static const struct member *find_member(const struct members *m, int pid)
{
    struct member key = { .pid = pid };
    return m->n ? bsearch(&key, m->v, m->n, sizeof *m->v, by_member_pid) : NULL;
}

static int read_pidfile(const char *path, int *pid, char *why, size_t whylen)
{
    char buf[64];
    if (procfs_read(AT_FDCWD, path, buf, sizeof buf) < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    if (procfs_parse_pidfile(buf, pid) < 0) {
        snprintf(why, whylen, "does not hold a process id");
        return -1;
    }
    return 0;
}

static const char *signal_text(int status, char *buf, size_t n)
{
    if (WIFSIGNALED(status))
        snprintf(buf, n, "killed by signal %d (%s)%s", WTERMSIG(status), strsignal(WTERMSIG(status)),
                 WCOREDUMP(status) ? ", core dumped" : "");
    else
        snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
    return buf;
}

/* Signals that mean the program failed, not that someone stopped it on purpose. */
static int crash_signal(int sig)
{
    switch (sig) {
    case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: case SIGABRT: case SIGSYS:
    case SIGTRAP: case SIGXCPU: case SIGXFSZ: case SIGKILL:
        return 1;
    default:
        return 0;
    }
}

struct kids {
    size_t *idx;                /* table indices sorted by ppid */
    size_t n;
};

static int by_ppid(const void *a, const void *b, void *table)
{
    const struct proc_table *t = table;
    const struct proc_stat *x = &t->v[*(const size_t *)a], *y = &t->v[*(const size_t *)b];
    return (x->ppid > y->ppid) - (x->ppid < y->ppid);
}

static size_t first_kid(const struct proc_table *t, const struct kids *k, int ppid)
{
    size_t lo = 0, hi = k->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->v[k->idx[mid]].ppid < ppid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t tindex(const struct proc_table *t, const struct proc_stat *e)
{
    return (size_t)(e - t->v);
}

static int matches_pattern(const struct collector *c, const struct proc_stat *e)
{
    for (size_t i = 0; i < c->npats; i++)
        if (!regexec(&c->pats[i], e->comm, 0, NULL, 0))
            return 1;
    return 0;
}

static void push_member(struct members *m, const struct proc_stat *e, int kind)
{
    m->v = grow(m->v, &m->cap, m->n, 1, sizeof *m->v);
    struct member *x = &m->v[m->n++];
    memset(x, 0, sizeof *x);
    x->pid = e->pid;
    x->ppid = e->ppid;
    x->start = e->starttime;
    x->kind = kind;
    x->state = e->state;
    snprintf(x->comm, sizeof x->comm, "%s", e->comm);
}

/* Breadth first from each root, so a parent is always read before its children: a
 * child reaped between the two reads is then missed (and the read retried), never
 * counted twice. */
static void bfs(const struct proc_table *t, const struct kids *k, char *mark, size_t root, int kind,
                struct members *out)
{
    size_t head = out->n;
    if (mark[root])
        return;
    mark[root] = 1;
    push_member(out, &t->v[root], kind);
    while (head < out->n) {
        int pid = out->v[head++].pid;
        for (size_t j = first_kid(t, k, pid); j < k->n && t->v[k->idx[j]].ppid == pid; j++) {
            size_t i = k->idx[j];
            if (!mark[i]) {
                mark[i] = 1;
                push_member(out, &t->v[i], R_NONE);
            }
        }
    }
}

static void build_set(struct collector *c, struct members *out)
{
    const struct proc_table *t = &c->table;
    struct kids k = { .idx = xrealloc(NULL, t->n * sizeof(size_t)), .n = t->n };
    char *mark = xrealloc(NULL, t->n ? t->n : 1), *named = xrealloc(NULL, t->n ? t->n : 1);
    memset(mark, 0, t->n);
    memset(named, 0, t->n);
    for (size_t i = 0; i < t->n; i++)
        k.idx[i] = i;
    qsort_r(k.idx, k.n, sizeof *k.idx, by_ppid, (void *)(uintptr_t)t);
    out->n = 0;

    for (size_t i = 0; i < c->nslots; i++) {
        const struct proc_stat *e = c->slots[i].gone ? NULL : live(t, c->slots[i].pid, c->slots[i].start);
        if (e && e->state != 'Z')
            named[tindex(t, e)] = (char)c->slots[i].kind;
    }
    for (size_t i = 0; c->npats && i < t->n; i++)
        if (!named[i] && matches_pattern(c, &t->v[i]))
            named[i] = R_PROCESS;
    /* A named process below another named one is reached as a descendant. */
    for (size_t i = 0; i < t->n; i++) {
        if (!named[i])
            continue;
        const struct proc_stat *up = procfs_find(t, t->v[i].ppid);
        int top = 1;
        for (int d = 0; up && d < MAX_DEPTH; d++, up = procfs_find(t, up->ppid))
            if (named[tindex(t, up)]) {
                top = 0;
                break;
            }
        if (top)
            bfs(t, &k, mark, i, named[i], out);
    }
    /* Members orphaned since (reparented to init) stay members until they exit;
     * start from the highest unvisited ancestor that is also a former member. */
    for (size_t i = 0; i < c->prev.n; i++) {
        const struct proc_stat *e = live(t, c->prev.v[i].pid, c->prev.v[i].start);
        if (!e || mark[tindex(t, e)])
            continue;
        for (int d = 0; d < MAX_DEPTH; d++) {
            const struct proc_stat *up = procfs_find(t, e->ppid);
            const struct member *pm = up ? find_member(&c->prev, up->pid) : NULL;
            if (!pm || pm->start != up->starttime || mark[tindex(t, up)])
                break;
            e = up;
        }
        bfs(t, &k, mark, tindex(t, e), R_NONE, out);
    }
    free(k.idx);
    free(mark);
    free(named);
}

/* Reads io, status and smaps_rollup of every member. Returns 0 when a member was gone
 * before we read it (so its counts may have moved into a parent already read). */
static int read_members(struct collector *c, struct members *m)
{
    char path[64], buf[4096];
    for (size_t i = 0; i < m->n; i++) {
        struct member *x = &m->v[i];
        snprintf(path, sizeof path, "%d/io", x->pid);
        if (procfs_read(c->rootfd, path, buf, sizeof buf) < 0) {
            if (errno == ENOENT || errno == ESRCH)
                return 0;
            x->io_denied = errno == EACCES || errno == EPERM;
        } else {
            x->have_io = procfs_parse_io(buf, &x->io) == 0;
        }
        if (x->state == 'Z')
            continue;
        snprintf(path, sizeof path, "%d/status", x->pid);
        struct proc_status st;
        if (procfs_read(c->rootfd, path, buf, sizeof buf) < 0) {
            if (errno == ENOENT || errno == ESRCH)
                return 0;
        } else if (procfs_parse_status(buf, &st) == 0) {
            x->rss = st.rss;
        }
        snprintf(path, sizeof path, "%d/smaps_rollup", x->pid);
        if (procfs_read(c->rootfd, path, buf, sizeof buf) >= 0)
            (void)procfs_parse_pss(buf, &x->pss);
    }
    return 1;
}

/* Where did a departed member's I/O go? Up its last known ancestry to the first member
 * still alive: that one reaped it (or reaped the one that did). */
static int io_stayed_in_set(const struct collector *c, const struct member *gone)
{
    int pid = gone->ppid;
    for (int d = 0; d < MAX_DEPTH; d++) {
        const struct member *p = find_member(&c->prev, pid);
        if (!p)
            return 0;
        if (live(&c->table, p->pid, p->start))
            return 1;
        pid = p->ppid;
    }
    return 0;
}

static void check_slots(struct collector *c, uint64_t now)
{
    for (size_t i = 0; i < c->nslots; i++) {
        struct slot *s = &c->slots[i];
        const struct proc_stat *e = s->gone ? NULL : live(&c->table, s->pid, s->start);
        if (e && e->state != 'Z')
            continue;
        int next = 0;
        char why[200];
        const struct proc_stat *n = NULL;
        if (s->pidfile && read_pidfile(s->pidfile, &next, why, sizeof why) == 0 && next != s->pid) {
            n = procfs_find(&c->table, next);
            if (n && n->state == 'Z')
                n = NULL;
        }
        char what[300];
        if (s->pidfile)
            snprintf(what, sizeof what, "master %d (%s) of %s", s->pid, s->comm, s->pidfile);
        else
            snprintf(what, sizeof what, "server process %d (%s)", s->pid, s->comm);
        if (!s->gone) {
            char how[120] = "is gone";
            if (e && e->has_exit_code)
                snprintf(how, sizeof how, "%s", signal_text(e->exit_code, why, sizeof why));
            pthread_mutex_lock(&c->mu);
            c->crashes++;
            pthread_mutex_unlock(&c->mu);
            if (n)
                add_event(c, now, "restart", "%s %s; the pid file now names %d (%s)", what, how, n->pid, n->comm);
            else
                add_event(c, now, "crash", "%s %s", what, how);
        } else if (n) {
            add_event(c, now, "restart", "%s came back as pid %d (%s)", what, n->pid, n->comm);
        }
        s->gone = 1;
        if (n) {
            s->pid = n->pid;
            s->start = n->starttime;
            snprintf(s->comm, sizeof s->comm, "%s", n->comm);
            s->gone = 0;
        }
    }
}

static void check_members(struct collector *c, struct members *cur, uint64_t now)
{
    for (size_t i = 0; i < c->prev.n; i++) {
        const struct member *p = &c->prev.v[i];
        if (p->kind != R_PROCESS)
            continue;
        const struct proc_stat *e = live(&c->table, p->pid, p->start);
        if (e && e->state != 'Z')
            continue;
        char how[120] = "is gone", buf[120];
        if (e && e->has_exit_code)
            snprintf(how, sizeof how, "%s", signal_text(e->exit_code, buf, sizeof buf));
        pthread_mutex_lock(&c->mu);
        c->crashes++;
        pthread_mutex_unlock(&c->mu);
        add_event(c, now, "crash", "server process %d (%s), matched by server.process, %s", p->pid, p->comm, how);
    }
    for (size_t i = 0; i < cur->n; i++) {
        struct member *m = &cur->v[i];
        const struct member *p = find_member(&c->prev, m->pid);
        if (p && p->start == m->start)
            m->zombie_noted = p->zombie_noted;
        const struct proc_stat *e = procfs_find(&c->table, m->pid);
        if (m->state != 'Z' || m->zombie_noted || m->kind != R_NONE || !e || !e->has_exit_code)
            continue;
        m->zombie_noted = 1;
        if (!WIFSIGNALED(e->exit_code) || !crash_signal(WTERMSIG(e->exit_code)))
            continue;
        char buf[120];
        pthread_mutex_lock(&c->mu);
        c->crashes++;
        pthread_mutex_unlock(&c->mu);
        add_event(c, now, "child_crash", "process %d (%s), child of %d, %s", m->pid, m->comm, m->ppid,
                  signal_text(e->exit_code, buf, sizeof buf));
    }
}

static void sample_procs(struct collector *c, uint64_t now, struct sample *s)
{
    struct members cur = { 0 };
    char err[300];
    for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
        if (procfs_scan(c->proc_root, &c->table, err, sizeof err) < 0) {
            /* Not a reason to declare the server dead: keep the last figures. */
            free(cur.v);
            pthread_mutex_lock(&c->mu);
            if (c->ns) {
                s->mem = c->s[c->ns - 1].mem;
                s->pss = c->s[c->ns - 1].pss;
                s->procs = c->s[c->ns - 1].procs;
            }
            pthread_mutex_unlock(&c->mu);
            s->io = c->io_total;
            return;
        }
        build_set(c, &cur);
        if (read_members(c, &cur))
            break;
    }
    check_slots(c, now);
    check_members(c, &cur, now);

    int denied = 0;
    for (size_t i = 0; i < c->prev.n; i++) {
        const struct member *p = &c->prev.v[i];
        if (!live(&c->table, p->pid, p->start) && p->have_io && !io_stayed_in_set(c, p))
            proc_io_add(&c->departed, &p->io);
    }
    struct proc_io sum = c->departed;
    for (size_t i = 0; i < cur.n; i++) {
        struct member *m = &cur.v[i];
        const struct member *p = find_member(&c->prev, m->pid);
        int is_new = !p || p->start != m->start;
        if (m->have_io) {
            proc_io_add(&sum, &m->io);
            /* What a process did before the run is not the run's. */
            if (is_new && m->start < c->start_ticks)
                proc_io_add(&c->offsets, &m->io);
        }
        if (m->io_denied && (is_new || !p->io_denied))
            denied++;
        if (m->state != 'Z') {
            s->procs++;
            s->mem += m->rss;
            s->pss += m->pss;
        }
    }
    if (denied)
        add_event(c, now, "io_unreadable", "/proc/PID/io of %d new server process(es) is not readable "
                  "(permission): their I/O is not counted", denied);
    /* Field by field: sum - offsets, never below zero, never below the last total. */
    struct proc_io total = sum, off = c->offsets;
    proc_io_max(&total, &off);
    proc_io_sub(&total, &off);
    proc_io_max(&c->io_total, &total);
    s->io = c->io_total;

    if (cur.n)
        qsort(cur.v, cur.n, sizeof *cur.v, by_member_pid);
    free(c->prev.v);
    c->prev = cur;
}

/* ------------------------------------------------------------------------------ */
/* Spool and store */

static int open_dir_at(int dfd, const char *name)
{
    return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static unsigned char entry_type(int dfd, const struct dirent *e)
{
    if (e->d_type != DT_UNKNOWN)
        return e->d_type;
    struct stat st;
    if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return DT_UNKNOWN;
    return S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : DT_UNKNOWN;
}

static int dots(const char *name)
{
    return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

/* Regular files below fd, recursively (Postfix hashes its queues into subdirectories).
 * Takes ownership of fd. */
static uint64_t count_files(int fd, int depth)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return 0;
    }
    uint64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (dots(e->d_name))
            continue;
        unsigned char type = entry_type(dirfd(d), e);
        if (type == DT_REG) {
            n++;
        } else if (type == DT_DIR && depth < MAX_DEPTH) {
            int sub = open_dir_at(dirfd(d), e->d_name);
            if (sub >= 0)
                n += count_files(sub, depth + 1);
        }
    }
    closedir(d);
    return n;
}

static uint64_t walk_spool(const struct collector *c)
{
    uint64_t n = 0;
    for (size_t i = 0; i < c->nspool; i++) {
        int fd = open(c->spool_dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0)
            n += count_files(fd, 0);
    }
    return n;
}

struct walk {
    struct collector *c;
    struct cache mbox, dbox;    /* this walk's entries, replacing the collector's */
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
    int fd = open_dir_at(parent, sub);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && entry_type(dirfd(d), e) == DT_REG) {
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
    const struct cached *hit = cache_find(&w->c->mbox_cache, st.st_dev, st.st_ino, &key, 1);
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

/* ---- Dovecot index replay (dbox mailboxes) ---- */

/* Layout of Dovecot's mail index and transaction log (lib-index: mail-index.h,
 * mail-transaction-log.h), little-endian. */
enum {
    IDX_HEADER_SIZE = 4, IDX_RECORD_SIZE = 8, IDX_MESSAGES = 32,
    IDX_LOG_SEQ = 60, IDX_LOG_HEAD = 68, IDX_MIN = 72,
    LOG_HDR_SIZE = 2, LOG_FILE_SEQ = 8, LOG_MIN = 24,
    T_EXPUNGE = 0x0001, T_APPEND = 0x0002, T_EXPUNGE_GUID = 0x2000, T_EXPUNGE_PROT = 0xcd90,
    T_TYPE_MASK = 0x0fffffff, T_EXTERNAL = 0x10000000,
};

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Record sizes are stored 7 bits per byte with the high bit set, in units of 4. */
static uint32_t log_size(const unsigned char *p)
{
    if ((p[0] & p[1] & p[2] & p[3] & 0x80) == 0)
        return 0;
    return ((uint32_t)(p[3] & 0x7f) << 2) | ((uint32_t)(p[2] & 0x7f) << 9) |
           ((uint32_t)(p[1] & 0x7f) << 16) | ((uint32_t)(p[0] & 0x7f) << 23);
}

struct uidset {
    uint32_t *v;                /* ascending; 0 = expunged */
    size_t n, cap, live;
};

static void uid_add(struct uidset *u, uint32_t uid)
{
    /* Dovecot refuses appends below next_uid, so uids only grow. */
    if (!uid || (u->n && uid <= u->v[u->n - 1]))
        return;
    u->v = grow(u->v, &u->cap, u->n, 1, sizeof *u->v);
    u->v[u->n++] = uid;
    u->live++;
}

static void uid_expunge(struct uidset *u, uint32_t lo, uint32_t hi)
{
    size_t a = 0, b = u->n;
    while (a < b) {             /* first slot whose uid may be >= lo; zeros sort anywhere */
        size_t m = (a + b) / 2, k = m;
        while (k < b && !u->v[k])
            k++;
        if (k == b || u->v[k] >= lo)
            b = m;
        else
            a = k + 1;
    }
    for (size_t i = a; i < u->n; i++) {
        if (!u->v[i])
            continue;
        if (u->v[i] > hi)
            break;
        u->v[i] = 0;
        u->live--;
    }
}

static struct stamp file_stamp(int dfd, const char *name)
{
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
        return (struct stamp){ 0, 0, 0, 0 };
    return stamp_of(&st);
}

static unsigned char *slurp(int dfd, const char *name, size_t *len)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    *len = 0;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return NULL;
    }
    unsigned char *buf = xrealloc(NULL, (size_t)st.st_size + 1);
    size_t used = 0;
    while (used < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + used, (size_t)st.st_size - used);
        if (r <= 0)
            break;
        used += (size_t)r;
    }
    close(fd);
    *len = used;
    return buf;
}

/* Applies the log's records from offset on: appends add uids, expunges that a sync
 * carried out (EXTERNAL) remove them; expunge requests change nothing yet. */
static void replay_log(struct uidset *u, const unsigned char *log, size_t len, size_t from)
{
    size_t off = from;
    while (off + 8 <= len) {
        uint32_t size = log_size(log + off), type = le32(log + off + 4);
        if (size < 8 || off + size > len)
            break;              /* a record still being written */
        const unsigned char *d = log + off + 8;
        size_t dlen = size - 8;
        uint32_t t = type & T_TYPE_MASK;
        if (t == T_APPEND) {
            for (size_t i = 0; i + 8 <= dlen; i += 8)
                uid_add(u, le32(d + i));
        } else if (t == (T_EXPUNGE | T_EXPUNGE_PROT) && (type & T_EXTERNAL)) {
            for (size_t i = 0; i + 8 <= dlen; i += 8)
                uid_expunge(u, le32(d + i), le32(d + i + 4));
        } else if (t == (T_EXPUNGE_GUID | T_EXPUNGE_PROT) && (type & T_EXTERNAL)) {
            for (size_t i = 0; i + 20 <= dlen; i += 20)
                uid_expunge(u, le32(d + i), le32(d + i));
        }
        off += size;
    }
}

/* Messages of one dbox mailbox (a dbox-Mails directory): dovecot.index holds the
 * mailbox as of a log position, the transaction log what happened since. Dovecot
 * rewrites the index only now and then, so the log must be replayed to be exact. */
static uint64_t replay_mailbox(int dfd)
{
    size_t ilen, llen, l2len;
    unsigned char *idx = slurp(dfd, "dovecot.index", &ilen);
    unsigned char *log = slurp(dfd, "dovecot.index.log", &llen);
    unsigned char *log2 = slurp(dfd, "dovecot.index.log.2", &l2len);
    struct uidset u = { 0 };
    uint32_t seq = 0, head = 0;
    if (idx && ilen >= IDX_MIN) {
        uint32_t hsize = le32(idx + IDX_HEADER_SIZE), rsize = le32(idx + IDX_RECORD_SIZE);
        uint32_t count = le32(idx + IDX_MESSAGES);
        seq = le32(idx + IDX_LOG_SEQ);
        head = le32(idx + IDX_LOG_HEAD);
        for (uint32_t i = 0; rsize >= 4 && i < count && hsize + (size_t)(i + 1) * rsize <= ilen; i++)
            uid_add(&u, le32(idx + hsize + (size_t)i * rsize));
    }
    const unsigned char *logs[2] = { log2, log };
    size_t lens[2] = { l2len, llen };
    for (int i = 0; i < 2; i++) {
        if (!logs[i] || lens[i] < LOG_MIN)
            continue;
        uint32_t hdr = (uint32_t)(logs[i][LOG_HDR_SIZE] | logs[i][LOG_HDR_SIZE + 1] << 8);
        uint32_t fseq = le32(logs[i] + LOG_FILE_SEQ);
        if (seq && fseq < seq)
            continue;           /* already in the index */
        replay_log(&u, logs[i], lens[i], seq && fseq == seq && head > hdr ? head : hdr);
    }
    free(idx);
    free(log);
    free(log2);
    free(u.v);
    return u.live;
}

/* Replays only mailboxes whose index or logs changed since the last walk. */
static uint64_t dbox_messages(struct walk *w, int dfd)
{
    struct stat dir;
    if (fstat(dfd, &dir) < 0)
        return 0;
    struct stamp key[3] = { file_stamp(dfd, "dovecot.index"), file_stamp(dfd, "dovecot.index.log"),
                            file_stamp(dfd, "dovecot.index.log.2") };
    const struct cached *hit = cache_find(&w->c->dbox_cache, dir.st_dev, dir.st_ino, key, 3);
    uint64_t n = hit ? hit->messages : replay_mailbox(dfd);
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
    enum store_format f = w->c->fmt;
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
        if (dots(e->d_name))
            continue;
        unsigned char type = entry_type(dirfd(d), e);
        if (type == DT_DIR) {
            if (maildir && (!strcmp(e->d_name, "cur") || !strcmp(e->d_name, "new") || !strcmp(e->d_name, "tmp")))
                continue;
            int sub = depth < MAX_DEPTH ? open_dir_at(dirfd(d), e->d_name) : -1;
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

static void walk_store(struct collector *c, struct sample *s)
{
    struct walk w = { .c = c };
    for (size_t i = 0; i < c->nstore; i++) {
        int fd = open(c->store_dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0)
            walk_store_dir(&w, fd, "", 0);
    }
    cache_replace(&c->mbox_cache, &w.mbox);
    cache_replace(&c->dbox_cache, &w.dbox);
    s->store_messages = w.messages;
    s->store_bytes = w.bytes;
}

/* ------------------------------------------------------------------------------ */
/* Sampling */

void collector_sample(struct collector *c)
{
    struct sample s = { 0 };
    s.t = mono_ns();
    if (c->has_procs)
        sample_procs(c, s.t, &s);
    if (c->has_spool)
        s.spool = walk_spool(c);
    if (c->has_store)
        walk_store(c, &s);
    if (c->lw) {
        logwatch_poll(c->lw, s.t);
        s.log_lines = logwatch_take(c->lw, c->hits_scratch);
    }
    pthread_mutex_lock(&c->mu);
    if (c->ns == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->s = xrealloc(c->s, c->cap * sizeof *c->s);
        c->hits = xrealloc(c->hits, c->cap * (c->ncls ? c->ncls : 1) * sizeof *c->hits);
    }
    c->s[c->ns] = s;
    if (c->ncls)
        memcpy(&c->hits[c->ns * c->ncls], c->hits_scratch, c->ncls * sizeof *c->hits);
    c->ns++;
    if (s.mem > c->mem_peak)
        c->mem_peak = s.mem;
    if (s.pss > c->pss_peak)
        c->pss_peak = s.pss;
    if (s.spool > c->spool_peak)
        c->spool_peak = s.spool;
    if (s.procs > c->procs_peak)
        c->procs_peak = s.procs;
    pthread_mutex_unlock(&c->mu);
}

static void *sampler(void *arg)
{
    struct collector *c = arg;
    uint64_t next = mono_ns() + c->interval;
    pthread_mutex_lock(&c->mu);
    while (!c->stopping) {
        struct timespec ts = { (time_t)(next / 1000000000ull), (long)(next % 1000000000ull) };
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
        if (c->stopping)
            break;
        uint64_t now = mono_ns();
        if (now < next)
            continue;
        pthread_mutex_unlock(&c->mu);
        collector_sample(c);
        /* A sample longer than the period skips ticks rather than piling them up. */
        now = mono_ns();
        while (next <= now)
            next += c->interval;
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* ------------------------------------------------------------------------------ */
/* Start and stop */

static uint64_t boot_ticks_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    long hz = sysconf(_SC_CLK_TCK);
    return (uint64_t)ts.tv_sec * (uint64_t)hz + (uint64_t)ts.tv_nsec * (uint64_t)hz / 1000000000ull;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int check_io_readable(struct collector *c, int pid, const char *key, const char *val,
                             char *err, size_t errlen)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "%d/io", pid);
    if (procfs_read(c->rootfd, path, buf, sizeof buf) < 0 && (errno == EACCES || errno == EPERM))
        return fail(err, errlen, "%s: '%s': cannot read %s/%d/io (%s): the I/O of another user's "
                    "processes needs root", key, val, c->proc_root, pid, strerror(errno));
    return 0;
}

static int add_slot(struct collector *c, int kind, const char *val, char *err, size_t errlen)
{
    const char *key = kind == R_PID ? "server.pid" : "server.pidfile";
    int pid = 0;
    char why[200];
    if (kind == R_PID) {
        if (procfs_parse_pidfile(val, &pid) < 0)
            return fail(err, errlen, "%s: '%s': not a process id", key, val);
    } else if (read_pidfile(val, &pid, why, sizeof why) < 0) {
        return fail(err, errlen, "%s: '%s': %s", key, val, why);
    }
    const struct proc_stat *e = procfs_find(&c->table, pid);
    if (!e || e->state == 'Z') {
        if (kind == R_PID)
            return fail(err, errlen, "%s: '%s': no such process", key, val);
        return fail(err, errlen, "%s: '%s' names pid %d, which is not running", key, val, pid);
    }
    if (check_io_readable(c, pid, key, val, err, errlen) < 0)
        return -1;
    c->slots = xrealloc(c->slots, (c->nslots + 1) * sizeof *c->slots);
    struct slot *s = &c->slots[c->nslots++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->pidfile = kind == R_PIDFILE ? xstrdup(val) : NULL;
    s->pid = pid;
    s->start = e->starttime;
    snprintf(s->comm, sizeof s->comm, "%s", e->comm);
    return 0;
}

static int add_pattern(struct collector *c, const char *val, char *err, size_t errlen)
{
    regex_t re;
    int rc = regcomp(&re, val, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char why[200];
        regerror(rc, &re, why, sizeof why);
        return fail(err, errlen, "server.process: '%s': bad regular expression: %s", val, why);
    }
    int found = 0;
    for (size_t i = 0; i < c->table.n && !found; i++)
        if (!regexec(&re, c->table.v[i].comm, 0, NULL, 0)) {
            found = 1;
            if (check_io_readable(c, c->table.v[i].pid, "server.process", val, err, errlen) < 0) {
                regfree(&re);
                return -1;
            }
        }
    if (!found) {
        regfree(&re);
        return fail(err, errlen, "server.process: '%s' matches no running process name", val);
    }
    c->pats = xrealloc(c->pats, (c->npats + 1) * sizeof *c->pats);
    c->pat_src = xrealloc(c->pat_src, (c->npats + 1) * sizeof *c->pat_src);
    c->pats[c->npats] = re;
    c->pat_src[c->npats++] = xstrdup(val);
    return 0;
}

static int add_dirs(char ***out, size_t *n, const struct strlist *l, const char *key, char *err, size_t errlen)
{
    for (size_t i = 0; i < l->n; i++) {
        struct stat st;
        if (stat(l->v[i], &st) < 0)
            return fail(err, errlen, "%s: '%s': %s", key, l->v[i], strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return fail(err, errlen, "%s: '%s': not a directory", key, l->v[i]);
        *out = xrealloc(*out, (*n + 1) * sizeof **out);
        (*out)[(*n)++] = xstrdup(l->v[i]);
    }
    return 0;
}

static int configure(struct collector *c, const struct server_config *cfg, char *err, size_t errlen)
{
    if (cfg->pids.n || cfg->pidfiles.n || cfg->processes.n) {
        c->has_procs = 1;
        c->rootfd = open(c->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (c->rootfd < 0 || procfs_scan(c->proc_root, &c->table, err, errlen) < 0)
            return fail(err, errlen, "%s: %s", c->proc_root, strerror(errno));
    }
    for (size_t i = 0; i < cfg->pids.n; i++)
        if (add_slot(c, R_PID, cfg->pids.v[i], err, errlen) < 0)
            return -1;
    for (size_t i = 0; i < cfg->pidfiles.n; i++)
        if (add_slot(c, R_PIDFILE, cfg->pidfiles.v[i], err, errlen) < 0)
            return -1;
    for (size_t i = 0; i < cfg->processes.n; i++)
        if (add_pattern(c, cfg->processes.v[i], err, errlen) < 0)
            return -1;
    if (add_dirs(&c->spool_dirs, &c->nspool, &cfg->spool_dirs, "server.spool_dir", err, errlen) < 0 ||
        add_dirs(&c->store_dirs, &c->nstore, &cfg->store_dirs, "server.store_dir", err, errlen) < 0)
        return -1;
    c->has_spool = c->nspool > 0;
    c->has_store = c->nstore > 0;
    const char *fmt = cfg->store_format && *cfg->store_format ? cfg->store_format : "auto";
    int found = 0;
    for (int i = 0; format_names[i]; i++)
        if (!strcasecmp(fmt, format_names[i])) {
            c->fmt = (enum store_format)i;
            found = 1;
        }
    if (!found)
        return fail(err, errlen, "server.store_format: '%s': expected auto, maildir, mbox, sdbox or mdbox", fmt);
    if (cfg->logs.n) {
        c->lw = logwatch_from_config(cfg, c->t0, err, errlen);
        if (!c->lw)
            return -1;
        logwatch_on_event(c->lw, on_log_event, c);
        c->has_logs = 1;
        c->ncls = logwatch_nclasses(c->lw);
        c->hits_scratch = xrealloc(NULL, (c->ncls ? c->ncls : 1) * sizeof *c->hits_scratch);
    }
    if ((c->has_procs || c->has_spool || c->has_store || c->has_logs) && cfg->sample_interval == 0)
        return fail(err, errlen, "server.sample_interval: must be above 0");
    c->interval = cfg->sample_interval;
    c->active = c->has_procs || c->has_spool || c->has_store || c->has_logs;
    return 0;
}

struct collector *collector_start_opts(const struct server_config *cfg, uint64_t t0_ns,
                                       const struct collector_opts *opts, char *err, size_t errlen)
{
    struct collector *c = calloc(1, sizeof *c);
    if (!c)
        abort();
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    c->rootfd = -1;
    c->t0 = t0_ns;
    c->proc_root = xstrdup(opts && opts->proc_root ? opts->proc_root : "/proc");
    c->manual = opts && opts->manual;
    c->start_ticks = opts && opts->start_ticks ? opts->start_ticks : boot_ticks_now();
    if (configure(c, cfg, err, errlen) < 0) {
        collector_free(c);
        return NULL;
    }
    if (!c->active)
        return c;
    collector_sample(c);        /* the baseline every delta is taken from */
    if (!c->manual) {
        /* Signals are the run controller's: the sampler blocks them all. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc = pthread_create(&c->thread, NULL, sampler, c);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc) {
            snprintf(err, errlen, "collector thread: %s", strerror(rc));
            collector_free(c);
            return NULL;
        }
        c->thread_running = 1;
    }
    return c;
}

struct collector *collector_start(const struct server_config *cfg, uint64_t t0_ns, char *err, size_t errlen)
{
    return collector_start_opts(cfg, t0_ns, NULL, err, errlen);
}

void collector_stop(struct collector *c)
{
    if (!c || c->stopped)
        return;
    if (c->thread_running) {
        pthread_mutex_lock(&c->mu);
        c->stopping = 1;
        pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->thread, NULL);
        c->thread_running = 0;
    }
    if (c->active)
        collector_sample(c);
    c->stopped = 1;
}

void collector_free(struct collector *c)
{
    if (!c)
        return;
    collector_stop(c);
    for (size_t i = 0; i < c->nslots; i++)
        free(c->slots[i].pidfile);
    free(c->slots);
    for (size_t i = 0; i < c->npats; i++) {
        regfree(&c->pats[i]);
        free(c->pat_src[i]);
    }
    free(c->pats);
    free(c->pat_src);
    for (size_t i = 0; i < c->nspool; i++)
        free(c->spool_dirs[i]);
    free(c->spool_dirs);
    for (size_t i = 0; i < c->nstore; i++)
        free(c->store_dirs[i]);
    free(c->store_dirs);
    logwatch_free(c->lw);
    free(c->hits_scratch);
    procfs_table_free(&c->table);
    free(c->prev.v);
    free(c->mbox_cache.v);
    free(c->dbox_cache.v);
    free(c->s);
    free(c->hits);
    for (size_t i = 0; i < c->nev; i++)
        free(c->ev[i].text);
    free(c->ev);
    if (c->rootfd >= 0)
        close(c->rootfd);
    free(c->proc_root);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* ------------------------------------------------------------------------------ */
/* Results */

void collector_now(struct collector *c, struct collector_now *out)
{
    memset(out, 0, sizeof *out);
    if (!c || !c->active)
        return;
    pthread_mutex_lock(&c->mu);
    out->active = 1;
    if (c->ns) {
        const struct sample *s = &c->s[c->ns - 1];
        out->mem = s->mem;
        out->spool = s->spool;
        out->store_messages = s->store_messages;
        out->store_bytes = s->store_bytes;
        out->procs = s->procs;
    }
    out->mem_peak = c->mem_peak;
    out->crashes = (unsigned)c->crashes;
    pthread_mutex_unlock(&c->mu);
    out->log_hits = c->lw ? logwatch_total(c->lw) : 0;
}

static json_t *num_or_null(int measured, uint64_t v)
{
    return measured ? json_integer((json_int_t)v) : json_null();
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

void collector_json_summary(struct collector *c, json_t *summary)
{
    int p = c && c->has_procs, sp = c && c->has_spool, st = c && c->has_store, lg = c && c->has_logs;
    struct sample first = { 0 }, last = { 0 };
    uint64_t mem_peak = 0, pss_peak = 0, spool_peak = 0, crashes = 0, ns = 0;
    unsigned procs_peak = 0;
    if (c) {
        pthread_mutex_lock(&c->mu);
        if (c->ns) {
            first = c->s[0];
            last = c->s[c->ns - 1];
        }
        mem_peak = c->mem_peak;
        pss_peak = c->pss_peak;
        spool_peak = c->spool_peak;
        crashes = c->crashes;
        procs_peak = c->procs_peak;
        ns = c->ns;
        pthread_mutex_unlock(&c->mu);
    }
    json_object_set_new(summary, "spool", num_or_null(sp, last.spool));
    json_object_set_new(summary, "spool_peak", num_or_null(sp, spool_peak));
    json_object_set_new(summary, "mem", num_or_null(p, mem_peak));
    json_object_set_new(summary, "mem_final", num_or_null(p, last.mem));
    json_object_set_new(summary, "mem_pss", num_or_null(p, pss_peak));
    /* Operations are syscr/syscw. Bytes are rchar/wchar, the bytes that went through
     * those same calls (files, sockets, pipes), so that ibytes/input is a size per
     * call; read_bytes hardly moves when files are served from the page cache, so the
     * storage-layer counts are given apart, writes net of cancelled ones (queue files
     * deleted before they reached the disk). */
    json_object_set_new(summary, "input", num_or_null(p, last.io.syscr - first.io.syscr));
    json_object_set_new(summary, "output", num_or_null(p, last.io.syscw - first.io.syscw));
    json_object_set_new(summary, "ibytes", num_or_null(p, last.io.rchar - first.io.rchar));
    json_object_set_new(summary, "obytes", num_or_null(p, last.io.wchar - first.io.wchar));
    json_object_set_new(summary, "disk_read_bytes", num_or_null(p, last.io.read_bytes - first.io.read_bytes));
    json_object_set_new(summary, "disk_write_bytes",
                        num_or_null(p, sub0(last.io.write_bytes - first.io.write_bytes,
                                            last.io.cancelled_write_bytes - first.io.cancelled_write_bytes)));
    json_object_set_new(summary, "store_messages", num_or_null(st, last.store_messages));
    json_object_set_new(summary, "store_bytes", num_or_null(st, last.store_bytes));
    json_object_set_new(summary, "log_hits", num_or_null(lg, lg ? logwatch_total(c->lw) : 0));
    json_object_set_new(summary, "log_classes", lg ? logwatch_json_classes(c->lw) : json_null());
    json_object_set_new(summary, "server_crashes", num_or_null(p, crashes));
    json_object_set_new(summary, "server_procs_peak", num_or_null(p, procs_peak));
    json_object_set_new(summary, "server_samples", json_integer((json_int_t)ns));
}

/* Index of the last sample taken at or before t, or -1. */
static ssize_t sample_at(const struct collector *c, uint64_t t)
{
    size_t lo = 0, hi = c->ns;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->s[mid].t <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (ssize_t)lo - 1;
}

void collector_json_interval(struct collector *c, json_t *entry, uint64_t from_ns, uint64_t to_ns)
{
    if (!c || !c->active)
        return;
    json_t *o = json_object();
    pthread_mutex_lock(&c->mu);
    ssize_t a = sample_at(c, from_ns), b = sample_at(c, to_ns);
    /* Before the first sample nothing had happened yet: the baseline stands in. */
    const struct sample *sa = c->ns ? &c->s[a < 0 ? 0 : a] : NULL, *sb = c->ns ? &c->s[b < 0 ? 0 : b] : NULL;
    struct sample z = { 0 };
    if (!sa)
        sa = sb = &z;
    int p = c->has_procs;
    json_object_set_new(o, "mem", num_or_null(p, sb->mem));
    json_object_set_new(o, "spool", num_or_null(c->has_spool, sb->spool));
    json_object_set_new(o, "store_messages", num_or_null(c->has_store, sb->store_messages));
    json_object_set_new(o, "store_bytes", num_or_null(c->has_store, sb->store_bytes));
    json_object_set_new(o, "procs", num_or_null(p, sb->procs));
    json_object_set_new(o, "input", num_or_null(p, sub0(sb->io.syscr, sa->io.syscr)));
    json_object_set_new(o, "output", num_or_null(p, sub0(sb->io.syscw, sa->io.syscw)));
    json_object_set_new(o, "ibytes", num_or_null(p, sub0(sb->io.rchar, sa->io.rchar)));
    json_object_set_new(o, "obytes", num_or_null(p, sub0(sb->io.wchar, sa->io.wchar)));
    if (c->has_logs) {
        json_t *h = json_object();
        for (size_t k = 0; k < c->ncls; k++) {
            uint64_t n = 0;
            for (ssize_t i = a + 1; i <= b; i++)
                n += c->hits[(size_t)i * c->ncls + k];
            json_object_set_new(h, logwatch_class_name(c->lw, k), json_integer((json_int_t)n));
        }
        json_object_set_new(o, "log_hits", h);
    } else {
        json_object_set_new(o, "log_hits", json_null());
    }
    pthread_mutex_unlock(&c->mu);
    json_object_set_new(entry, "server", o);
}

void collector_json_events(struct collector *c, json_t *events)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->nev; i++) {
        const struct event *e = &c->ev[i];
        double t = e->t > c->t0 ? (double)(e->t - c->t0) / 1e9 : 0;
        json_array_append_new(events, json_pack("{s:f, s:s, s:o}", "t", (double)(int64_t)(t * 1000) / 1000,
                                                "kind", e->kind, "text", json_text(e->text, strlen(e->text))));
    }
    pthread_mutex_unlock(&c->mu);
}

int collector_table_row(struct collector *c, int i, char *name, size_t nlen, char *value, size_t vlen)
{
    static const char *const rows[] = { "spool", "mem", "input", "output", "ibytes", "obytes", "log hits" };
    if (!c || !c->active || i < 0 || i >= (int)(sizeof rows / sizeof rows[0]))
        return 0;
    struct sample first = { 0 }, last = { 0 };
    uint64_t mem_peak;
    pthread_mutex_lock(&c->mu);
    if (c->ns) {
        first = c->s[0];
        last = c->s[c->ns - 1];
    }
    mem_peak = c->mem_peak;
    pthread_mutex_unlock(&c->mu);
    snprintf(name, nlen, "%s", rows[i]);
    int measured = i == 0 ? c->has_spool : i == 6 ? c->has_logs : c->has_procs;
    if (!measured) {
        snprintf(value, vlen, "-");
        return 1;
    }
    switch (i) {
    case 0: fmt_count(value, vlen, (double)last.spool); break;
    case 1: fmt_bytes(value, vlen, (double)mem_peak); break;
    case 2: fmt_count(value, vlen, (double)(last.io.syscr - first.io.syscr)); break;
    case 3: fmt_count(value, vlen, (double)(last.io.syscw - first.io.syscw)); break;
    case 4: fmt_bytes(value, vlen, (double)(last.io.rchar - first.io.rchar)); break;
    case 5: fmt_bytes(value, vlen, (double)(last.io.wchar - first.io.wchar)); break;
    default: fmt_count(value, vlen, (double)logwatch_total(c->lw)); break;
    }
    return 1;
}
