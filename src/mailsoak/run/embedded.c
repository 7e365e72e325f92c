/* embedded: runs the reference server as a child for the zero-setup demo. The
 * server is found next to our own executable (a build tree or an install), then
 * on PATH; it reports its ports on a READY line, which is all we need from it. It
 * is ours alone: it gets SIGTERM when we end, however we end, and only from us
 * (a session of its own, out of the terminal's reach). Its directory holds an
 * owner file naming this run and its server; a run killed with no time to
 * clean up (SIGKILL) leaves the directory, and the next demo removes it. */
#include "run/embedded.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/users.h"
#include "probe/procfs.h"

static int write_users(const struct config *cfg, const char *path)
{
    struct users u;
    char err[400];
    int rc = cfg->users_file[0] ? users_load_file(&u, cfg->users_file, err, sizeof err)
                                : users_from_pattern(&u, cfg->user_pattern, cfg->user_password,
                                                     (size_t)cfg->user_count, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "mailsoak: %s\n", err);
        return -1;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        users_free(&u);
        return -1;
    }
    for (size_t i = 0; i < u.n; i++)
        fprintf(f, "%s %s\n", u.v[i].addr, u.v[i].pass[0] ? u.v[i].pass : "demo");
    users_free(&u);
    return fclose(f);
}

static void server_path(char *out, size_t n)
{
    char self[PATH_MAX - 64];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0) {
        self[len] = 0;
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = 0;
            snprintf(out, n, "%s/mailsoak-server", self);
            if (access(out, X_OK) == 0)
                return;
        }
    }
    snprintf(out, n, "mailsoak-server");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st; (void)flag; (void)f;
    return remove(path);
}

/* A demo's directory, removed depth first, following no link. */
static int remove_tree(const char *dir)
{
    return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#define OWNER_FILE "owner"
#define OWNER_MAGIC "mailsoak-demo"

/* /proc/PID/stat: when the process started (clock ticks after boot: with its pid,
 * what tells it from a later process given the same pid) and its state. -1 when
 * it does not exist or /proc cannot say. */
static int proc_of(pid_t pid, struct proc_stat *st)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    return procfs_read(AT_FDCWD, path, buf, sizeof buf) > 0 ? procfs_parse_stat(buf, st) : -1;
}

static uint64_t start_ticks(pid_t pid)
{
    struct proc_stat st;
    return proc_of(pid, &st) == 0 ? st.starttime : 0;
}

/* The process the owner file names still runs: same pid, same start, and not a
 * zombie (a killed run's server, orphaned, stays one where nobody reaps it). */
static int still_runs(pid_t pid, uint64_t start)
{
    struct proc_stat st;
    if (pid <= 0)
        return 0;
    if (proc_of(pid, &st) == 0)
        return st.starttime == start && st.state != 'Z' && st.state != 'X';
    return !(kill(pid, 0) < 0 && errno == ESRCH);   /* no /proc: kill alone can say */
}

static void write_owner(const struct embedded *e, pid_t server)
{
    char path[300], tmp[310];
    snprintf(path, sizeof path, "%s/" OWNER_FILE, e->dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    pid_t self = getpid();
    fprintf(f, OWNER_MAGIC " run=%d start=%" PRIu64 " server=%d server_start=%" PRIu64 "\n", (int)self,
            start_ticks(self), (int)server, server > 0 ? start_ticks(server) : 0);
    if (fclose(f) == 0)
        rename(tmp, path);        /* a reader sees the whole line or none */
    else
        unlink(tmp);
}

/* Removes what demos killed before they could clean up left in tmp: only a
 * directory named as ours (mailsoak-demo. and six characters, as mkdtemp makes
 * it), this user's, holding an owner file of ours whose run and server have both
 * ended. Anything else, a live demo's above all, is left alone. */
static void reap_left_behind(const char *tmp)
{
    DIR *d = opendir(tmp);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, OWNER_MAGIC ".", sizeof OWNER_MAGIC) || strlen(de->d_name) != sizeof OWNER_MAGIC + 6)
            continue;
        char dir[PATH_MAX], owner[PATH_MAX + 16], line[256] = "";
        struct stat st;
        snprintf(dir, sizeof dir, "%s/%s", tmp, de->d_name);
        if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
            continue;
        snprintf(owner, sizeof owner, "%s/" OWNER_FILE, dir);
        int fd = open(owner, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, line, sizeof line - 1);
        close(fd);
        if (n <= 0)
            continue;
        line[n] = 0;
        int run, server;
        uint64_t run_start, server_start;
        if (sscanf(line, OWNER_MAGIC " run=%d start=%" SCNu64 " server=%d server_start=%" SCNu64, &run, &run_start,
                   &server, &server_start) != 4)
            continue;
        if (still_runs(run, run_start) || still_runs(server, server_start))
            continue;
        if (remove_tree(dir) == 0)
            fprintf(stderr, "mailsoak: removed %s, left by demo run %d, which ended without cleaning up\n", dir, run);
    }
    closedir(d);
}

