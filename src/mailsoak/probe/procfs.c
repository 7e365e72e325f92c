/* procfs: text parsers for /proc files and a scan of every process under a proc
 * root. No state, no sampling policy: that is the collector's. Formats are those of
 * proc(5); fields the kernel may add later are ignored. */
#include "probe/procfs.h"
#include "lib/alloc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Field numbers of /proc/PID/stat as proc(5) counts them (1 = pid, 2 = comm). */
enum { F_STATE = 3, F_PPID = 4, F_UTIME = 14, F_CSTIME = 17, F_STARTTIME = 22, F_RSS = 24, F_EXIT_CODE = 52 };

/* The next space-separated number; a negative one (priority, nice) wraps, which is
 * harmless since none of the fields we keep can be negative. */
static int next_u64(const char **p, uint64_t *v)
{
    const char *s = *p;
    char *end;
    while (*s == ' ')
        s++;
    if (!isdigit((unsigned char)*s) && *s != '-')
        return -1;
    errno = 0;
    *v = *s == '-' ? (uint64_t)strtoll(s, &end, 10) : strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    *p = end;
    return 0;
}

int procfs_parse_stat(const char *buf, struct proc_stat *out)
{
    memset(out, 0, sizeof *out);
    char *end;
    errno = 0;
    long pid = strtol(buf, &end, 10);
    if (errno || end == buf || pid <= 0 || *end != ' ')
        return -1;
    /* comm may hold spaces and parentheses: it ends at the last ')'. */
    const char *open = strchr(end, '('), *close = strrchr(buf, ')');
    if (!open || !close || close < open)
        return -1;
    size_t n = (size_t)(close - open - 1);
    if (n >= sizeof out->comm)
        n = sizeof out->comm - 1;
    memcpy(out->comm, open + 1, n);
    out->comm[n] = 0;
    out->pid = (int)pid;

    const char *p = close + 1;
    while (*p == ' ')
        p++;
    if (!*p || *p == '\n')
        return -1;
    out->state = *p++;
    int have_ppid = 0, have_start = 0, have_rss = 0;
    for (int field = F_PPID; field <= F_EXIT_CODE; field++) {
        uint64_t v;
        if (next_u64(&p, &v) < 0)
            break;
        switch (field) {
        case F_PPID: out->ppid = (int)v; have_ppid = 1; break;
        case F_STARTTIME: out->starttime = v; have_start = 1; break;
        case F_RSS: out->rss_pages = v; have_rss = 1; break;
        case F_EXIT_CODE: out->exit_code = (int)v; out->has_exit_code = 1; break;
        default:
            if (field >= F_UTIME && field <= F_CSTIME)
                out->cpu_ticks += v;
            break;
        }
    }
    return have_ppid && have_start && have_rss ? 0 : -1;
}

/* "Key:\t  123 kB" lines; returns the value in bytes when the unit is kB. */
static int line_value(const char *buf, const char *key, uint64_t *v)
{
    size_t klen = strlen(key);
    for (const char *l = buf; *l; l++) {
        if (strncmp(l, key, klen) || l[klen] != ':') {
            l = strchr(l, '\n');
            if (!l)
                break;
            continue;
        }
        const char *s = l + klen + 1;
        char *end;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!isdigit((unsigned char)*s))
            return -1;
        errno = 0;
        uint64_t x = strtoull(s, &end, 10);
        if (errno)
            return -1;
        while (*end == ' ')
            end++;
        *v = strncmp(end, "kB", 2) ? x : x * 1024;
        return 0;
    }
    return -1;
}

int procfs_parse_status(const char *buf, struct proc_status *out)
{
    uint64_t ppid;
    memset(out, 0, sizeof *out);
    if (line_value(buf, "PPid", &ppid) < 0)
        return -1;
    out->ppid = (int)ppid;
    out->have_rss = line_value(buf, "VmRSS", &out->rss) == 0;
    if (line_value(buf, "VmHWM", &out->hwm) < 0)
        out->hwm = 0;
    return 0;
}

