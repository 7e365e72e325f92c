/* bench_collector: what the collector costs the machine whose server it watches. A
 * synthetic server: a master with about 100 descendants (each holding 2 MB of its
 * own memory), a Postfix queue root (incoming, active, deferred hashed one level,
 * hold, maildrop) and a Dovecot maildir store of FILES files each (1200 users, sizes
 * in the names), and a log receiving LINES lines a second of Postfix and Dovecot
 * traffic (lines like the testbed's, none matching a class). Reports
 *  - the CPU of one reading of each part alone (this thread's CPU time around
 *    collector_sample(), the median of ROUNDS), with what it counted, checked;
 *  - the CPU per second of the whole collector (every part configured) on its own
 *    thread at the default settings, over SECONDS of wall time while the log grows.
 * Only the collector's public API and the settings table are used, so the same file
 * builds against an older tree for a before/after comparison.
 * Usage: collector [FILES] [SECONDS] [LINES] [DIR]
 *   FILES 100000 per tree, SECONDS 30, LINES 2000, DIR $TMPDIR or /tmp
 * or:    collector --database SPEC PIDFILE [READINGS]
 *   what reading a running database's counters ([server] database = SPEC, e.g. a
 *   `testbed --sql` one's) costs: this thread's CPU per reading (median), its wall
 *   time, and the CPU the database's own processes (PIDFILE's master and its children)
 *   spent on READINGS (200) readings a second apart at most, less what they spent
 *   over the same time unread (the idle baseline), per reading. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "probe/collector.h"
#include "settings/config.h"

enum { ROUNDS = 9, PROCS = 100, GRANDCHILDREN = 20, USERS = 1200, CHILD_MEM = 2 << 20 };

static void die(const char *what)
{
    fprintf(stderr, "bench_collector: %s: %s\n", what, strerror(errno));
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

/* Empty files: a walk reads names and inodes, not contents. */
static void touch(const char *path, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0)
        die(path);
    close(fd);
}

/* A Postfix queue_directory: a tenth of the mail in incoming (complete: owner execute
 * bit), three tenths in active, the rest in deferred hashed on the first hex digit. */
static void make_queue(const char *root, long files)
{
    char path[4096];
    static const char *const queues[] = { "incoming", "active", "deferred", "hold", "maildrop" };
    for (int q = 0; q < 5; q++) {
        snprintf(path, sizeof path, "%s/%s", root, queues[q]);
        mkdirs(path);
    }
    for (int h = 0; h < 16; h++) {
        snprintf(path, sizeof path, "%s/deferred/%X", root, h);
        mkdirs(path);
    }
    for (long i = 0; i < files; i++) {
        unsigned long id = 0x10000000ul + (unsigned long)i;
        if (i % 10 == 0) {
            snprintf(path, sizeof path, "%s/incoming/%lX", root, id);
            touch(path, 0700);
        } else if (i % 10 < 4) {
            snprintf(path, sizeof path, "%s/active/%lX", root, id);
            touch(path, 0600);
        } else {
            snprintf(path, sizeof path, "%s/deferred/%lX/%lX", root, id & 15, id);
            touch(path, 0600);
        }
    }
}

/* A Dovecot maildir store: each user's Maildir with cur, new, tmp and Dovecot's own
 * files; a third of the mail in new/, sizes in the names as Dovecot writes them. */
static void make_store(const char *root, long files)
{
    char path[4096];
    for (int u = 0; u < USERS; u++) {
        static const char *const subs[] = { "cur", "new", "tmp" };
        for (int s = 0; s < 3; s++) {
            snprintf(path, sizeof path, "%s/test.local/user%04d/Maildir/%s", root, u, subs[s]);
            mkdirs(path);
        }
        static const char *const own[] = { "dovecot-uidlist", "dovecot-uidvalidity", "dovecot.index.log" };
        for (int f = 0; f < 3; f++) {
            snprintf(path, sizeof path, "%s/test.local/user%04d/Maildir/%s", root, u, own[f]);
            touch(path, 0600);
        }
    }
    for (long i = 0; i < files; i++) {
        int cur = i % 3 != 0;
        snprintf(path, sizeof path, "%s/test.local/user%04ld/Maildir/%s/17000%05ld.M%ldP1.host,S=%ld,W=%ld%s", root,
                 i % USERS, cur ? "cur" : "new", i, i, 500 + i % 500, 520 + i % 500, cur ? ":2,S" : "");
        touch(path, 0600);
    }
}

