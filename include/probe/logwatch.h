/* logwatch: follows server log files from where they stood when the run began,
 * across rotation by rename and by copytruncate, and counts lines per named class of
 * POSIX extended regular expressions. Polled by the collector's thread; the getters
 * are safe from any thread. */
#ifndef MS_LOGWATCH_H
#define MS_LOGWATCH_H

#include <stddef.h>
#include <stdint.h>

#include "probe/sample.h"

struct tested_server;
struct logwatch;

/* t0_ns: the run's start (CLOCK_MONOTONIC) that example times count from. Starts with
 * no class and no file. */
struct logwatch *logwatch_new(uint64_t t0_ns, size_t examples);
void logwatch_free(struct logwatch *lw);

/* Classes, files and example count from [server]: log, log_class, log_defaults,
 * log_examples. Errors name the key and the value; logs that do not exist yet are
 * awaited (logwatch_awaited). */
struct logwatch *logwatch_from_config(const struct tested_server *cfg, uint64_t t0_ns,
                                      char *err, size_t errlen);

/* The built-in classes: sql_lock, deadlock, lock, timeout, oom, java_exception, fatal,
 * defer (deliveries the server will retry), io (I/O and TLS failures), lock_wait,
 * too_many_connections, dict (Dovecot's dict failures) and db_error (queries and
 * connections to the database that failed). */
void logwatch_add_defaults(struct logwatch *lw);
/* "name: ERE" adds a class or replaces the one of that name (case-sensitive);
 * "name/i: ERE" the same, ignoring case; "name:" removes the class. */
int logwatch_set_class(struct logwatch *lw, const char *spec, char *err, size_t errlen);
/* Starts following path at its current end: 0. A path that does not exist yet is
 * watched for and read from its first line once it appears: 1, with a warning in err.
 * -1: it cannot be read (err). */
int logwatch_add_file(struct logwatch *lw, const char *path, char *err, size_t errlen);
/* The i-th file that did not exist when it was added and has not appeared since
 * (NULL past the last): what a caller warns about at the start. */
const char *logwatch_awaited(struct logwatch *lw, size_t i);

/* Rotations, truncations and awaited logs that appear are reported here (kind
 * "log_rotated", "log_truncated" or "log_appeared"). */
typedef probe_event_fn logwatch_event_fn;
void logwatch_on_event(struct logwatch *lw, logwatch_event_fn fn, void *ctx);

/* Every line that matches a class, as it is counted (at most its first 1000 bytes,
 * not NUL-terminated), called with the watcher's lock held: fn must not call back. */
typedef void (*logwatch_match_fn)(void *ctx, size_t cls, uint64_t t_ns, const char *line, size_t n);
void logwatch_on_match(struct logwatch *lw, logwatch_match_fn fn, void *ctx);

/* Reads whatever the files gained since the last poll; matching lines are stamped now_ns. */
void logwatch_poll(struct logwatch *lw, uint64_t now_ns);
/* Reads a whole file from its first line through the same line splitting and
 * counting as a followed log (mailsoak logscan), calling fn (if not NULL) after each
 * line is counted, with its number from 1 and its text (NUL-terminated, without the
 * newline, at most 64 KiB). 0, or -1 with err when it cannot be read. */
typedef void (*logwatch_line_fn)(void *ctx, uint64_t lineno, const char *line);
int logwatch_scan_file(struct logwatch *lw, const char *path, uint64_t now_ns, logwatch_line_fn fn, void *ctx,
                       char *err, size_t errlen);
/* The second pass (issue 26's trails): every line the followed logs gained since the
 * run began, read again from where each file stood then (a file rotated away from its
 * start, the new ones from their first line, an awaited one from its first line) to
 * its end now, in the order the files were added; fn gets the file's index, the line
 * (NUL-terminated, no newline, at most 64 KiB) and its length. Nothing is counted.
 * Only once the poller stopped (collector_stop): it reads the poller's descriptors. */
typedef void (*logwatch_rescan_fn)(void *ctx, size_t file, const char *line, size_t len);
void logwatch_rescan(struct logwatch *lw, logwatch_rescan_fn fn, void *ctx);

/* Counts one complete line (no newline) as if read from a file at now_ns. */
void logwatch_feed(struct logwatch *lw, const char *line, size_t len, uint64_t now_ns);

size_t logwatch_nclasses(struct logwatch *lw);
const char *logwatch_class_name(struct logwatch *lw, size_t i);
/* Whether a line (without its newline) matches class i, ignoring trace continuation. */
int logwatch_matches(struct logwatch *lw, size_t i, const char *line);
uint64_t logwatch_count(struct logwatch *lw, size_t i);
uint64_t logwatch_total(struct logwatch *lw);   /* lines that matched at least one class */
/* Hits per class since the previous take, into counts[nclasses]; returns the lines. */
uint64_t logwatch_take(struct logwatch *lw, uint64_t *counts);
/* A copy of every class: its count and its examples (t on the watcher's clock). */
size_t logwatch_classes(struct logwatch *lw, struct probe_class **out);

#endif
