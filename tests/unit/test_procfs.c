/* test_procfs: the /proc parsers on files captured from a real kernel (a sleeping
 * process, a zombie killed by SIGSEGV) and on damaged ones, and the scan of a proc
 * root on a fixture tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "probe/procfs.h"

static const char *fixture(const char *name)
{
    static char path[4096];
    const char *top = getenv("TOP");
    snprintf(path, sizeof path, "%s/tests/fixtures/proc/%s", top ? top : ".", name);
    return path;
}

static char *load(const char *name)
{
    static char buf[8192];
    ssize_t n = procfs_read(AT_FDCWD, fixture(name), buf, sizeof buf);
    assert_true(n > 0);
    return buf;
}

static void stat_of_a_sleeping_process(void **state)
{
    struct proc_stat st;
    assert_int_equal(procfs_parse_stat(load("stat_sleep"), &st), 0);
    assert_int_equal(st.pid, 26535);
    assert_int_equal(st.ppid, 26529);
    assert_string_equal(st.comm, "sleep");
    assert_int_equal(st.state, 'S');
    assert_int_equal(st.starttime, 118294);
    assert_int_equal(st.rss_pages, 405);
    assert_true(st.has_exit_code);
    assert_int_equal(st.exit_code, 0);
}

/* A bash that spent CPU itself and reaped a subshell that spent more: utime, stime,
 * cutime and cstime (fields 14-17: 33 3 44 7) add up. */
static void stat_cpu_counts_self_and_reaped_children(void **state)
{
    struct proc_stat st;
    assert_int_equal(procfs_parse_stat(load("stat_cpu"), &st), 0);
    assert_string_equal(st.comm, "bash");
    assert_int_equal(st.cpu_ticks, 33 + 3 + 44 + 7);
    assert_int_equal(procfs_parse_stat(load("stat_sleep"), &st), 0);
    assert_int_equal(st.cpu_ticks, 0);
}

static void stat_of_a_zombie_has_its_wait_status(void **state)
{
    struct proc_stat st;
    assert_int_equal(procfs_parse_stat(load("stat_zombie_segv"), &st), 0);
    assert_int_equal(st.state, 'Z');
    assert_true(st.has_exit_code);
    assert_true(WIFSIGNALED(st.exit_code));
    assert_int_equal(WTERMSIG(st.exit_code), SIGSEGV);
}

static void stat_comm_with_spaces_and_parentheses(void **state)
{
    struct proc_stat st;
    assert_int_equal(procfs_parse_stat(load("stat_tricky_comm"), &st), 0);
    assert_int_equal(st.pid, 4242);
    assert_string_equal(st.comm, "a) (b) c");
    assert_int_equal(st.ppid, 26529);
    assert_int_equal(st.starttime, 118294);
}

static void stat_of_an_old_kernel_has_no_exit_code(void **state)
{
    struct proc_stat st;
    assert_int_equal(procfs_parse_stat(load("stat_no_exit_code"), &st), 0);
    assert_false(st.has_exit_code);
    assert_int_equal(st.rss_pages, 405);
}

static void stat_damaged_is_refused(void **state)
{
    struct proc_stat st;
    assert_int_equal(procfs_parse_stat(load("stat_truncated"), &st), -1);
    assert_int_equal(procfs_parse_stat("", &st), -1);
    assert_int_equal(procfs_parse_stat("12 (x) S 1 2 3", &st), -1);      /* no starttime */
    assert_int_equal(procfs_parse_stat("x (y) S 1", &st), -1);
}

static void status_rss_in_bytes(void **state)
{
    struct proc_status st;
    assert_int_equal(procfs_parse_status(load("status_sleep"), &st), 0);
    assert_true(st.have_rss);
    assert_int_equal(st.rss, 1792 * 1024);
    assert_int_equal(st.ppid, 26529);
}

static void status_of_a_zombie_has_no_rss(void **state)
{
    struct proc_status st;
    assert_int_equal(procfs_parse_status(load("status_zombie"), &st), 0);
    assert_false(st.have_rss);
    assert_int_equal(st.rss, 0);
    assert_int_equal(procfs_parse_status("Name: x\n", &st), -1);
}

static void io_all_counters(void **state)
{
    struct proc_io io;
    assert_int_equal(procfs_parse_io(load("io_sleep"), &io), 0);
    assert_int_equal(io.rchar, 6976);
    assert_int_equal(io.syscr, 10);
    assert_int_equal(io.wchar, 0);
    assert_int_equal(procfs_parse_io("rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\n"
                                     "write_bytes: 6\ncancelled_write_bytes: 7\n", &io), 0);
    assert_int_equal(io.rchar, 1);
    assert_int_equal(io.wchar, 2);
    assert_int_equal(io.syscr, 3);
    assert_int_equal(io.syscw, 4);
    assert_int_equal(io.read_bytes, 5);
    assert_int_equal(io.write_bytes, 6);
    assert_int_equal(io.cancelled_write_bytes, 7);
}