/* Lines as the testbed's Postfix and Dovecot write them under the classic workload:
 * the program, then the text after "[pid]: ". */
static const char *const templates[][2] = {
    { "postfix/smtpd", "connect from unknown[127.0.0.1]" },
    { "postfix/smtpd", "19A6BAA2316: client=unknown[127.0.0.1]" },
    { "postfix/cleanup", "A125FAA3404: message-id=<a808529b.10000000568@mailsoak.invalid>" },
    { "postfix/qmgr", "65F64AA39AA: from=<mailsoak@test.local>, size=1082, nrcpt=1 (queue active)" },
    { "postfix/lmtp", "01B98AA3AEF: to=<user0238@test.local>, relay=localhost[/tmp/mailsoak-testbed/run/dovecot/"
      "lmtp], conn_use=272, delay=33, delays=0.01/33/0/0.07, dsn=2.0.0, status=sent (250 2.0.0 "
      "<user0238@test.local> FoFEGGNTDWtudAAAg+zDdQ:T272 Saved)" },
    { "postfix/qmgr", "BE1DDAA361B: removed" },
    { "postfix/smtpd", "disconnect from unknown[127.0.0.1] ehlo=1 mail=4 rcpt=4 data=4 quit=1 commands=14" },
    { "lmtp(user0088@test.local)", "<FoFEGGNTDWtudAAAg+zDdQ:T813>: Info: msgid=<a808529b.1000000067a@mailsoak."
      "invalid>: saved mail to INBOX" },
    { "pop3-login", "Info: Login: user=<user0427@test.local>, method=PLAIN, rip=127.0.0.1, lip=127.0.0.1, "
      "mpid=614, secured, session=<KVu9F3xhUqZ/AAAB>" },
    { "pop3(user0820@test.local)", "<vzM2GHxhDMl/AAAB>: Info: Disconnected: Logged out top=0/0, retr=1/1082, "
      "del=1/1, size=1082" },
};

static void append_lines(int fd, long n, long *seq)
{
    char buf[64 * 1024];
    size_t used = 0;
    for (long i = 0; i < n; i++, (*seq)++) {
        const char *const *t = templates[*seq % (long)(sizeof templates / sizeof templates[0])];
        used += (size_t)snprintf(buf + used, sizeof buf - used, "Nov 30 10:44:%02d localhost %s[%d]: %s\n",
                                 (int)(*seq % 60), t[0], (int)(1000 + *seq % 30000), t[1]);
        if (used > sizeof buf - 1024 || i == n - 1) {
            if (write(fd, buf, used) != (ssize_t)used)
                die("log");
            used = 0;
        }
    }
}

/* The log writer: lines_per_s, a tenth every 100 ms, in a process of its own so that
 * its CPU is not the collector's. */
static pid_t start_writer(const char *log, long lines_per_s)
{
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid)
        return pid;
    int fd = open(log, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        die(log);
    long seq = 0;
    uint64_t next = mono_ns();
    for (;;) {
        append_lines(fd, lines_per_s / 10, &seq);
        next += 100 * NS_PER_MS;
        uint64_t now = mono_ns();
        if (next > now) {
            struct timespec ts = { (time_t)((next - now) / NS_PER_S), (long)((next - now) % NS_PER_S) };
            nanosleep(&ts, NULL);
        }
    }
}

