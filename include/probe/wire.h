/* wire: the JSON a probe serves at /samples and a run pulls, both directions in one
 * place so they cannot drift apart. A response carries the samples from the index
 * the puller asked for (with their log hits and first matching lines), the events
 * from its event index, what the probe measures and its clock's reading. The
 * puller treats it as untrusted: every field is checked and every list bounded.
 *
 *   {"format": "mailsoak-probe", "version": 1, "probe": ID, "host": NAME, "now": NS,
 *    "has": {"procs": b, "spool": b, "store": b, "logs": b}, "classes": [NAME...],
 *    "examples": N, "next": I, "events_next": J, "more": b (ask again: not all fitted),
 *    "samples": [{"i", "t", "mem", "pss", "spool", "store_messages", "store_bytes",
 *                 "log_lines", "crashes", "procs", "io": [rchar, wchar, syscr, syscw,
 *                 read_bytes, write_bytes, cancelled_write_bytes], "hits": [n...],
 *                 "lines": [{"t", "class", "line"}...]}...],
 *    "events": [{"i", "t", "kind", "text"}...]}
 *
 * Times are the probe's CLOCK_MONOTONIC ns; the puller maps them to its own. */
#ifndef MS_PROBE_WIRE_H
#define MS_PROBE_WIRE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "probe/series.h"

#define WIRE_MAX_SAMPLES 600         /* per response; a puller that fell behind asks again */
#define WIRE_MAX_EVENTS 200
#define WIRE_MAX_CLASSES 64
#define WIRE_MAX_EXAMPLES 100        /* lines per class per sample */
#define WIRE_MAX_BYTES (4 << 20)     /* of samples' text per response, roughly: at least one goes */

/* The probe's side. Without `since`, only the newest sample (a puller's baseline). */
struct wire_query {
    int has_since, has_events;
    uint64_t since, events;
};
json_t *wire_encode(struct series *s, const char *probe_id, const char *host, uint64_t now_ns,
                    const struct wire_query *q);

/* The puller's side: the series it fills and where to ask from next. */
struct wire_state {
    struct series *series;           /* made by the first response; freed by the owner */
    size_t examples;                 /* lines kept per class (the run's log_examples) */
    char probe[40], host[64];
    uint64_t probe_now;              /* "now" of the last response */
    struct wire_query next;          /* the query for the next pull */
    struct probe_sample last;        /* the last sample added, carries included */
    struct proc_io carry;            /* what a restarted probe's counters start above */
    struct proc_io carry_part[PROBE_NPARTS];
    uint64_t carry_crashes;
    unsigned restarts, gaps;
    int more;                        /* the last response was full: more samples wait */
};
/* Adds a response's new samples and events to w->series. 0, or -1 with the reason
 * in err (and nothing added). A different probe id is a restart: counters carry on
 * from the last sample, and an event says what could not be seen. */
int wire_decode(struct wire_state *w, const char *body, size_t len, char *err, size_t errlen);
void wire_state_free(struct wire_state *w);

/* /time, for a puller's clock estimate: {"format": "mailsoak-probe", "now": NS},
 * written into b (its length), and read back: 0 with now set, or -1 when the body
 * is not that. */
size_t wire_time_encode(char *b, size_t n, uint64_t now_ns);
int wire_time_decode(const char *body, size_t len, uint64_t *now_ns);

#endif
