/* procfs: pure parsers of the /proc files the collector reads (stat, status, io,
 * smaps_rollup, pid files) and a scan of a proc root. Every function takes the root
 * or the text, so the tests run them on fixture trees instead of the live /proc. */
#ifndef MS_PROCFS_H
#define MS_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* /proc/PID/stat. (pid, starttime) names a process for good: a PID alone can be
 * reused by an unrelated process between two samples. */
struct proc_stat {
    int pid, ppid;
    char state;                 /* R S D Z T ... */
    char comm[32];              /* the kernel keeps 15 characters */
    uint64_t starttime;         /* clock ticks after boot */
    uint64_t rss_pages;
    uint64_t cpu_ticks;         /* utime + stime + cutime + cstime, clock ticks */
    int exit_code;              /* waitpid() status of a zombie (Linux >= 3.5) */
    int has_exit_code;
};

/* The lines of /proc/PID/status the collector uses, in bytes. A zombie or a kernel
 * thread has no VmRSS line: have_rss = 0 and rss = 0. */
struct proc_status {
    uint64_t rss, hwm;
    int ppid, have_rss;
};

/* /proc/PID/io: a thread group's own counts plus those of every child it reaped.
 * cpu_ms comes from /proc/PID/stat (utime + stime + cutime + cstime) and follows the
 * same rule: the kernel adds a reaped child's CPU time to its parent's cutime and
 * cstime as it adds its I/O, so it is summed, carried and subtracted alongside. */
struct proc_io {
    uint64_t rchar, wchar, syscr, syscw, read_bytes, write_bytes, cancelled_write_bytes;
    uint64_t cpu_ms;
};

/* Each returns 0, or -1 when a field the struct needs is missing or malformed. */
int procfs_parse_stat(const char *buf, struct proc_stat *out);
int procfs_parse_status(const char *buf, struct proc_status *out);
int procfs_parse_io(const char *buf, struct proc_io *out);
int procfs_parse_pss(const char *buf, uint64_t *bytes);        /* smaps_rollup "Pss:" */
int procfs_parse_pidfile(const char *buf, int *pid);           /* "  1234\n"; lines after the first
                                                               (PostgreSQL's postmaster.pid) ignored */

void proc_io_add(struct proc_io *acc, const struct proc_io *x);
void proc_io_sub(struct proc_io *acc, const struct proc_io *x);
/* Field by field maximum: a total that may only grow. */
void proc_io_max(struct proc_io *acc, const struct proc_io *x);

/* Reads a small file (relative to dfd, or absolute) into buf, NUL-terminated.
 * Returns its length, or -1 with errno set. A file longer than len-1 is cut. */
ssize_t procfs_read(int dfd, const char *path, char *buf, size_t len);

/* Every process under root ("/proc" or a fixture dir), sorted by pid. Entries whose
 * stat vanished or does not parse are skipped: processes exit while we list them. */
struct proc_table {
    struct proc_stat *v;
    size_t n, cap;
};
int procfs_scan(const char *root, struct proc_table *t, char *err, size_t errlen);

/* The same scan every sample, at less cost. An entry whose /proc/PID directory has
 * the inode it had at the last rescan is the same process (a new process under a
 * reused pid gets a new inode: proc_fill_cache), so it keeps the reading it had
 * unless fresh(ctx, entry) asks for a new one (the caller's own processes); stat
 * files are kept open, up to `keep` of them, and read again with pread. */
struct proc_scan;
struct proc_scan *procfs_scan_new(int rootfd, size_t keep);
void procfs_scan_free(struct proc_scan *s);
int procfs_rescan(struct proc_scan *s, struct proc_table *t, int (*fresh)(void *ctx, const struct proc_stat *e),
                  void *ctx, char *err, size_t errlen);
const struct proc_stat *procfs_find(const struct proc_table *t, int pid);
void procfs_table_free(struct proc_table *t);

#endif
