/* embedded: runs the reference server as a child for the zero-setup demo. The
 * server is found next to our own executable (a build tree or an install), then
 * on PATH; it reports its ports on a READY line, which is all we need from it. It
 * is ours alone: it gets SIGTERM when we end, however we end, and only from us
 * (a session of its own, out of the terminal's reach). */
#include "run/embedded.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/users.h"

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

int embedded_start(struct config *cfg, struct embedded *e, int demo_duration)
{
    char users[300], store[300], log[300], ready[300], bin[PATH_MAX];
    memset(e, 0, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "%s/mailsoak-demo.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(e->dir)) {
        fprintf(stderr, "mailsoak: cannot make a directory for the demo server: %s\n", strerror(errno));
        return -1;
    }
    snprintf(users, sizeof users, "%s/users", e->dir);
    snprintf(store, sizeof store, "%s/store", e->dir);
    snprintf(log, sizeof log, "%s/server.log", e->dir);
    snprintf(ready, sizeof ready, "%s/ready", e->dir);
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
               "--users", users, "--store", "maildir", "--store-dir", store, "--log", log,
               "--ready-file", ready, "--set", max_conns, (char *)NULL);
        fprintf(stderr, "mailsoak: cannot run %s: %s (no target given, so the demo needs the reference server)\n",
                bin, strerror(errno));
        _exit(127);
    }
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
    char smtp[128], pop3[128];
    if (sscanf(line, "READY smtp=%127s pop3=%127s", smtp, pop3) != 2) {
        fprintf(stderr, "mailsoak: the demo server did not report ready\n");
        return -1;
    }
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)e->pid);
    strlist_add(&cfg->smtp_targets, smtp);
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
    fprintf(stderr, "mailsoak: no target given: soaking the reference server (pid %d, smtp %s, pop3 %s, %s)\n",
            (int)e->pid, smtp, pop3, e->dir);
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st; (void)flag; (void)f;
    return remove(path);
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
        if (nftw(e->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
            fprintf(stderr, "mailsoak: could not remove %s\n", e->dir);
        e->dir[0] = 0;
    }
}
