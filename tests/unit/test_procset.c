/* test_procset: the collector's process set against real processes (a short-lived
 * child's I/O is counted after its parent reaps it; a crash and a restart are
 * events) and against a fixture proc tree (accounting when members come and go;
 * I/O totals that never fall between samples). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe/collector.h"
#include "probe/procfs.h"
#include "probe/procset.h"
#include "result/probe_output.h"

#include "collector_test.h"

#define MIB (1024 * 1024)

static void collector_json_events(struct collector *c, json_t *events)
{
    struct probe_events pe;
    collector_events(c, &pe);
    probe_json_events(&pe, events);
    probe_events_free(&pe);
}

static int count_events(struct collector *c, const char *kind)
{
    json_t *ev = json_array();
    collector_json_events(c, ev);
    int n = 0;
    for (size_t i = 0; i < json_array_size(ev); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(ev, i), "kind")), kind))
            n++;
    json_decref(ev);
    return n;
}

/* ------------------------------------------------------------------------------ */
/* Real processes: a "master" that forks children on command and reaps them. */

struct master {
    pid_t pid;
    int cmd, ack;
};

static void child_io(char op, const char *file)
{
    static char buf[64 * 1024];
    if (op == 'w') {
        int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        memset(buf, 'x', sizeof buf);
        for (int i = 0; i < 10 * MIB / (int)sizeof buf; i++)
            if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
                _exit(1);
        close(fd);
    } else if (op == 'r') {
        int fd = open(file, O_RDONLY);
        while (read(fd, buf, sizeof buf) > 0)
            ;
        close(fd);
    } else if (op == 's') {
        struct rlimit none = { 0, 0 };
        setrlimit(RLIMIT_CORE, &none);
        /* SIGABRT: neither cmocka's inherited handlers nor ASan's turn it into an exit. */
        signal(SIGABRT, SIG_DFL);
        raise(SIGABRT);
    }
    _exit(0);
}

/* Commands: w/r/s fork a child that writes 10 MiB, reads them back, or crashes;
 * 'z' reaps a child left as a zombie; 'q' exits. A child is reaped at once unless it
 * crashed ('s' leaves it a zombie until 'z'). */
static void master_loop(int cmd, int ack, const char *file, int autoreap)
{
    if (autoreap)
        signal(SIGCHLD, SIG_IGN);
    char op;
    pid_t zombie = 0;
    while (read(cmd, &op, 1) == 1 && op != 'q') {
        if (op == 'z') {
            waitpid(zombie, NULL, 0);
        } else {
            pid_t c = fork();
            if (c == 0)
                child_io(op, file);
            if (op == 's') {
                zombie = c;
            } else if (autoreap) {
                while (kill(c, 0) == 0)
                    usleep(1000);
            } else {
                waitpid(c, NULL, 0);
            }
        }
        if (write(ack, "k", 1) != 1)
            break;
    }
    _exit(0);
}

static struct master start_master(const char *file, int autoreap)
{
    int c[2], a[2];
    assert_int_equal(pipe(c), 0);
    assert_int_equal(pipe(a), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(c[1]);
        close(a[0]);
        master_loop(c[0], a[1], file, autoreap);
    }
    close(c[0]);
    close(a[1]);
    return (struct master){ pid, c[1], a[0] };
}

static void master_do(struct master *m, char op)
{
    char k;
    assert_int_equal(write(m->cmd, &op, 1), 1);
    assert_int_equal(read(m->ack, &k, 1), 1);
}

static void stop_master(struct master *m)
{
    ssize_t gone = write(m->cmd, "q", 1);   /* the master may have gone already */
    (void)gone;
    close(m->cmd);
    close(m->ack);
    waitpid(m->pid, NULL, 0);
}

/* A master under watch: its data file, the collector following it by pid. */
struct rig {
    char *dir, file[128];
    struct master m;
    struct tested_server cfg;
    struct collector *c;
};

static void rig_up(struct rig *r, int autoreap, uint64_t interval, int manual)
{
    char buf[32], err[400];
    memset(r, 0, sizeof *r);
    r->dir = tmpdir();
    snprintf(r->file, sizeof r->file, "%s/data", r->dir);
    r->m = start_master(r->file, autoreap);
    r->cfg.sample_interval = interval;
    snprintf(buf, sizeof buf, "%d", (int)r->m.pid);
    strlist_add(&r->cfg.pids, buf);
    struct collector_opts o = { .manual = manual };
    r->c = collector_start_opts(&r->cfg, now_ns(), &o, err, sizeof err);
    if (!r->c)
        print_error("%s\n", err);
    assert_non_null(r->c);
}