int procfs_parse_io(const char *buf, struct proc_io *out)
{
    static const struct { const char *key; size_t off; } keys[] = {
        { "rchar", offsetof(struct proc_io, rchar) },
        { "wchar", offsetof(struct proc_io, wchar) },
        { "syscr", offsetof(struct proc_io, syscr) },
        { "syscw", offsetof(struct proc_io, syscw) },
        { "read_bytes", offsetof(struct proc_io, read_bytes) },
        { "write_bytes", offsetof(struct proc_io, write_bytes) },
        { "cancelled_write_bytes", offsetof(struct proc_io, cancelled_write_bytes) },
    };
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        uint64_t *v = (uint64_t *)((char *)out + keys[i].off);
        /* The storage-layer counters are absent without CONFIG_TASK_IO_ACCOUNTING. */
        if (line_value(buf, keys[i].key, v) < 0 && i < 4)
            return -1;
    }
    return 0;
}

int procfs_parse_pss(const char *buf, uint64_t *bytes)
{
    return line_value(buf, "Pss", bytes);
}

int procfs_parse_pidfile(const char *buf, int *pid)
{
    char *end;
    while (isspace((unsigned char)*buf))
        buf++;
    if (!isdigit((unsigned char)*buf))
        return -1;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (errno || v <= 0 || v > 0x3fffffff)
        return -1;
    /* PostgreSQL's postmaster.pid goes on after its first line (data directory, start
     * time, port, socket directory...): only that first line is the pid. */
    while (*end == ' ' || *end == '\t' || *end == '\r')
        end++;
    if (*end && *end != '\n')
        return -1;
    *pid = (int)v;
    return 0;
}

#define IO_FIELDS(X) X(rchar) X(wchar) X(syscr) X(syscw) X(read_bytes) X(write_bytes) X(cancelled_write_bytes) \
    X(cpu_ms)

void proc_io_add(struct proc_io *acc, const struct proc_io *x)
{
#define ADD(f) acc->f += x->f;
    IO_FIELDS(ADD)
#undef ADD
}

void proc_io_sub(struct proc_io *acc, const struct proc_io *x)
{
#define SUB(f) acc->f -= x->f;
    IO_FIELDS(SUB)
#undef SUB
}

void proc_io_max(struct proc_io *acc, const struct proc_io *x)
{
#define MAX(f) if (x->f > acc->f) acc->f = x->f;
    IO_FIELDS(MAX)
#undef MAX
}

ssize_t procfs_read(int dfd, const char *path, char *buf, size_t len)
{
    int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t used = 0;
    while (used + 1 < len) {
        ssize_t r = read(fd, buf + used, len - 1 - used);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (r == 0)
            break;
        used += (size_t)r;
    }
    close(fd);
    buf[used] = 0;
    return (ssize_t)used;
}

static int by_pid(const void *a, const void *b)
{
    const struct proc_stat *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

int procfs_scan(const char *root, struct proc_table *t, char *err, size_t errlen)
{
    int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        snprintf(err, errlen, "%s: %s", root, strerror(errno));
        return -1;
    }
    DIR *d = fdopendir(rootfd);
    if (!d) {
        snprintf(err, errlen, "%s: %s", root, strerror(errno));
        close(rootfd);
        return -1;
    }
    t->n = 0;
    struct dirent *e;
    char path[300], buf[1024];
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof path, "%s/stat", e->d_name);
        if (procfs_read(dirfd(d), path, buf, sizeof buf) < 0)
            continue;
        struct proc_stat st;
        if (procfs_parse_stat(buf, &st) < 0)
            continue;
        t->v = grow(t->v, &t->cap, t->n, 1, sizeof *t->v);
        t->v[t->n++] = st;
    }
    closedir(d);
    if (t->n)
        qsort(t->v, t->n, sizeof *t->v, by_pid);
    return 0;
}

/* A process as the last rescan left it. */
struct kept {
    struct proc_stat st;
    ino_t ino;                  /* of its /proc/PID when read */
    int fd;                     /* its stat file, or -1 */
};

struct proc_scan {
    int rootfd;                 /* the caller's */
    size_t keep, open;          /* stat files kept open: at most, now */
    struct kept *v, *next;      /* by pid; the rescan under way */
    size_t n, cap, nnext, capnext;
};

struct proc_scan *procfs_scan_new(int rootfd, size_t keep)
{
    struct proc_scan *s = xcalloc(1, sizeof *s);
    s->rootfd = rootfd;
    s->keep = keep;
    return s;
}

