/* series: the samples of one server host and what came with them (log hits per
 * class, the first matching lines of each class, events), and the plain data of
 * probe/sample.h cut from them: the run so far, one interval, the events. The
 * local collector fills one as it samples; `mailsoak probe` serves its own to
 * runs on other hosts; a run pulling a probe fills one from the wire. Thread-safe:
 * one writer and any number of readers.
 *
 * Times are CLOCK_MONOTONIC ns of the host that measured. The window of a summary
 * starts at t0: its baseline is the last sample at or before t0 (else the first),
 * and crashes, log hits and example lines count after the baseline. */
#ifndef MS_PROBE_SERIES_H
#define MS_PROBE_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "probe/sample.h"

/* A log line that matched class cls at t. */
struct series_line {
    uint64_t t;
    size_t cls;
    char *line;
};

struct series_opts {
    struct probe_has has;
    uint64_t t0;
    const char *const *classes;     /* names of the log classes, in hit order */
    size_t ncls;
    size_t examples;                /* lines kept per class per sample, and per summary */
    uint64_t keep_ns;               /* drop samples older than this (0 = keep all) */
};

struct series *series_new(const struct series_opts *o);
void series_free(struct series *s);

/* Appends a sample with its hits per class (ncls values, or NULL) and the lines
 * matched since the previous sample (the series takes them; at most `examples`
 * per class are kept). Peaks count every sample ever added. */
void series_add(struct series *s, const struct probe_sample *x, const uint64_t *hits,
                struct series_line *lines, size_t nlines);
/* A probe_event_fn: ctx is the series. Events beyond the last 10,000 are dropped. */
void series_event(void *ctx, uint64_t t, const char *kind, const char *text);

struct probe_has series_has(const struct series *s);
size_t series_nclasses(const struct series *s);
size_t series_examples(const struct series *s);
const char *series_class(const struct series *s, size_t i);
/* The live line's figures: the last sample, the peak of mem, crashes and log hits
 * since the baseline. */
struct series_now {
    int active;
    struct probe_has has;
    uint64_t mem, mem_peak, spool, store_messages, store_bytes, log_hits;
    unsigned procs, crashes;
};
void series_now(struct series *s, struct series_now *out);
/* The window from t0 to the last sample, the interval (from, to], the events; each
 * freed with its probe_*_free. Times stay on the series' clock. */
void series_summary(struct series *s, uint64_t t0, struct probe_summary *out);
void series_interval(struct series *s, uint64_t from, uint64_t to, struct probe_interval *out);
void series_events(struct series *s, uint64_t t0, struct probe_events *out);

/* For the wire (probe/wire.c). Every sample and event has an index that counts
 * from 0 at the series' creation and survives dropping. */
typedef int (*series_sample_fn)(void *ud, uint64_t idx, const struct probe_sample *x, const uint64_t *hits,
                                 const struct series_line *lines, size_t nlines);
typedef void (*series_event_fn)(void *ud, uint64_t idx, const struct probe_event *e);
/* Calls fn for at most max samples from index `from` on (the oldest kept one if
 * `from` was dropped), under the series' lock, until fn returns nonzero; returns
 * the index after the last one visited. */
uint64_t series_each(struct series *s, uint64_t from, size_t max, series_sample_fn fn, void *ud);
uint64_t series_each_event(struct series *s, uint64_t from, size_t max, series_event_fn fn, void *ud);
/* Index of the next sample and the next event to be added. */
void series_next(struct series *s, uint64_t *sample, uint64_t *event);
/* Log lines per class since the series began (every sample, dropped ones too). */
uint64_t series_class_total(struct series *s, size_t i);

#endif