/* Holds memory of its own, as a server process does, and says it is ready. */
static void server_process(int ready)
{
    char *mem = mmap(NULL, CHILD_MEM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        _exit(1);
    memset(mem, 1, CHILD_MEM);
    if (write(ready, "x", 1) != 1)
        _exit(1);
    for (;;)
        pause();
}

/* A master, PROCS - 1 - GRANDCHILDREN children and GRANDCHILDREN grandchildren, all in
 * the master's process group. Returns once every process holds its memory. */
static pid_t start_server(void)
{
    int p[2];
    if (pipe(p) < 0)
        die("pipe");
    pid_t master = fork();
    if (master < 0)
        die("fork");
    if (master == 0) {
        setpgid(0, 0);
        for (int i = 0; i < PROCS - 1 - GRANDCHILDREN; i++) {
            pid_t kid = fork();
            if (kid == 0) {
                if (i < GRANDCHILDREN && fork() == 0)
                    server_process(p[1]);
                server_process(p[1]);
            }
        }
        server_process(p[1]);
    }
    setpgid(master, master);
    close(p[1]);
    char c;
    for (int n = 0; n < PROCS; n++)
        if (read(p[0], &c, 1) != 1)
            die("server start");
    close(p[0]);
    return master;
}

static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double process_cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A collector over `sets` (--set arguments), the rest at their defaults. */
static struct collector *start(const char *const *sets, size_t n, int manual, struct config *cfg)
{
    char *argv[16];
    int argc = 0;
    for (size_t i = 0; i < n && argc < 15; i++) {
        argv[argc++] = "--set";
        argv[argc++] = (char *)sets[i];
    }
    if (config_from_args(cfg, argc, argv) != 0)
        exit(1);
    struct collector_opts o = { .manual = manual };
    char err[400];
    struct collector *c = collector_start_opts(&cfg->server, mono_ns(), &o, err, sizeof err);
    if (!c) {
        fprintf(stderr, "bench_collector: %s\n", err);
        exit(1);
    }
    return c;
}

/* Done before each reading of a part, outside the time measured. */
struct prep {
    int log_fd;                 /* >= 0: append a second's lines to the log */
    long lines, seq;
    const char *store;          /* set: move one message of every mailbox between new/ and cur/ */
};

static void prepare(struct prep *p, int round)
{
    if (p->log_fd >= 0)
        append_lines(p->log_fd, p->lines, &p->seq);
    for (int u = 0; p->store && u < USERS; u++) {
        /* message u is user u's; it starts in new/ when u % 3 == 0 (make_store) */
        char from[4096], to[4096];
        int in_new = (u % 3 == 0) == (round % 2 == 0);
        snprintf(from, sizeof from, "%s/test.local/user%04d/Maildir/%s/17000%05d.M%dP1.host,S=%d,W=%d%s", p->store,
                 u, in_new ? "new" : "cur", u, u, 500 + u % 500, 520 + u % 500, u % 3 ? ":2,S" : "");
        snprintf(to, sizeof to, "%s", from);
        memcpy(strstr(to, in_new ? "/new/" : "/cur/"), in_new ? "/cur/" : "/new/", 5);
        if (rename(from, to) < 0)
            die(from);
    }
}

/* One part alone: the median CPU of a full reading. Checks what was counted against
 * what was made. */
static void part(const char *label, const char *set, uint64_t want, struct prep *p)
{
    struct config cfg;
    const char *sets[] = { set };
    struct collector *c = start(sets, 1, 1, &cfg);
    double ms[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        prepare(p, r);
        double t = thread_cpu_ms();
        collector_sample(c);
        ms[r] = thread_cpu_ms() - t;
    }
    qsort(ms, ROUNDS, sizeof ms[0], by_double);
    struct series_now now;
    collector_now(c, &now);
    uint64_t got = p->log_fd >= 0 ? (uint64_t)p->lines : now.spool ? now.spool : now.store_messages ? now.store_messages
                                                                                                    : now.procs;
    printf("%-52s %8llu %10.2f ms\n", label, (unsigned long long)got, ms[ROUNDS / 2]);
    if (got != want) {
        fprintf(stderr, "bench_collector: %s counted %llu, expected %llu\n", label, (unsigned long long)got,
                (unsigned long long)want);
        exit(1);
    }
    collector_free(c);
    config_free(&cfg);
}

/* CPU per second and per sample of a collector on its own thread over `seconds`,
 * from after its start's baseline to before its final sample. */
static double on_thread(const char *const *sets, size_t n, int seconds, double *per_sample, uint64_t *samples,
                        double *start_ms)
{
    struct config cfg;
    double cpu0 = process_cpu_ms();
    struct collector *c = start(sets, n, 0, &cfg);
    double cpu1 = process_cpu_ms();
    uint64_t t0 = mono_ns();
    sleep((unsigned)seconds);
    double cpu = process_cpu_ms() - cpu1, wall = (double)(mono_ns() - t0) / 1e6;
    collector_stop(c);
    struct probe_summary sum;
    collector_summary(c, &sum);
    *samples = sum.samples > 2 ? sum.samples - 2 : 1;       /* less the baseline and the final one */
    *per_sample = cpu / (double)*samples;
    *start_ms = cpu1 - cpu0;
    probe_summary_free(&sum);
    collector_free(c);
    config_free(&cfg);
    return cpu / wall * 1e3;
}

static int machine_procs(void)
{
    DIR *d = opendir("/proc");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] >= '0' && e->d_name[0] <= '9';
    if (d)
        closedir(d);
    return n;
}

