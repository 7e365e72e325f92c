/* collector: samples the server under test on its own thread, on the run's clock:
 * memory and I/O of its process set (the roots named by [server] pid, pidfile and
 * process, and all their descendants), its spool, its mail store and its logs, and
 * crashes of its masters. Keeps every sample; the run's writers read from it.
 *
 * What the numbers mean (and what they cannot see):
 * - mem: VmRSS summed over the set. Shared pages (libraries, Postfix's and Dovecot's
 *   shared memory) count once per process that maps them, so the sum overstates what
 *   the server really holds; mem_pss (proportional set size, from smaps_rollup) splits
 *   each shared page between its users and adds up to the real figure. On the testbed
 *   about 600 MB of summed RSS is about 75 MB of PSS.
 * - input/output: syscr/syscw, read and write calls (files, sockets and pipes alike).
 *   ibytes/obytes: rchar/wchar, the bytes those calls moved. disk_read_bytes and
 *   disk_write_bytes: what reached the storage layer (read_bytes; write_bytes minus
 *   cancelled_write_bytes); reads served from the page cache do not count there.
 * - I/O of children that lived between two samples is counted: the kernel adds a
 *   reaped child's counts to its parent's /proc/PID/io. Not seen: children of a parent
 *   that ignores SIGCHLD (the kernel reaps them and drops the counts), processes that
 *   left the tree and were reaped outside it before a sample saw them (an orphan seen
 *   once stays followed until it exits), processes outside the tree, and anything when
 *   /proc/PID/io is not readable (another user's processes need root: start refuses).
 *   What a process did before the run started is subtracted.
 * - cpu: utime + stime of the set's processes plus the cutime + cstime of the
 *   children they reaped, by the same rule as the I/O (a reaped child's CPU time goes
 *   to its parent); what a process spent before the run is subtracted.
 * - parts: each member counts in the part of the master it descends from (mta, pop3,
 *   db, other: procset.c names them by the master's name); mem, cpu and I/O per part.
 * - database ([server] database): the database's own counters, read through its
 *   client library each sample (probe/db.h says what each kind gives).
 * - spool: the messages queued in the spool_dirs, counted as each MTA keeps them
 *   (spool_format: probe/queue.h), files only for spool_format = files.
 * - store: maildir = files in cur/ and new/ (sizes from ",S=" in the name, else stat);
 *   mbox = dated "From " separators, skipping bodies by Content-Length when it lands
 *   on the next separator (Dovecot does not escape "From " in bodies), cached per file
 *   until it changes; sdbox = u.N files; mdbox = each mailbox's dovecot.index plus a
 *   replay of its transaction log (appends, and expunges a sync carried out), bytes =
 *   the m.N storage files, which keep expunged mail until `doveadm purge`.
 * - crashes: a master named by pid or pidfile (or a top process matched by `process`)
 *   that disappears; a pidfile that then names a live new process is a restart (one
 *   crash, not two). A clean stop of the server during the run counts too: from
 *   outside, it cannot be told from a crash. Children that exit are not crashes unless
 *   caught as zombies killed by SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS,
 *   SIGTRAP, SIGXCPU, SIGXFSZ or SIGKILL; parents reap within milliseconds, so that is
 *   luck, and the servers' own log lines ("killed by signal") are the reliable trace
 *   (class fatal).
 *
 * The parts: procset.c (the process set), spool.c, store.c and dbox.c (the store
 * walkers), logwatch.c (the logs); this file runs them on a thread and keeps the
 * samples. */
#ifndef MS_COLLECTOR_H
#define MS_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "probe/logwatch.h"
#include "probe/sample.h"
#include "probe/series.h"
#include "settings/config.h"

struct collector;

/* Validates the config (bad ERE, unreadable pidfile, no such dir: error text naming the
 * key and value) and starts the sampling thread after a first sample. t0 is the run's
 * start on CLOCK_MONOTONIC (ns). A tested_server with nothing set gives a collector
 * that samples nothing (all getters return zeros), not an error. */
struct collector *collector_start(const struct tested_server *cfg, uint64_t t0_ns, char *err, size_t errlen);

/* For tests: a fixture tree instead of /proc, and sampling only when asked. */
struct collector_opts {
    const char *proc_root;      /* NULL = "/proc" */
    int manual;                 /* no thread: collector_sample() takes each sample */
    uint64_t start_ticks;       /* processes started before this (clock ticks after boot,
                                   as in /proc/PID/stat) bring I/O from before the run;
                                   0 = now */
    uint64_t keep_ns;           /* drop samples older than this (mailsoak probe); 0 = keep all */
    size_t keep_files;          /* /proc files kept open between samples, of each of two kinds
                                   (0 = a quarter of the soft RLIMIT_NOFILE, at most 4096): a run
                                   gives what its sessions leave */
};
struct collector *collector_start_opts(const struct tested_server *cfg, uint64_t t0_ns,
                                       const struct collector_opts *opts, char *err, size_t errlen);
/* One sample now, in the caller's thread (manual collectors only). */
void collector_sample(struct collector *c);

/* For a window's edges (`mailsoak probe`'s pullers) and for a run that must know the
 * spool now: asks the sampler thread for a sample that reads everything (a walk) and
 * waits for it (at most timeout_ns), unless the last walk is younger than
 * min_age_ns. 0 when a walk at least that fresh exists. */
int collector_sample_fresh(struct collector *c, uint64_t min_age_ns, uint64_t timeout_ns);

void collector_stop(struct collector *c);          /* takes a final sample, joins the thread */
void collector_free(struct collector *c);

/* The second pass over the logs since the run began (logwatch_rescan), once the
 * collector stopped; nothing when it follows no log or still runs. */
void collector_rescan_logs(struct collector *c, logwatch_rescan_fn fn, void *ctx);

/* The samples (probe/series.h); NULL for a collector that samples nothing. */
struct series *collector_series(struct collector *c);

/* Thread-safe snapshot for the live line every interval. */
void collector_now(struct collector *c, struct series_now *out);

/* Plain copies of what was measured (probe/sample.h), for the run's writers
 * (result/probe_output.h): the whole run so far; the interval (from_ns, to_ns] of the
 * timeline; the events. Each is filled even for a NULL or idle collector (nothing
 * measured), and freed with its probe_*_free. */
void collector_summary(struct collector *c, struct probe_summary *out);
void collector_interval(struct collector *c, uint64_t from_ns, uint64_t to_ns, struct probe_interval *out);
void collector_events(struct collector *c, struct probe_events *out);

#endif