static int wait_for_zombie_child(pid_t parent)
{
    char err[200];
    struct proc_table t = { 0 };
    int found = 0;
    for (int i = 0; i < 500 && !found; i++) {
        assert_int_equal(procfs_scan("/proc", &t, err, sizeof err), 0);
        for (size_t k = 0; k < t.n; k++)
            found |= t.v[k].ppid == parent && t.v[k].state == 'Z';
        if (!found)
            usleep(10000);
    }
    procfs_table_free(&t);
    return found;
}

/* Returns once two samples have started after the call, so the last one saw the
 * state of the world at the call. */
static void wait_two_samples(struct collector *c)
{
    json_t *s = summary_of(c);
    uint64_t n = summary_u64(s, "server_samples");
    json_decref(s);
    for (int i = 0; i < 1000; i++) {
        usleep(10000);
        s = summary_of(c);
        uint64_t m = summary_u64(s, "server_samples");
        json_decref(s);
        if (m >= n + 2)
            return;
    }
    fail_msg("the sampling thread took no sample in 10 s");
}

static void rig_down(struct rig *r, int master_alive)
{
    collector_free(r->c);
    strlist_free(&r->cfg.pids);
    if (master_alive) {
        stop_master(&r->m);
    } else {
        close(r->m.cmd);
        close(r->m.ack);
    }
    rmtree(r->dir);
}

static void reaped_child_io_between_samples_is_counted(void **state)
{
    struct rig r;
    rig_up(&r, 0, 1000000000ull, 1);
    master_do(&r.m, 'w');       /* the child writes, exits and is reaped: never sampled */
    collector_sample(r.c);
    json_t *s = summary_of(r.c);
    assert_true(summary_u64(s, "obytes") >= 10 * MIB);
    assert_true(summary_u64(s, "obytes") < 11 * MIB);
    assert_true(summary_u64(s, "output") >= 160);
    assert_int_equal(summary_u64(s, "server_procs_peak"), 1);
    assert_true(summary_u64(s, "mem") > 0);
    json_decref(s);

    master_do(&r.m, 'r');
    collector_stop(r.c);
    s = summary_of(r.c);
    assert_true(summary_u64(s, "ibytes") >= 10 * MIB);
    assert_true(summary_u64(s, "input") >= 160);
    assert_int_equal(summary_u64(s, "server_crashes"), 0);
    json_decref(s);
    rig_down(&r, 1);
}

/* The limit of the method: a parent that ignores SIGCHLD lets the kernel reap its
 * children, and their counts are dropped instead of added to the parent's. */
static void autoreaped_child_io_is_lost(void **state)
{
    struct rig r;
    rig_up(&r, 1, 1000000000ull, 1);
    master_do(&r.m, 'w');
    collector_stop(r.c);
    json_t *s = summary_of(r.c);
    assert_true(summary_u64(s, "obytes") < MIB);
    json_decref(s);
    rig_down(&r, 1);
}

static void the_sampling_thread_counts_children_too(void **state)
{
    struct rig r;
    uint64_t t0 = now_ns();
    rig_up(&r, 0, 20000000ull, 0);
    for (int i = 0; i < 3; i++) {
        master_do(&r.m, 'w');
        usleep(30000);
    }
    wait_two_samples(r.c);
    struct series_now now;
    collector_now(r.c, &now);
    assert_true(now.active);
    assert_true(now.procs >= 1 && now.procs <= 2);   /* a child may be alive at a sample */
    assert_true(now.mem > 0);
    uint64_t t1 = now_ns();
    collector_stop(r.c);
    json_t *s = summary_of(r.c);
    assert_true(summary_u64(s, "obytes") >= 30 * MIB);
    assert_true(summary_u64(s, "server_samples") >= 4);
    /* The timeline's intervals add up to the run. */
    json_t *e1 = json_object(), *e2 = json_object();
    collector_json_interval(r.c, e1, t0, t1);
    collector_json_interval(r.c, e2, t1, now_ns());
    uint64_t a = (uint64_t)json_integer_value(json_object_get(json_object_get(e1, "server"), "obytes"));
    uint64_t b = (uint64_t)json_integer_value(json_object_get(json_object_get(e2, "server"), "obytes"));
    assert_true(a >= 30 * MIB);
    assert_int_equal(a + b, summary_u64(s, "obytes"));
    json_decref(s);
    json_decref(e1);
    json_decref(e2);
    rig_down(&r, 1);
}