void procfs_scan_free(struct proc_scan *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].fd >= 0)
            close(s->v[i].fd);
    free(s->v);
    free(s->next);
    free(s);
}

static int by_kept_pid(const void *a, const void *b)
{
    const struct kept *x = a, *y = b;
    return (x->st.pid > y->st.pid) - (x->st.pid < y->st.pid);
}

/* Reads k's stat through its open file, or opens it (and keeps it open while the
 * budget allows). -1 when the process is gone or its stat does not parse. */
static int reread(struct proc_scan *s, struct kept *k, int pid)
{
    char buf[1024];
    ssize_t n = -1;
    if (k->fd >= 0 && (n = pread(k->fd, buf, sizeof buf - 1, 0)) < 0) {
        close(k->fd);
        k->fd = -1;
        s->open--;
        return -1;              /* ESRCH: reaped since */
    }
    if (k->fd < 0) {
        char path[32];
        snprintf(path, sizeof path, "%d/stat", pid);
        int fd = openat(s->rootfd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -1;
        n = read(fd, buf, sizeof buf - 1);
        if (n >= 0 && s->open < s->keep) {
            k->fd = fd;
            s->open++;
        } else {
            close(fd);
        }
    }
    if (n < 0)
        return -1;
    buf[n] = 0;
    return procfs_parse_stat(buf, &k->st);
}

int procfs_rescan(struct proc_scan *s, struct proc_table *t, int (*fresh)(void *ctx, const struct proc_stat *e),
                  void *ctx, char *err, size_t errlen)
{
    char buf[32 * 1024];
    ssize_t got;
    if (lseek(s->rootfd, 0, SEEK_SET) < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    s->nnext = 0;
    int sorted = 1;
    while ((got = getdents64(s->rootfd, buf, sizeof buf)) > 0)
        for (ssize_t off = 0; off < got;) {
            const struct dirent64 *e = (const void *)(buf + off);
            off += e->d_reclen;
            if (!isdigit((unsigned char)e->d_name[0]))
                continue;
            int pid = atoi(e->d_name);
            struct kept key = { .st.pid = pid }, k = { .ino = e->d_ino, .fd = -1 };
            struct kept *old = s->n ? bsearch(&key, s->v, s->n, sizeof *s->v, by_kept_pid) : NULL;
            int same = old && old->ino == e->d_ino;
            if (same) {
                k = *old;
                old->fd = -1;       /* moves to the new list */
            } else if (old && old->fd >= 0) {
                close(old->fd);     /* a new process under an old pid */
                old->fd = -1;
                s->open--;
            }
            if ((!same || fresh(ctx, &k.st)) && reread(s, &k, pid) < 0) {
                if (k.fd >= 0) {
                    close(k.fd);
                    s->open--;
                }
                continue;
            }
            s->next = grow(s->next, &s->capnext, s->nnext, 1, sizeof *s->next);
            sorted &= s->nnext == 0 || s->next[s->nnext - 1].st.pid < pid;
            s->next[s->nnext++] = k;
        }
    if (got < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        for (size_t i = 0; i < s->nnext; i++)
            if (s->next[i].fd >= 0) {
                close(s->next[i].fd);   /* the old list stands, read anew next time */
                s->open--;
            }
        return -1;
    }
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].fd >= 0) {
            close(s->v[i].fd);  /* gone since */
            s->open--;
        }
    if (!sorted)
        qsort(s->next, s->nnext, sizeof *s->next, by_kept_pid);
    struct kept *v = s->v;
    size_t cap = s->cap;
    s->v = s->next;
    s->n = s->nnext;
    s->cap = s->capnext;
    s->next = v;
    s->capnext = cap;
    s->nnext = 0;
    t->n = 0;
    t->v = grow(t->v, &t->cap, 0, s->n ? s->n : 1, sizeof *t->v);
    for (size_t i = 0; i < s->n; i++)
        t->v[t->n++] = s->v[i].st;
    return 0;
}

const struct proc_stat *procfs_find(const struct proc_table *t, int pid)
{
    struct proc_stat key = { .pid = pid };
    return t->n ? bsearch(&key, t->v, t->n, sizeof *t->v, by_pid) : NULL;
}

void procfs_table_free(struct proc_table *t)
{
    free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}
