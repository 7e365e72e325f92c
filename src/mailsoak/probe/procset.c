/* procset: the server's process set, read from a proc root every sample. The roots
 * are the processes named by [server] pid and pidfile ("slots": a pidfile may name a
 * successor after a restart) and those whose name matches [server] process; the set
 * is the roots and all their descendants, found breadth first in a scan of the proc
 * root.
 *
 * I/O of short-lived children. When a parent reaps a child, the kernel adds the
 * child's I/O counts (and those of the child's own reaped children) to the parent's
 * signal->ioac (kernel/exit.c, wait_task_zombie), which /proc/PARENT/io includes.
 * So the set's I/O at any moment is the sum of /proc/PID/io over its live members:
 * a child that did its work and was reaped between two samples is inside its
 * parent's counts. What this cannot see: children of a parent that does not wait
 * (SIGCHLD ignored: the kernel reaps them and the counts are dropped), children
 * orphaned and reaped by init or a subreaper outside the set before we saw them,
 * and processes outside the tree (a server started by another supervisor).
 *
 * Parts. Each member belongs to the part of the root it descends from, told by the
 * root's name (parts[] below): the MTA, the mailbox server (POP3 and IMAP, Dovecot's
 * imap and imap-login processes with its pop3 ones), the database, or other. The
 * same rules hold per part, so the parts add up to the set (a member reaped by a
 * parent of another part would move its counts there; a server's own children do
 * not cross to another master's tree). */
#include "probe/procset.h"

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/ere.h"
#include "probe/procfs.h"

enum root_kind { R_NONE, R_PID, R_PIDFILE, R_PROCESS };

enum {
    READ_ATTEMPTS = 4,          /* a member that exits while we read the set: read it again */
    MAX_DEPTH = 64,             /* of process ancestry */
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
    int kind, part;
    uint64_t cpu_ms;            /* from the scan's stat */
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

/* A member's /proc/PID/io, open. */
struct iofd {
    int pid;
    uint64_t start;
    int fd;
};

struct procset {
    /* The roots; fixed after setup. */
    char *proc_root;
    int rootfd;
    struct slot *slots;
    size_t nslots;
    regex_t *pats;
    size_t npats;
    uint64_t start_ticks;
    probe_event_fn on_event;
    void *ctx;

