/* probe_output: the run's writers for the server side — summary keys, timeline
 * entries, events and table rows — from the plain data of probe/sample.h, wherever
 * it was measured. They format; they never measure. */
#ifndef MS_RESULT_PROBE_OUTPUT_H
#define MS_RESULT_PROBE_OUTPUT_H

#include <jansson.h>
#include <stddef.h>

#include "probe/sample.h"

/* Adds to the run's summary: "spool", "spool_peak", "mem" (peak RSS bytes), "mem_final",
 * "mem_pss" (peak PSS), "input", "output", "ibytes", "obytes", "disk_read_bytes",
 * "disk_write_bytes", "store_messages", "store_bytes", "log_hits", "log_classes",
 * "cpu" (the server's CPU seconds), "parts" ({"mta"|"pop3"|"db"|"other": procs_peak,
 * cpu, mem, mem_pss, input, output, ibytes, obytes, disk_write_bytes} for each part
 * that had a process), "db" ({kind, lock_waits, deadlocks, errors: growth over the run;
 * waiting_peak, conns_peak, conns_final, conns_max; unreadable} or null),
 * "server_crashes", "server_procs_peak", "server_samples". What was not measured is
 * null. */
void probe_json_summary(const struct probe_summary *s, json_t *summary);
/* Adds "server" to a timeline entry: the interval's last sample's mem, spool,
 * store_messages, store_bytes and procs; I/O deltas over the interval (input, output,
 * ibytes, obytes) and cpu; "db": {lock_waits over the interval, waiting and conns at
 * its end} with a database; "log_hits": {"class": n} within the interval. Adds
 * nothing when nothing is measured. */
void probe_json_interval(const struct probe_interval *iv, json_t *entry);
/* Appends {"t": sec, "kind": "...", "text": "..."} per event. */
void probe_json_events(const struct probe_events *e, json_t *events);
/* {"name": {"count": n, "examples": [{"t": sec, "line": "..."}]}, ...} */
json_t *probe_json_classes(const struct probe_class *v, size_t n, uint64_t t0);
/* Rows for the end-of-run table, in order: spool, mem, input, output, ibytes, obytes,
 * log hits, cpu; "-" where not measured; then, when the set has several parts, each
 * part's cpu, mem, ibytes and obytes ("mta cpu" ...), and with a database "db waits",
 * "db deadlocks", "db errors", "db conns" (peak/limit). Returns 1 for a row, -1 for a
 * row this summary does not show (a part it lacks), 0 past the last row, and at once
 * when nothing is measured. */
int probe_table_row(const struct probe_summary *s, int i, char *name, size_t nlen, char *value, size_t vlen);

/* A JSON string of n bytes of log text: bytes that are not UTF-8 become '?'. */
json_t *utf8_json_string(const char *s, size_t n);

#endif
