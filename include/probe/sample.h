/* sample: what the server side of a run measured, as plain data. The collector
 * fills these from its samples; the run's writers (result/probe_output.h) format them
 * into the table, the JSON summary, the timeline and the events. Nothing here points
 * into a collector, so the same structs can be filled from another source (a probe
 * on the server's host, sending them over the network) and formatted alike.
 *
 * Times are CLOCK_MONOTONIC nanoseconds on the measuring host's clock; t0 is the
 * run's start on that clock, and writers print t - t0. */
#ifndef MS_PROBE_SAMPLE_H
#define MS_PROBE_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "probe/procfs.h"

/* The parts of the server, by the name of the master each process descends from
 * (procset.c's table: master, exim4, sendmail, smtpd -> mta; dovecot, courier,
 * pop3d -> pop3; postgres, mariadbd, mysqld -> db; anything else -> other). */
enum probe_part { PART_MTA, PART_POP3, PART_DB, PART_OTHER, PROBE_NPARTS };
extern const char *const probe_part_names[PROBE_NPARTS];

/* The database's kind ([server] database); probe/db.h says what each measures. */
enum probe_db_kind { DBK_NONE, DBK_SQLITE, DBK_PGSQL, DBK_MYSQL };
const char *probe_db_kind_name(int kind);
/* Which of struct probe_db's counters a kind has (SQLite: lock_waits and errors only,
 * from the logs). Names: lock_waits, waiting, deadlocks, errors, conns, conns_max. */
int probe_db_measures(int kind, const char *counter);

/* What a source measures; the writers print "-" or null for the rest. */
struct probe_has {
    int active;                 /* measures anything at all */
    int procs, spool, store, logs;
    int db;                     /* enum probe_db_kind */
};

/* One part's share of the process set in a sample (its cpu and io since the start). */
struct probe_use {
    uint64_t mem, pss;
    unsigned procs;
    struct proc_io io;
};

/* The database's own counters as last read (probe/db.h): lock_waits, deadlocks and
 * errors are the server's totals since it started; waiting and conns are now. */
struct probe_db {
    uint64_t lock_waits, waiting, deadlocks, errors, conns, conns_max;
    uint64_t unreadable;        /* readings that failed, since the start */
};

/* One sample of the server. */
struct probe_sample {
    uint64_t t;
    uint64_t mem, pss;          /* VmRSS and PSS summed over the process set, bytes */
    uint64_t spool;             /* files below the spool directories */
    uint64_t store_messages, store_bytes;
    uint64_t log_lines;         /* log lines that matched a class since the last sample */
    uint64_t crashes;           /* since the start */
    unsigned procs;
    struct proc_io io;          /* since the start, field by field never decreasing */
    struct probe_use part[PROBE_NPARTS];
    struct probe_db db;
};

struct probe_example {
    uint64_t t;
    char *line;
};

/* A log class: its hits (over the run, or over an interval) and, over the run, the
 * first matching lines. */
struct probe_class {
    char *name;
    uint64_t count;
    struct probe_example *ex;
    size_t nex;
};

/* The whole run: the baseline (first) and last samples, peaks over every sample. */
struct probe_summary {
    struct probe_has has;
    uint64_t t0;
    struct probe_sample first, last;
    uint64_t mem_peak, pss_peak, spool_peak, samples;
    unsigned procs_peak;
    uint64_t part_mem_peak[PROBE_NPARTS], part_pss_peak[PROBE_NPARTS];
    unsigned part_procs_peak[PROBE_NPARTS];
    uint64_t db_waiting_peak, db_conns_peak;
    uint64_t log_hits;          /* lines that matched at least one class */
    struct probe_class *classes;
    size_t ncls;
};

/* One interval (from, to] of the timeline: the last samples at or before each end
 * (the baseline stands in for times before it) and each class's hits in between. */
struct probe_interval {
    struct probe_has has;
    struct probe_sample from, to;
    struct probe_class *classes;    /* counts only, no examples */
    size_t ncls;
};

/* Things that happened on the server's side; kinds: crash, restart, child_crash,
 * io_unreadable, log_rotated, log_truncated, log_appeared, awaited (a log or spool_dir
 * that did not exist at the start), spool (what a spool_dir was recognised as). */
struct probe_event {
    uint64_t t;
    char kind[16];
    char *text;
};

struct probe_events {
    uint64_t t0;
    struct probe_event *v;
    size_t n;
};

/* How a part of the probe reports an event (the collector stores it). */
typedef void (*probe_event_fn)(void *ctx, uint64_t t_ns, const char *kind, const char *text);

void probe_classes_free(struct probe_class *v, size_t n);
void probe_summary_free(struct probe_summary *s);
void probe_interval_free(struct probe_interval *iv);
void probe_events_free(struct probe_events *e);

/* Formats an event's text and hands it to fn (nothing when fn is NULL). */
void probe_eventf(probe_event_fn fn, void *ctx, uint64_t t, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Writes the message into err and returns -1: setup errors of the probe's parts. */
int probe_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