    /* What the last sample saw. */
    struct proc_scan *scan;     /* every process, read anew only where it matters */
    struct iofd *io;            /* members' io files kept open, by pid */
    size_t nio, capio, keep;
    struct proc_table table;
    struct members prev;
    struct proc_io departed, offsets, io_total;
    struct proc_io part_departed[PROBE_NPARTS], part_offsets[PROBE_NPARTS], part_total[PROBE_NPARTS];
    struct probe_sample last;
    uint64_t crashes;
};

/* A root's part by its name, as /proc/PID/comm has it (15 characters at most). */
static const struct { const char *comm; int part; } parts[] = {
    { "master", PART_MTA },         /* Postfix */
    { "exim4", PART_MTA }, { "exim", PART_MTA }, { "sendmail", PART_MTA },
    { "smtpd", PART_MTA },          /* OpenSMTPD */
    { "dovecot", PART_POP3 }, { "courierpop3d", PART_POP3 }, { "couriertcpd", PART_POP3 },
    { "pop3d", PART_POP3 },         /* GNU mailutils */
    /* Dovecot's own sessions, roots when server.process names them: POP3 and IMAP
     * are one part, the mailbox server's (its key stays "pop3" in the results). */
    { "pop3", PART_POP3 }, { "pop3-login", PART_POP3 }, { "imap", PART_POP3 }, { "imap-login", PART_POP3 },
    { "postgres", PART_DB }, { "postmaster", PART_DB }, { "mariadbd", PART_DB }, { "mysqld", PART_DB },
};

static int part_of(const char *comm)
{
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (!strcmp(comm, parts[i].comm))
            return parts[i].part;
    return PART_OTHER;
}

/* Crashes and restarts, to the collector (a macro: C cannot pass "..." on). */
#define add_event(ps, ...) probe_eventf((ps)->on_event, (ps)->ctx, __VA_ARGS__)

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

static int matches_pattern(const struct procset *ps, const struct proc_stat *e)
{
    for (size_t i = 0; i < ps->npats; i++)
        if (!regexec(&ps->pats[i], e->comm, 0, NULL, 0))
            return 1;
    return 0;
}

/* Clock ticks per second of /proc/PID/stat's times (glibc answers from a constant). */
static long clock_hz(void)
{
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? hz : 100;
}

static void push_member(struct members *m, const struct proc_stat *e, int kind, int part)
{
    m->v = grow(m->v, &m->cap, m->n, 1, sizeof *m->v);
    struct member *x = &m->v[m->n++];
    memset(x, 0, sizeof *x);
    x->pid = e->pid;
    x->ppid = e->ppid;
    x->start = e->starttime;
    x->kind = kind;
    x->part = part;
    x->cpu_ms = e->cpu_ticks * 1000 / (uint64_t)clock_hz();
    x->state = e->state;
    x->rss = e->rss_pages * (uint64_t)sysconf(_SC_PAGESIZE);
    snprintf(x->comm, sizeof x->comm, "%s", e->comm);
}

/* Breadth first from each root, so a parent is always read before its children: a
 * child reaped between the two reads is then missed (and the read retried), never
 * counted twice. */
static void bfs(const struct proc_table *t, const struct kids *k, char *mark, size_t root, int kind, int part,
                struct members *out)
{
    size_t head = out->n;
    if (mark[root])
        return;
    mark[root] = 1;
    push_member(out, &t->v[root], kind, part);
    while (head < out->n) {
        int pid = out->v[head++].pid;
        for (size_t j = first_kid(t, k, pid); j < k->n && t->v[k->idx[j]].ppid == pid; j++) {
            size_t i = k->idx[j];
            if (!mark[i]) {
                mark[i] = 1;
                push_member(out, &t->v[i], R_NONE, part);
            }
        }
    }
}

static void build_set(struct procset *ps, struct members *out)
{
    const struct proc_table *t = &ps->table;
    struct kids k = { .idx = xrealloc(NULL, t->n * sizeof(size_t)), .n = t->n };
    char *mark = xrealloc(NULL, t->n ? t->n : 1), *named = xrealloc(NULL, t->n ? t->n : 1);
    memset(mark, 0, t->n);
    memset(named, 0, t->n);
    for (size_t i = 0; i < t->n; i++)
        k.idx[i] = i;
    qsort_r(k.idx, k.n, sizeof *k.idx, by_ppid, (void *)(uintptr_t)t);
    out->n = 0;

    for (size_t i = 0; i < ps->nslots; i++) {
        const struct proc_stat *e = ps->slots[i].gone ? NULL : live(t, ps->slots[i].pid, ps->slots[i].start);
        if (e && e->state != 'Z')
            named[tindex(t, e)] = (char)ps->slots[i].kind;
    }
    for (size_t i = 0; ps->npats && i < t->n; i++)
        if (!named[i] && matches_pattern(ps, &t->v[i]))
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
            bfs(t, &k, mark, i, named[i], part_of(t->v[i].comm), out);
    }
    /* Members orphaned since (reparented to init) stay members until they exit;
     * start from the highest unvisited ancestor that is also a former member. */
    for (size_t i = 0; i < ps->prev.n; i++) {
        const struct proc_stat *e = live(t, ps->prev.v[i].pid, ps->prev.v[i].start);
        if (!e || mark[tindex(t, e)])
            continue;
        for (int d = 0; d < MAX_DEPTH; d++) {
            const struct proc_stat *up = procfs_find(t, e->ppid);
            const struct member *pm = up ? find_member(&ps->prev, up->pid) : NULL;
            if (!pm || pm->start != up->starttime || mark[tindex(t, up)])
                break;
            e = up;
        }
        const struct member *was = find_member(&ps->prev, e->pid);
        bfs(t, &k, mark, tindex(t, e), R_NONE, was ? was->part : PART_OTHER, out);
    }
    free(k.idx);
    free(mark);
    free(named);
}