static void a_crashed_child_caught_as_zombie_and_a_dead_master(void **state)
{
    struct rig r;
    rig_up(&r, 0, 1000000000ull, 1);
    master_do(&r.m, 's');       /* the child dies of SIGABRT and stays a zombie */
    assert_true(wait_for_zombie_child(r.m.pid));
    collector_sample(r.c);
    collector_sample(r.c);      /* seen twice, counted once */
    assert_int_equal(count_events(r.c, "child_crash"), 1);
    master_do(&r.m, 'z');
    kill(r.m.pid, SIGKILL);
    waitpid(r.m.pid, NULL, 0);
    collector_sample(r.c);
    collector_stop(r.c);
    assert_int_equal(count_events(r.c, "crash"), 1);
    json_t *s = summary_of(r.c);
    assert_int_equal(summary_u64(s, "server_crashes"), 2);
    json_decref(s);
    struct series_now now;
    collector_now(r.c, &now);
    assert_int_equal(now.crashes, 2);
    assert_int_equal(now.procs, 0);
    rig_down(&r, 0);
}

static void write_pidfile(const char *path, pid_t pid)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%10d\n", (int)pid);       /* Postfix's format */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(buf, f);
    fclose(f);
}

static void a_master_restarted_under_a_new_pid(void **state)
{
    char *dir = tmpdir(), file[128], pidfile[128], err[400];
    snprintf(file, sizeof file, "%s/data", dir);
    snprintf(pidfile, sizeof pidfile, "%s/master.pid", dir);
    struct master m1 = start_master(file, 0);
    write_pidfile(pidfile, m1.pid);
    struct tested_server cfg = { .sample_interval = 1000000000ull };
    strlist_add(&cfg.pidfiles, pidfile);
    struct collector_opts o = { .manual = 1 };
    struct collector *c = collector_start_opts(&cfg, now_ns(), &o, err, sizeof err);
    assert_non_null(c);
    stop_master(&m1);
    struct master m2 = start_master(file, 0);
    write_pidfile(pidfile, m2.pid);
    collector_sample(c);
    assert_int_equal(count_events(c, "restart"), 1);
    assert_int_equal(count_events(c, "crash"), 0);
    master_do(&m2, 'w');        /* the new master is followed */
    collector_sample(c);
    collector_stop(c);
    json_t *s = summary_of(c);
    assert_int_equal(summary_u64(s, "server_crashes"), 1);
    assert_true(summary_u64(s, "obytes") >= 10 * MIB);
    json_decref(s);
    json_t *ev = json_array();
    collector_json_events(c, ev);
    const char *text = json_string_value(json_object_get(json_array_get(ev, 0), "text"));
    char want[64];
    snprintf(want, sizeof want, "names %d", (int)m2.pid);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, pidfile));
    json_decref(ev);
    collector_free(c);
    strlist_free(&cfg.pidfiles);
    stop_master(&m2);
    rmtree(dir);
}

/* ------------------------------------------------------------------------------ */
/* A fixture proc tree: the accounting when members come and go. */

static void fake(const char *root, int pid, int ppid, const char *comm, char state, uint64_t start,
                 uint64_t rss_kb, uint64_t wchar, int exit_code)
{
    char rel[64], text[800];
    int n = snprintf(text, sizeof text, "%d (%s) %c %d 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu 1000 %llu",
                     pid, comm, state, ppid, (unsigned long long)start, (unsigned long long)(rss_kb / 4));
    for (int f = 25; f <= 51; f++)
        n += snprintf(text + n, sizeof text - (size_t)n, " 0");
    snprintf(text + n, sizeof text - (size_t)n, " %d\n", exit_code);
    snprintf(rel, sizeof rel, "%d/stat", pid);
    put(root, rel, text);
    snprintf(text, sizeof text, "rchar: %llu\nwchar: %llu\nsyscr: 1\nsyscw: %llu\nread_bytes: 0\n"
             "write_bytes: 0\ncancelled_write_bytes: 0\n", (unsigned long long)wchar / 2,
             (unsigned long long)wchar, (unsigned long long)wchar / 100);
    snprintf(rel, sizeof rel, "%d/io", pid);
    put(root, rel, text);
    if (state == 'Z')
        snprintf(text, sizeof text, "Name:\t%s\nState:\tZ (zombie)\nPPid:\t%d\n", comm, ppid);
    else
        snprintf(text, sizeof text, "Name:\t%s\nPPid:\t%d\nVmRSS:\t%llu kB\n", comm, ppid,
                 (unsigned long long)rss_kb);
    snprintf(rel, sizeof rel, "%d/status", pid);
    put(root, rel, text);
}