int embedded_start(struct config *cfg, struct embedded *e, int demo_duration)
{
    char users[300], store[300], log[300], ready[300], bin[PATH_MAX];
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    memset(e, 0, sizeof *e);
    reap_left_behind(tmp);
    snprintf(e->dir, sizeof e->dir, "%s/mailsoak-demo.XXXXXX", tmp);
    if (!mkdtemp(e->dir)) {
        fprintf(stderr, "mailsoak: cannot make a directory for the demo server: %s\n", strerror(errno));
        return -1;
    }
    snprintf(users, sizeof users, "%s/users", e->dir);
    snprintf(store, sizeof store, "%s/store", e->dir);
    snprintf(log, sizeof log, "%s/server.log", e->dir);
    snprintf(ready, sizeof ready, "%s/ready", e->dir);
    write_owner(e, 0);               /* the server is not started yet */
    if (write_users(cfg, users) < 0)
        return -1;
    server_path(bin, sizeof bin);
    /* The demo's server is test equipment: it holds every session the run opens
     * (its default of 10,000 would refuse a larger demo's senders with 421, charged
     * to a server the user never chose), and the preflight's few besides. */
    char max_conns[64];
    uint64_t sessions = cfg->senders + cfg->readers + 16;
    snprintf(max_conns, sizeof max_conns, "server.max_conns=%llu",
             (unsigned long long)(sessions > 10000 ? sessions : 10000));
    pid_t parent = getpid();
    e->pid = fork();
    if (e->pid < 0)
        return -1;
    if (e->pid == 0) {
        /* embedded_stop cannot run when we are killed (SIGKILL, a crash): the
         * kernel sends the TERM then, or the server would serve on, orphaned. The
         * thread that forks is the main one, which lives as long as we do. A parent
         * gone before the prctl took effect is caught by getppid. */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
            _exit(127);
        /* Out of the terminal's process group, so a Ctrl-C (SIGINT to the whole
         * foreground group) reaches the run alone: the run ends the load, writes its
         * report with the server still measured, then stops the server itself.
         * Until setsid, a SIGINT here runs the parent's handler, which only sets a
         * flag in this copy of it; SIG_IGN meanwhile drops one already pending. */
        signal(SIGINT, SIG_IGN);
        signal(SIGQUIT, SIG_IGN);
        if (setsid() < 0)
            _exit(127);
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        execlp(bin, "mailsoak-server", "--listen-smtp", "127.0.0.1:0", "--listen-pop3", "127.0.0.1:0",
               "--listen-imap", "127.0.0.1:0", "--users", users, "--store", "maildir", "--store-dir", store, "--log", log,
               "--ready-file", ready, "--set", max_conns, (char *)NULL);
        fprintf(stderr, "mailsoak: cannot run %s: %s (no target given, so the demo needs the reference server)\n",
                bin, strerror(errno));
        _exit(127);
    }
    write_owner(e, e->pid);
    char line[256] = "";
    for (int i = 0; i < 200; i++) {
        FILE *f = fopen(ready, "r");
        if (f) {
            int ok = fgets(line, sizeof line, f) != NULL;
            fclose(f);
            if (ok)
                break;
        }
        if (waitpid(e->pid, NULL, WNOHANG) == e->pid) {
            e->pid = 0;
            fprintf(stderr, "mailsoak: the demo server exited at start (see %s)\n", log);
            return -1;
        }
        nanosleep(&(struct timespec){ .tv_nsec = 50000000 }, NULL);
    }
    char smtp[128], pop3[128], imap[128] = "";
    const char *im = strstr(line, " imap=");
    if (sscanf(line, "READY smtp=%127s pop3=%127s", smtp, pop3) != 2 ||
        (cfg->reader_protocol == READERS_IMAP && (!im || sscanf(im, " imap=%127s", imap) != 1))) {
        fprintf(stderr, "mailsoak: the demo server did not report ready\n");
        return -1;
    }
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)e->pid);
    strlist_add(&cfg->smtp_targets, smtp);
    if (cfg->reader_protocol == READERS_IMAP)
        strlist_add(&cfg->imap_targets, imap);
    else
        strlist_add(&cfg->pop3_targets, pop3);
    strlist_add(&cfg->server.pids, pid);
    strlist_add(&cfg->server.logs, log);
    strlist_add(&cfg->server.store_dirs, store);
    free(cfg->users_file);
    cfg->users_file = xstrdup(users);
    if (!cfg->label[0]) {
        free(cfg->label);
        cfg->label = xstrdup("mailsoak-server/maildir");
    }
    if (demo_duration)
        cfg->duration = 60 * 1000000000ull;
    int imap_readers = cfg->reader_protocol == READERS_IMAP;
    fprintf(stderr, "mailsoak: no target given: soaking the reference server (pid %d, smtp %s, %s %s, %s)\n",
            (int)e->pid, smtp, imap_readers ? "imap" : "pop3", imap_readers ? imap : pop3, e->dir);
    return 0;
}

void embedded_stop(struct embedded *e)
{
    if (e->pid > 0) {
        kill(e->pid, SIGTERM);
        waitpid(e->pid, NULL, 0);
        e->pid = 0;
    }
    if (e->dir[0]) {
        /* the directory is ours, made by mkdtemp: remove it depth first */
        if (remove_tree(e->dir) != 0)
            fprintf(stderr, "mailsoak: could not remove %s\n", e->dir);
        e->dir[0] = 0;
    }
}