/* Reads io of every member, and smaps_rollup when pss is asked for (the kernel walks
 * the page tables of every mapping for it: by far the dearest file of a process).
 * RSS came with the scan: /proc/PID/stat's rss is the counter status' VmRSS shows.
 * Returns 0 when a member was gone before we read it (so its counts may have moved
 * into a parent already read). */
static int by_iofd_pid(const void *a, const void *b)
{
    const struct iofd *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static void iofd_drop(struct procset *ps, size_t i)
{
    close(ps->io[i].fd);
    memmove(&ps->io[i], &ps->io[i + 1], (ps->nio - i - 1) * sizeof *ps->io);
    ps->nio--;
}

/* A member's io file, read through the descriptor kept since it was first read (the
 * file of that process for good: a new process under the pid has another file),
 * else opened now and kept while the budget allows. -1 with errno as read(2). */
static ssize_t read_io(struct procset *ps, const struct member *x, char *buf, size_t len)
{
    struct iofd key = { .pid = x->pid };
    struct iofd *k = ps->nio ? bsearch(&key, ps->io, ps->nio, sizeof *ps->io, by_iofd_pid) : NULL;
    if (k && k->start != x->start) {
        iofd_drop(ps, (size_t)(k - ps->io));
        k = NULL;
    }
    ssize_t n;
    if (k) {
        if ((n = pread(k->fd, buf, len - 1, 0)) < 0) {
            int e = errno;
            iofd_drop(ps, (size_t)(k - ps->io));
            errno = e;
            return -1;
        }
    } else {
        char path[32];
        snprintf(path, sizeof path, "%d/io", x->pid);
        int fd = openat(ps->rootfd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -1;
        n = read(fd, buf, len - 1);
        int e = errno;
        if (n >= 0 && ps->nio < ps->keep) {
            ps->io = grow(ps->io, &ps->capio, ps->nio, 1, sizeof *ps->io);
            ps->io[ps->nio++] = (struct iofd){ x->pid, x->start, fd };
            qsort(ps->io, ps->nio, sizeof *ps->io, by_iofd_pid);
        } else {
            close(fd);
        }
        errno = e;
    }
    if (n >= 0)
        buf[n] = 0;
    return n;
}

/* Closes the io files of processes that are no longer members. */
static void iofd_prune(struct procset *ps, const struct members *m)
{
    for (size_t i = ps->nio; i-- > 0;) {
        const struct member *x = find_member(m, ps->io[i].pid);
        if (!x || x->start != ps->io[i].start)
            iofd_drop(ps, i);
    }
}

static int read_members(struct procset *ps, struct members *m, int pss)
{
    char path[64], buf[4096];
    for (size_t i = 0; i < m->n; i++) {
        struct member *x = &m->v[i];
        if (read_io(ps, x, buf, sizeof buf) < 0) {
            if (errno == ENOENT || errno == ESRCH)
                return 0;
            x->io_denied = errno == EACCES || errno == EPERM;
        } else {
            x->have_io = procfs_parse_io(buf, &x->io) == 0;
            x->io.cpu_ms = x->cpu_ms;
        }
        if (x->state == 'Z' || !pss)
            continue;
        snprintf(path, sizeof path, "%d/smaps_rollup", x->pid);
        if (procfs_read(ps->rootfd, path, buf, sizeof buf) >= 0)
            (void)procfs_parse_pss(buf, &x->pss);
    }
    return 1;
}

/* Where did a departed member's I/O go? Up its last known ancestry to the first member
 * still alive: that one reaped it (or reaped the one that did). */
static int io_stayed_in_set(const struct procset *ps, const struct member *gone)
{
    int pid = gone->ppid;
    for (int d = 0; d < MAX_DEPTH; d++) {
        const struct member *p = find_member(&ps->prev, pid);
        if (!p)
            return 0;
        if (live(&ps->table, p->pid, p->start))
            return 1;
        pid = p->ppid;
    }
    return 0;
}

static void check_slots(struct procset *ps, uint64_t now)
{
    for (size_t i = 0; i < ps->nslots; i++) {
        struct slot *s = &ps->slots[i];
        const struct proc_stat *e = s->gone ? NULL : live(&ps->table, s->pid, s->start);
        if (e && e->state != 'Z')
            continue;
        int next = 0;
        char why[200];
        const struct proc_stat *n = NULL;
        if (s->pidfile && read_pidfile(s->pidfile, &next, why, sizeof why) == 0 && next != s->pid) {
            n = procfs_find(&ps->table, next);
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
            ps->crashes++;
            if (n)
                add_event(ps, now, "restart", "%s %s; the pid file now names %d (%s)", what, how, n->pid, n->comm);
            else
                add_event(ps, now, "crash", "%s %s", what, how);
        } else if (n) {
            add_event(ps, now, "restart", "%s came back as pid %d (%s)", what, n->pid, n->comm);
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

static void check_members(struct procset *ps, struct members *cur, uint64_t now)
{
    for (size_t i = 0; i < ps->prev.n; i++) {
        const struct member *p = &ps->prev.v[i];
        if (p->kind != R_PROCESS)
            continue;
        const struct proc_stat *e = live(&ps->table, p->pid, p->start);
        if (e && e->state != 'Z')
            continue;
        char how[120] = "is gone", buf[120];
        if (e && e->has_exit_code)
            snprintf(how, sizeof how, "%s", signal_text(e->exit_code, buf, sizeof buf));
        ps->crashes++;
        add_event(ps, now, "crash", "server process %d (%s), matched by server.process, %s", p->pid, p->comm, how);
    }
    for (size_t i = 0; i < cur->n; i++) {
        struct member *m = &cur->v[i];
        const struct member *p = find_member(&ps->prev, m->pid);
        if (p && p->start == m->start)
            m->zombie_noted = p->zombie_noted;
        const struct proc_stat *e = procfs_find(&ps->table, m->pid);
        if (m->state != 'Z' || m->zombie_noted || m->kind != R_NONE || !e || !e->has_exit_code)
            continue;
        m->zombie_noted = 1;
        if (!WIFSIGNALED(e->exit_code) || !crash_signal(WTERMSIG(e->exit_code)))
            continue;
        char buf[120];
        ps->crashes++;
        add_event(ps, now, "child_crash", "process %d (%s), child of %d, %s", m->pid, m->comm, m->ppid,
                  signal_text(e->exit_code, buf, sizeof buf));
    }
}

/* Which processes the rescan reads anew: the members of the last sample and the
 * masters (their state and memory change), and every process while server.process
 * patterns may match a name an exec just gave. A process that was not a member
 * cannot become one but by a new pid: its parent cannot change into the set. */
static int wanted(void *ctx, const struct proc_stat *e)
{
    const struct procset *ps = ctx;
    if (ps->npats)
        return 1;
    const struct member *m = find_member(&ps->prev, e->pid);
    if (m && m->start == e->starttime)
        return 1;
    for (size_t i = 0; i < ps->nslots; i++)
        if (ps->slots[i].pid == e->pid)
            return 1;
    return 0;
}

/* Field by field: sum - offsets, never below zero, never below the last total. */
static void run_total(struct proc_io *total, const struct proc_io *sum, const struct proc_io *offsets)
{
    struct proc_io t = *sum, off = *offsets;
    proc_io_max(&t, &off);
    proc_io_sub(&t, &off);
    proc_io_max(total, &t);
}

void procset_sample(struct procset *ps, uint64_t now, int pss, struct probe_sample *s)
{
    struct members cur = { 0 };
    char err[300];
    for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
        if (procfs_rescan(ps->scan, &ps->table, wanted, ps, err, sizeof err) < 0) {
            /* Not a reason to declare the server dead: keep the last figures. */
            free(cur.v);
            s->mem = ps->last.mem;
            s->pss = ps->last.pss;
            s->procs = ps->last.procs;
            s->io = ps->io_total;
            memcpy(s->part, ps->last.part, sizeof s->part);
            s->crashes = ps->crashes;
            return;
        }
        build_set(ps, &cur);
        if (read_members(ps, &cur, pss))
            break;
    }
    check_slots(ps, now);
    check_members(ps, &cur, now);

    int denied = 0;
    for (size_t i = 0; i < ps->prev.n; i++) {
        const struct member *p = &ps->prev.v[i];
        if (!live(&ps->table, p->pid, p->start) && p->have_io && !io_stayed_in_set(ps, p)) {
            proc_io_add(&ps->departed, &p->io);
            proc_io_add(&ps->part_departed[p->part], &p->io);
        }
    }
    struct proc_io sum = ps->departed, part_sum[PROBE_NPARTS];
    memcpy(part_sum, ps->part_departed, sizeof part_sum);
    for (size_t i = 0; i < cur.n; i++) {
        struct member *m = &cur.v[i];
        const struct member *p = find_member(&ps->prev, m->pid);
        int is_new = !p || p->start != m->start;
        if (m->have_io) {
            proc_io_add(&sum, &m->io);
            proc_io_add(&part_sum[m->part], &m->io);
            /* What a process did before the run is not the run's. */
            if (is_new && m->start < ps->start_ticks) {
                proc_io_add(&ps->offsets, &m->io);
                proc_io_add(&ps->part_offsets[m->part], &m->io);
            }
        }
        if (m->io_denied && (is_new || !p->io_denied))
            denied++;
        if (m->state != 'Z') {
            s->procs++;
            s->mem += m->rss;
            s->pss += m->pss;
            s->part[m->part].procs++;
            s->part[m->part].mem += m->rss;
            s->part[m->part].pss += m->pss;
        }
    }
    if (!pss) {
        s->pss = ps->last.pss;      /* the last reading stands until the next */
        for (int k = 0; k < PROBE_NPARTS; k++)
            s->part[k].pss = ps->last.part[k].pss;
    }
    if (denied)
        add_event(ps, now, "io_unreadable", "/proc/PID/io of %d new server process(es) is not readable "
                  "(permission): their I/O is not counted", denied);
    run_total(&ps->io_total, &sum, &ps->offsets);
    s->io = ps->io_total;
    for (int k = 0; k < PROBE_NPARTS; k++) {
        run_total(&ps->part_total[k], &part_sum[k], &ps->part_offsets[k]);
        s->part[k].io = ps->part_total[k];
    }
    s->crashes = ps->crashes;
    ps->last = *s;

    if (cur.n)
        qsort(cur.v, cur.n, sizeof *cur.v, by_member_pid);
    free(ps->prev.v);
    ps->prev = cur;
    iofd_prune(ps, &ps->prev);
}

/* ------------------------------------------------------------------------------ */
/* Setup */

static uint64_t boot_ticks_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    long hz = sysconf(_SC_CLK_TCK);
    return (uint64_t)ts.tv_sec * (uint64_t)hz + (uint64_t)ts.tv_nsec * (uint64_t)hz / 1000000000ull;
}

static int check_io_readable(struct procset *ps, int pid, const char *key, const char *val,
                             char *err, size_t errlen)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "%d/io", pid);
    if (procfs_read(ps->rootfd, path, buf, sizeof buf) < 0 && (errno == EACCES || errno == EPERM))
        return probe_fail(err, errlen, "%s: '%s': cannot read %s/%d/io (%s): the I/O of another user's "
                          "processes needs root", key, val, ps->proc_root, pid, strerror(errno));
    return 0;
}

static int add_slot(struct procset *ps, int kind, const char *val, char *err, size_t errlen)
{
    const char *key = kind == R_PID ? "server.pid" : "server.pidfile";
    int pid = 0;
    char why[200];
    if (kind == R_PID) {
        if (procfs_parse_pidfile(val, &pid) < 0)
            return probe_fail(err, errlen, "%s: '%s': not a process id", key, val);
    } else if (read_pidfile(val, &pid, why, sizeof why) < 0) {
        return probe_fail(err, errlen, "%s: '%s': %s", key, val, why);
    }
    const struct proc_stat *e = procfs_find(&ps->table, pid);
    if (!e || e->state == 'Z') {
        if (kind == R_PID)
            return probe_fail(err, errlen, "%s: '%s': no such process", key, val);
        return probe_fail(err, errlen, "%s: '%s' names pid %d, which is not running", key, val, pid);
    }
    if (check_io_readable(ps, pid, key, val, err, errlen) < 0)
        return -1;
    ps->slots = xrealloc(ps->slots, (ps->nslots + 1) * sizeof *ps->slots);
    struct slot *s = &ps->slots[ps->nslots++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->pidfile = kind == R_PIDFILE ? xstrdup(val) : NULL;
    s->pid = pid;
    s->start = e->starttime;
    snprintf(s->comm, sizeof s->comm, "%s", e->comm);
    return 0;
}

static int add_pattern(struct procset *ps, const char *val, char *err, size_t errlen)
{
    regex_t re;
    char why[200];
    if (ere_compile(&re, val, REG_NOSUB, why, sizeof why) < 0)
        return probe_fail(err, errlen, "server.process: '%s': bad regular expression: %s", val, why);
    int found = 0;
    for (size_t i = 0; i < ps->table.n && !found; i++)
        if (!regexec(&re, ps->table.v[i].comm, 0, NULL, 0)) {
            found = 1;
            if (check_io_readable(ps, ps->table.v[i].pid, "server.process", val, err, errlen) < 0) {
                regfree(&re);
                return -1;
            }
        }
    if (!found) {
        regfree(&re);
        return probe_fail(err, errlen, "server.process: '%s' matches no running process name", val);
    }
    ps->pats = xrealloc(ps->pats, (ps->npats + 1) * sizeof *ps->pats);
    ps->pats[ps->npats++] = re;
    return 0;
}

struct procset *procset_new(const char *proc_root, uint64_t start_ticks, size_t keep, probe_event_fn on_event,
                            void *ctx, char *err, size_t errlen)
{
    struct procset *ps = xcalloc(1, sizeof *ps);
    ps->proc_root = xstrdup(proc_root);
    ps->start_ticks = start_ticks ? start_ticks : boot_ticks_now();
    ps->on_event = on_event;
    ps->ctx = ctx;
    ps->rootfd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (ps->rootfd < 0 || procfs_scan(proc_root, &ps->table, err, errlen) < 0) {
        probe_fail(err, errlen, "%s: %s", proc_root, strerror(errno));
        procset_free(ps);
        return NULL;
    }
    /* Files kept open between samples (stat of every process, io of the members):
     * what the caller gives, else a quarter of what this process may open, for each
     * kind. */
    struct rlimit rl;
    ps->keep = keep ? keep
               : getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur / 4 : 1024;
    if (ps->keep > 4096)
        ps->keep = 4096;
    ps->scan = procfs_scan_new(ps->rootfd, ps->keep);
    return ps;
}

int procset_add_pid(struct procset *ps, const char *val, char *err, size_t errlen)
{
    return add_slot(ps, R_PID, val, err, errlen);
}

int procset_add_pidfile(struct procset *ps, const char *path, char *err, size_t errlen)
{
    return add_slot(ps, R_PIDFILE, path, err, errlen);
}

int procset_add_process(struct procset *ps, const char *ere, char *err, size_t errlen)
{
    return add_pattern(ps, ere, err, errlen);
}

void procset_free(struct procset *ps)
{
    if (!ps)
        return;
    for (size_t i = 0; i < ps->nslots; i++)
        free(ps->slots[i].pidfile);
    free(ps->slots);
    for (size_t i = 0; i < ps->npats; i++)
        regfree(&ps->pats[i]);
    free(ps->pats);
    procfs_table_free(&ps->table);
    procfs_scan_free(ps->scan);
    for (size_t i = 0; i < ps->nio; i++)
        close(ps->io[i].fd);
    free(ps->io);
    free(ps->prev.v);
    if (ps->rootfd >= 0)
        close(ps->rootfd);
    free(ps->proc_root);
    free(ps);
}