static void gone(const char *root, int pid)
{
    char path[200];
    snprintf(path, sizeof path, "%s/%d", root, pid);
    rmtree(path);
}

static uint64_t obytes(struct collector *c)
{
    json_t *s = summary_of(c);
    uint64_t v = summary_u64(s, "obytes");
    json_decref(s);
    return v;
}

static void accounting_as_members_come_and_go(void **state)
{
    char *root = tmpdir(), err[400];
    /* Before the run (start_ticks 1000): init, the master, an unrelated process. */
    fake(root, 1, 0, "init", 'S', 1, 100, 999999, 0);
    fake(root, 100, 1, "master", 'S', 500, 4000, 1000, 0);
    fake(root, 300, 1, "other", 'S', 600, 100, 5000, 0);
    struct tested_server cfg = { .sample_interval = 1000000000ull };
    strlist_add(&cfg.processes, "^master$");
    struct collector_opts o = { .proc_root = root, .manual = 1, .start_ticks = 1000 };
    struct collector *c = collector_start_opts(&cfg, now_ns(), &o, err, sizeof err);
    if (!c)
        print_error("%s\n", err);
    assert_non_null(c);
    assert_int_equal(obytes(c), 0);                 /* the master's past is not the run's */

    fake(root, 101, 100, "smtpd", 'S', 2000, 1000, 300, 0);
    fake(root, 102, 101, "cleanup", 'S', 2001, 1000, 50, 0);
    collector_sample(c);
    assert_int_equal(obytes(c), 350);
    struct series_now now;
    collector_now(c, &now);
    assert_int_equal(now.procs, 3);
    assert_int_equal(now.mem, (4000 + 1000 + 1000) * 1024);

    /* 102 is reaped by 101 (its 80 bytes in all move up); 101 did 100 more. */
    gone(root, 102);
    fake(root, 101, 100, "smtpd", 'S', 2000, 1000, 300 + 100 + 80, 0);
    collector_sample(c);
    assert_int_equal(obytes(c), 480);

    /* 101 reaped by the master; a child the collector never saw came and went too. */
    gone(root, 101);
    fake(root, 100, 1, "master", 'S', 500, 4000, 1000 + 480 + 20 + 700, 0);
    collector_sample(c);
    assert_int_equal(obytes(c), 1200);

    /* An orphan: its parent 103 died, it was reparented to init and stays followed. */
    fake(root, 103, 100, "local", 'S', 3000, 1000, 10, 0);
    fake(root, 104, 103, "pipe", 'S', 3001, 1000, 40, 0);
    collector_sample(c);
    assert_int_equal(obytes(c), 1250);
    gone(root, 103);
    fake(root, 100, 1, "master", 'S', 500, 4000, 2200 + 10, 0);
    fake(root, 104, 1, "pipe", 'S', 3001, 1000, 60, 0);
    collector_sample(c);
    assert_int_equal(obytes(c), 1270);
    collector_now(c, &now);
    assert_int_equal(now.procs, 2);
    /* Init reaps it: its last counts stay in the run's total. */
    gone(root, 104);
    collector_sample(c);
    assert_int_equal(obytes(c), 1270);

    /* A pid reused by an unrelated process is not a member. */
    fake(root, 101, 1, "smtpd", 'S', 4000, 1000, 777777, 0);
    collector_sample(c);
    assert_int_equal(obytes(c), 1270);
    collector_now(c, &now);
    assert_int_equal(now.procs, 1);
    assert_int_equal(now.mem_peak, (4000 + 1000 + 1000) * 1024);

    /* A crashed child caught as a zombie; a zombie killed by SIGTERM is no crash. */
    fake(root, 105, 100, "smtpd", 'Z', 5000, 0, 5, SIGSEGV);
    fake(root, 106, 100, "smtpd", 'Z', 5001, 0, 5, SIGTERM);
    collector_sample(c);
    assert_int_equal(count_events(c, "child_crash"), 1);
    assert_int_equal(obytes(c), 1280);
    gone(root, 105);
    gone(root, 106);
    fake(root, 100, 1, "master", 'S', 500, 4000, 2210 + 10, 0);
    collector_sample(c);
    assert_int_equal(obytes(c), 1280);

    /* The master dies: a crash, and its counts stay. */
    gone(root, 100);
    collector_sample(c);
    collector_stop(c);
    assert_int_equal(obytes(c), 1280);
    assert_int_equal(count_events(c, "crash"), 1);
    json_t *s = summary_of(c);
    assert_int_equal(summary_u64(s, "server_crashes"), 2);
    assert_int_equal(summary_u64(s, "server_procs_peak"), 3);
    assert_int_equal(summary_u64(s, "mem_final"), 0);
    json_decref(s);
    collector_free(c);
    strlist_free(&cfg.processes);
    rmtree(root);
}
/* The I/O counters never fall between samples, whatever the members' files say:
 * a child reaped without its parent's counts growing (SIGCHLD ignored: the kernel
 * drops them) takes nothing back from the run's total, which grows again once the
 * set's sum passes it. */