/* CPU ms of a process and of the children it reaped, and of its live children:
 * utime + stime + cutime + cstime of /proc/PID/stat over PID and those whose ppid is PID. */
static double tree_cpu_ms(int master)
{
    double ticks = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], buf[1024];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        char *close = strrchr(buf, ')');
        int pid = atoi(buf), ppid = 0;
        unsigned long long ut, st, cut, cst;
        if (!close || sscanf(close + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &ppid, &ut,
                             &st, &cut, &cst) != 5)
            continue;
        if (pid == master || ppid == master)
            ticks += (double)(ut + st + cut + cst);
    }
    if (d)
        closedir(d);
    return ticks * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

static int database_cost(const char *spec, const char *pidfile, int readings)
{
    char set[1200], buf[64];
    snprintf(set, sizeof set, "server.database=%s", spec);
    FILE *f = fopen(pidfile, "r");
    if (!f || !fgets(buf, sizeof buf, f))
        die(pidfile);
    fclose(f);
    int master = atoi(buf);
    struct config cfg;
    const char *sets[] = { set };
    struct collector *c = start(sets, 1, 1, &cfg);
    double *ms = calloc((size_t)readings, sizeof *ms);
    if (!ms)
        die("calloc");
    uint64_t w0 = mono_ns();
    double db0 = tree_cpu_ms(master);
    for (int r = 0; r < readings; r++) {
        double t = thread_cpu_ms();
        collector_sample(c);
        ms[r] = thread_cpu_ms() - t;
        usleep(5000);
    }
    double db_read = tree_cpu_ms(master) - db0, wall_ms = (double)(mono_ns() - w0) / 1e6;
    collector_free(c);
    config_free(&cfg);
    /* The same time with no reading: the database's own background work. */
    db0 = tree_cpu_ms(master);
    usleep((useconds_t)(wall_ms * 1000));
    double db_idle = tree_cpu_ms(master) - db0;
    qsort(ms, (size_t)readings, sizeof ms[0], by_double);
    printf("database readings (%s): %d readings in %.0f ms\n", spec[0] == 'p' ? "pgsql" : spec[0] == 'm' ? "mysql" : "sqlite",
           readings, wall_ms);
    printf("  the collector's CPU per reading (median)      %8.3f ms\n", ms[readings / 2]);
    printf("  the database's CPU per reading (less idle)    %8.3f ms  (%.1f ms read, %.1f ms idle)\n",
           (db_read - db_idle) / readings, db_read, db_idle);
    free(ms);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--database"))
        return database_cost(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 200);
    long files = argc > 1 ? atol(argv[1]) : 100000;
    int seconds = argc > 2 ? atoi(argv[2]) : 30;
    long lines = argc > 3 ? atol(argv[3]) : 2000;
    const char *base = argc > 4 ? argv[4] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    if (files < USERS || seconds < 1 || lines < 10) {
        fprintf(stderr, "usage: bench_collector [FILES (at least %d)] [SECONDS] [LINES] [DIR]\n", USERS);
        return 2;
    }
    char root[1024], queue[1100], store[1100], log[1100];
    snprintf(root, sizeof root, "%s/mailsoak-collector.XXXXXX", base);
    if (!mkdtemp(root))
        die(root);
    snprintf(queue, sizeof queue, "%s/spool/postfix", root);
    snprintf(store, sizeof store, "%s/mail", root);
    snprintf(log, sizeof log, "%s/mail.log", root);
    make_queue(queue, files);
    make_store(store, files);
    touch(log, 0644);
    int log_fd = open(log, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (log_fd < 0)
        die(log);
    pid_t master = start_server();

    char pid_set[64], queue_set[1200], store_set[1200], log_set[1200];
    snprintf(pid_set, sizeof pid_set, "server.pid=%d", (int)master);
    snprintf(queue_set, sizeof queue_set, "server.spool_dir=%s", queue);
    snprintf(store_set, sizeof store_set, "server.store_dir=%s", store);
    snprintf(log_set, sizeof log_set, "server.log=%s", log);

    /* Most of a real store was not touched in the last seconds: let these age past
     * any file system's timestamp granularity before the first reading. */
    sleep(3);
    printf("collector cost: a server of %d processes (%d on the machine), a Postfix queue and a maildir store of "
           "%ld files each, a log of %ld lines/s\n", PROCS, machine_procs(), files, lines);
    printf("%-52s %8s %13s\n", "a full reading of one part (a walk; page cache warm)", "counted", "CPU, median");
    struct prep none = { .log_fd = -1 }, moved = { .log_fd = -1, .store = store }, logged = { .log_fd = log_fd,
                                                                                             .lines = lines };
    part("process set (/proc, smaps_rollup included)", pid_set, PROCS, &none);
    part("spool: Postfix queue, hashed", queue_set, (uint64_t)files, &none);
    part("store: maildir, 1200 users, unchanged", store_set, (uint64_t)files, &none);
    part("store: the same, a message moved in every mailbox", store_set, (uint64_t)files, &moved);
    char label[64];
    snprintf(label, sizeof label, "logs: a second's %ld lines", lines);
    part(label, log_set, (uint64_t)lines, &logged);

    /* Between walks: the process set alone on its thread, sampled ten times a second. */
    double per_sample, start_ms;
    uint64_t samples;
    const char *fast[] = { pid_set, "server.sample_interval=100ms" };
    on_thread(fast, 2, 5, &per_sample, &samples, &start_ms);
    printf("%-52s %8d %10.2f ms\n", "process set, a sample between walks (on its thread)", PROCS, per_sample);

    /* The whole collector as a run starts it: its own thread, the default settings. */
    const char *all[] = { pid_set, queue_set, store_set, log_set };
    pid_t writer = start_writer(log, lines);
    double per_s = on_thread(all, 4, seconds, &per_sample, &samples, &start_ms);
    printf("whole collector: its start (the baseline, a full reading) %.1f ms of CPU; then on its own thread at the "
           "default settings, %d s while the log grows: %llu samples, %.1f ms of CPU per second (%.2f %% of a "
           "core)\n", start_ms, seconds, (unsigned long long)samples, per_s, per_s / 10);
    kill(writer, SIGKILL);
    waitpid(writer, NULL, 0);
    kill(-master, SIGKILL);
    waitpid(master, NULL, 0);
    close(log_fd);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : 1;
}
