/* procset: the server's process set — the roots named by [server] pid, pidfile and
 * process, and all their descendants — read from a proc root each sample: memory,
 * I/O (with what reaped children left in their parents' counts), and crashes and
 * restarts of its masters. Used by the collector's thread only. */
#ifndef MS_PROBE_PROCSET_H
#define MS_PROBE_PROCSET_H

#include <stddef.h>
#include <stdint.h>

#include "probe/sample.h"

struct procset;

/* Opens and scans proc_root ("/proc" or a fixture tree). Processes started before
 * start_ticks (clock ticks after boot) bring I/O from before the run, which is
 * subtracted. Events (crash, restart, child_crash, io_unreadable) go to on_event. */
struct procset *procset_new(const char *proc_root, uint64_t start_ticks, size_t keep, probe_event_fn on_event,
                            void *ctx, char *err, size_t errlen);
void procset_free(struct procset *ps);

/* Roots, checked now: the process must be running and its I/O readable. Errors name
 * the key (server.pid, server.pidfile, server.process) and the value. */
int procset_add_pid(struct procset *ps, const char *val, char *err, size_t errlen);
int procset_add_pidfile(struct procset *ps, const char *path, char *err, size_t errlen);
int procset_add_process(struct procset *ps, const char *ere, char *err, size_t errlen);

/* Fills s's mem, pss, procs, io and crashes. pss = 0 skips smaps_rollup (the dear
 * part): s->pss is then the last reading's. */
void procset_sample(struct procset *ps, uint64_t now, int pss, struct probe_sample *s);

#endif