static void io_never_falls(void **state)
{
    char *root = tmpdir(), err[400];
    fake(root, 100, 1, "master", 'S', 500, 4000, 1000, 0);
    struct tested_server cfg = { .sample_interval = 1000000000ull };
    strlist_add(&cfg.processes, "^master$");
    struct collector_opts o = { .proc_root = root, .manual = 1, .start_ticks = 1000 };
    struct collector *c = collector_start_opts(&cfg, now_ns(), &o, err, sizeof err);
    assert_non_null(c);
    fake(root, 101, 100, "smtpd", 'S', 2000, 1000, 300, 0);
    collector_sample(c);
    assert_int_equal(obytes(c), 300);
    gone(root, 101);                 /* reaped, and the master's counts did not grow */
    collector_sample(c);
    assert_int_equal(obytes(c), 300);
    fake(root, 100, 1, "master", 'S', 500, 4000, 1000 + 200, 0);
    collector_sample(c);
    assert_int_equal(obytes(c), 300);    /* 200 since the start: the total stands */
    fake(root, 100, 1, "master", 'S', 500, 4000, 1000 + 450, 0);
    collector_sample(c);
    assert_int_equal(obytes(c), 450);
    collector_free(c);
    strlist_free(&cfg.processes);
    rmtree(root);
}

/* Dovecot's IMAP processes are the mailbox server's part, beside POP3's: as children
 * of its master, and as roots of their own when server.process names them (a
 * Dovecot whose master is not watched). Postfix's stay the MTA's. */
static void dovecot_imap_is_the_mailbox_part(void **state)
{
    char *root = tmpdir(), err[400];
    (void)state;
    fake(root, 1, 0, "init", 'S', 1, 100, 0, 0);
    fake(root, 100, 1, "master", 'S', 500, 4000, 0, 0);
    fake(root, 101, 100, "smtpd", 'S', 600, 1000, 0, 0);
    fake(root, 200, 1, "dovecot", 'S', 500, 2000, 0, 0);
    const char *kids[] = { "pop3-login", "imap-login", "imap", "imap", "imap", "lmtp", "auth", "anvil" };
    for (int i = 0; i < 8; i++)
        fake(root, 201 + i, 200, kids[i], 'S', 600, 1000, 0, 0);
    struct probe_sample s;
    struct procset *ps = procset_new(root, 1000, 4, NULL, NULL, err, sizeof err);
    assert_non_null(ps);
    assert_int_equal(procset_add_process(ps, "^(master|dovecot)$", err, sizeof err), 0);
    memset(&s, 0, sizeof s);
    procset_sample(ps, now_ns(), 0, &s);
    assert_int_equal(s.part[PART_MTA].procs, 2);
    assert_int_equal(s.part[PART_POP3].procs, 9);
    assert_int_equal(s.part[PART_OTHER].procs, 0);
    procset_free(ps);

    /* Only the IMAP processes named: they are roots, still the mailbox server's. */
    ps = procset_new(root, 1000, 4, NULL, NULL, err, sizeof err);
    assert_non_null(ps);
    assert_int_equal(procset_add_process(ps, "^imap(-login)?$", err, sizeof err), 0);
    memset(&s, 0, sizeof s);
    procset_sample(ps, now_ns(), 0, &s);
    assert_int_equal(s.part[PART_POP3].procs, 4);
    assert_int_equal(s.part[PART_OTHER].procs, 0);
    procset_free(ps);
    rmtree(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dovecot_imap_is_the_mailbox_part),
        cmocka_unit_test(reaped_child_io_between_samples_is_counted),
        cmocka_unit_test(autoreaped_child_io_is_lost),
        cmocka_unit_test(the_sampling_thread_counts_children_too),
        cmocka_unit_test(a_crashed_child_caught_as_zombie_and_a_dead_master),
        cmocka_unit_test(a_master_restarted_under_a_new_pid),
        cmocka_unit_test(accounting_as_members_come_and_go),
        cmocka_unit_test(io_never_falls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