static void io_without_storage_accounting(void **state)
{
    struct proc_io io;
    assert_int_equal(procfs_parse_io(load("io_no_storage"), &io), 0);
    assert_int_equal(io.rchar, 6976);
    assert_int_equal(io.write_bytes, 0);
    assert_int_equal(procfs_parse_io("rchar: 1\nwchar: 2\n", &io), -1);
}

static void io_arithmetic(void **state)
{
    struct proc_io a = { 10, 20, 30, 40, 50, 60, 70, 80 }, b = { 1, 2, 3, 4, 5, 6, 7, 8 },
                   m = { 0, 100, 0, 100, 0, 100, 0, 100 };
    proc_io_add(&a, &b);
    assert_int_equal(a.rchar, 11);
    assert_int_equal(a.cancelled_write_bytes, 77);
    assert_int_equal(a.cpu_ms, 88);     /* CPU time is carried like the I/O counts */
    proc_io_sub(&a, &b);
    assert_int_equal(a.wchar, 20);
    proc_io_max(&a, &m);
    assert_int_equal(a.rchar, 10);
    assert_int_equal(a.wchar, 100);
    assert_int_equal(a.read_bytes, 50);
    assert_int_equal(a.cpu_ms, 100);
}

static void pss_from_smaps_rollup(void **state)
{
    uint64_t pss = 0;
    assert_int_equal(procfs_parse_pss(load("smaps_rollup_sleep"), &pss), 0);
    assert_int_equal(pss, 148 * 1024);
    assert_int_equal(procfs_parse_pss("Rss: 4 kB\nPss_Anon: 3 kB\n", &pss), -1);
}

static void pidfiles(void **state)
{
    int pid = 0;
    assert_int_equal(procfs_parse_pidfile("      1234\n", &pid), 0);     /* Postfix pads */
    assert_int_equal(pid, 1234);
    assert_int_equal(procfs_parse_pidfile("77", &pid), 0);
    assert_int_equal(pid, 77);
    assert_int_equal(procfs_parse_pidfile("", &pid), -1);
    assert_int_equal(procfs_parse_pidfile("12ab\n", &pid), -1);
    assert_int_equal(procfs_parse_pidfile("0\n", &pid), -1);
    assert_int_equal(procfs_parse_pidfile("-5\n", &pid), -1);
    assert_int_equal(procfs_parse_pidfile("1 2\n", &pid), -1);
    /* PostgreSQL's postmaster.pid: the pid, then the data directory, start time, port... */
    assert_int_equal(procfs_parse_pidfile("25256\n/tmp/tb/db/pgdata\n1796160662\n5432\n/tmp/tb/run/db\n", &pid), 0);
    assert_int_equal(pid, 25256);
    assert_int_equal(procfs_parse_pidfile("25256 x\n/tmp\n", &pid), -1);
}

static void scan_fixture_tree(void **state)
{
    struct proc_table t = { 0 };
    char err[200];
    const char *root = fixture("tree");
    assert_int_equal(procfs_scan(root, &t, err, sizeof err), 0);
    /* 77 has a damaged stat and notapid is not a process: both skipped. */
    assert_int_equal(t.n, 3);
    assert_int_equal(t.v[0].pid, 1);
    assert_int_equal(t.v[1].pid, 42);
    assert_int_equal(t.v[2].pid, 43);
    const struct proc_stat *e = procfs_find(&t, 43);
    assert_non_null(e);
    assert_string_equal(e->comm, "smtpd");
    assert_int_equal(e->ppid, 42);
    assert_null(procfs_find(&t, 77));
    assert_null(procfs_find(&t, 2));
    procfs_table_free(&t);
    assert_int_equal(procfs_scan("/nonexistent-proc-root", &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent-proc-root"));
}

static void scan_live_proc_finds_ourselves(void **state)
{
    struct proc_table t = { 0 };
    char err[200];
    assert_int_equal(procfs_scan("/proc", &t, err, sizeof err), 0);
    const struct proc_stat *me = procfs_find(&t, getpid());
    assert_non_null(me);
    assert_int_equal(me->ppid, getppid());
    assert_int_equal(me->state, 'R');
    procfs_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stat_of_a_sleeping_process),
        cmocka_unit_test(stat_cpu_counts_self_and_reaped_children),
        cmocka_unit_test(stat_of_a_zombie_has_its_wait_status),
        cmocka_unit_test(stat_comm_with_spaces_and_parentheses),
        cmocka_unit_test(stat_of_an_old_kernel_has_no_exit_code),
        cmocka_unit_test(stat_damaged_is_refused),
        cmocka_unit_test(status_rss_in_bytes),
        cmocka_unit_test(status_of_a_zombie_has_no_rss),
        cmocka_unit_test(io_all_counters),
        cmocka_unit_test(io_without_storage_accounting),
        cmocka_unit_test(io_arithmetic),
        cmocka_unit_test(pss_from_smaps_rollup),
        cmocka_unit_test(pidfiles),
        cmocka_unit_test(scan_fixture_tree),
        cmocka_unit_test(scan_live_proc_finds_ourselves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
