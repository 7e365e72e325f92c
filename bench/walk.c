/* bench/walk: what one collector sample costs on a big server: the spool and store
 * walks over 100k files (Postfix's hashed queue; a maildir store with and without
 * sizes in the file names; mbox files, counted then served from the cache) and the
 * reading of a set of 100 processes (io, status, smaps_rollup). Prints ms per sample.
 * The files are empty: a walk reads names and inodes, not contents (mbox aside).
 * Usage: walk [FILES] [DIR]   (FILES default 100000; DIR default $TMPDIR or /tmp) */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "probe/collector.h"

enum { ROUNDS = 5, PROCS = 100 };

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what)
{
    fprintf(stderr, "walk: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                die(buf);
            *p = '/';
        }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
        die(buf);
}

static void touch(const char *path, const char *content)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(path);
    size_t n = strlen(content);
    if (write(fd, content, n) != (ssize_t)n)
        die(path);
    close(fd);
}

/* Postfix hashes deferred/ (and defer/) one level deep on the first hex digit. */
static void make_spool(const char *root, long files)
{
    char path[4096];
    static const char *queues[] = { "incoming", "active", "hold", "maildrop" };
    for (int q = 0; q < 4; q++) {
        snprintf(path, sizeof path, "%s/%s", root, queues[q]);
        mkdirs(path);
    }
    for (long i = 0; i < files; i++) {
        if (i % 10 == 0)
            snprintf(path, sizeof path, "%s/active/%08lX", root, i);
        else
            snprintf(path, sizeof path, "%s/deferred/%lX", root, i % 16);
        if (i % 10)
            mkdirs(path);
        if (i % 10)
            snprintf(path + strlen(path), sizeof path - strlen(path), "/%08lX", i);
        touch(path, "");
    }
}

static void make_maildir(const char *root, long files, int sizes_in_names)
{
    char path[4096];
    long users = files / 100 ? files / 100 : 1;
    for (long u = 0; u < users; u++) {
        static const char *subs[] = { "cur", "new", "tmp" };
        for (int s = 0; s < 3; s++) {
            snprintf(path, sizeof path, "%s/test.local/user%05ld/Maildir/%s", root, u, subs[s]);
            mkdirs(path);
        }
    }
    for (long i = 0; i < files; i++) {
        long u = i % users;
        int cur = i % 3 != 0;
        snprintf(path, sizeof path, "%s/test.local/user%05ld/Maildir/%s/17000%05ld.M%ldP1.host%s%s", root, u,
                 cur ? "cur" : "new", i, i, sizes_in_names ? ",S=17,W=18" : "", cur ? ":2,S" : "");
        touch(path, "");        /* empty: creating 100k files is the slow part of this bench */
    }
}

static void make_mbox(const char *root, long messages)
{
    char path[4096];
    long boxes = messages / 100 ? messages / 100 : 1;
    for (long b = 0; b < boxes; b++) {
        snprintf(path, sizeof path, "%s/test.local/user%05ld", root, b);
        mkdirs(path);
        snprintf(path + strlen(path), sizeof path - strlen(path), "/mbox");
        FILE *f = fopen(path, "w");
        if (!f)
            die(path);
        for (int m = 0; m < 100; m++)
            fprintf(f, "From mailsoak@test.local  Sat Nov 29 19:00:%02d 2025\nSubject: %d\nContent-Length: 500\n\n"
                       "%0499d\n\n", m % 60, m, m);
        fclose(f);
    }
}

static double time_samples(struct collector *c, uint64_t *check)
{
    double best = 1e18;
    for (int r = 0; r < ROUNDS; r++) {
        double t = now_ms();
        collector_sample(c);
        t = now_ms() - t;
        if (t < best)
            best = t;
    }
    struct collector_now now;
    collector_now(c, &now);
    *check = now.spool ? now.spool : now.store_messages ? now.store_messages : now.procs;
    return best;
}

static void bench_dir(const char *label, const char *dir, int spool, const char *format)
{
    struct server_config cfg = { .sample_interval = 1000000000ull, .store_format = (char *)format };
    struct collector_opts o = { .manual = 1 };
    char err[400];
    strlist_add(spool ? &cfg.spool_dirs : &cfg.store_dirs, dir);
    double t = now_ms();
    struct collector *c = collector_start_opts(&cfg, mono_ns(), &o, err, sizeof err);
    if (!c) {
        fprintf(stderr, "walk: %s\n", err);
        exit(1);
    }
    double first = now_ms() - t;
    uint64_t n;
    double best = time_samples(c, &n);
    printf("%-44s %8llu counted  first %8.1f ms  then %8.1f ms per sample\n", label,
           (unsigned long long)n, first, best);
    collector_free(c);
    strlist_free(&cfg.spool_dirs);
    strlist_free(&cfg.store_dirs);
}

static void bench_procs(void)
{
    pid_t kids[PROCS];
    for (int i = 0; i < PROCS; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            pause();
            _exit(0);
        }
    }
    struct server_config cfg = { .sample_interval = 1000000000ull };
    struct collector_opts o = { .manual = 1 };
    char err[400], me[32];
    snprintf(me, sizeof me, "%d", (int)getpid());
    strlist_add(&cfg.pids, me);
    struct collector *c = collector_start_opts(&cfg, mono_ns(), &o, err, sizeof err);
    if (!c) {
        fprintf(stderr, "walk: %s\n", err);
        exit(1);
    }
    uint64_t n;
    double best = time_samples(c, &n);
    printf("%-44s %8llu counted                  %8.1f ms per sample\n",
           "process set (io, status, smaps_rollup)", (unsigned long long)n, best);
    collector_free(c);
    strlist_free(&cfg.pids);
    for (int i = 0; i < PROCS; i++) {
        kill(kids[i], SIGTERM);
        waitpid(kids[i], NULL, 0);
    }
}

int main(int argc, char **argv)
{
    long files = argc > 1 ? atol(argv[1]) : 100000;
    const char *base = argc > 2 ? argv[2] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char root[1024], dir[1100];
    snprintf(root, sizeof root, "%s/mailsoak-walk.XXXXXX", base);
    if (!mkdtemp(root))
        die(root);
    printf("collector sample cost, %ld files per tree, best of %d samples (page cache warm)\n", files, ROUNDS);

    snprintf(dir, sizeof dir, "%s/spool", root);
    make_spool(dir, files);
    bench_dir("spool: Postfix queue, hashed", dir, 1, NULL);
    snprintf(dir, sizeof dir, "%s/maildir-s", root);
    make_maildir(dir, files, 1);
    bench_dir("store: maildir, sizes in names (Dovecot)", dir, 0, "maildir");
    bench_dir("store: same, store_format = auto", dir, 0, "auto");
    snprintf(dir, sizeof dir, "%s/maildir", root);
    make_maildir(dir, files, 0);
    bench_dir("store: maildir, a stat per file", dir, 0, "maildir");
    snprintf(dir, sizeof dir, "%s/mbox", root);
    make_mbox(dir, files);
    bench_dir("store: mbox, 100 messages per file", dir, 0, "mbox");
    bench_procs();

    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : 1;
}
