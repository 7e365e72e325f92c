/* interval_output: one interval of the run as the timeline's JSON entry and as the
 * live line on stderr. Writers only: the controller (run.c) measures the interval
 * and hands its figures over in a struct interval_view. */
#ifndef MS_RESULT_INTERVAL_OUTPUT_H
#define MS_RESULT_INTERVAL_OUTPUT_H

#include <jansson.h>
#include <stdio.h>

#include "engine/stats.h"
#include "probe/sample.h"
#include "probe/series.h"

struct interval_view {
    double t, dt;                    /* s: the interval's end since the start; its length */
    const char *phase;               /* the phase the interval belongs to */
    const struct counters *c;        /* cumulative, as of the interval's end */
    const struct counters *prev;     /* cumulative, as of the interval's start */
    uint64_t dsent, dread, derr;     /* within the interval */
    const struct err_count *err;     /* within the interval, by class: only classes that grew */
    unsigned nerr;
    const struct hist *lat;          /* LAT_COUNT histograms of the interval */
    const struct probe_interval *srv;/* the server side in the interval */
    int64_t unread;                  /* the ledger's owed entries now */
    int stage;                       /* smtp.profile: the stage the interval began in; -1 none */
};

/* {"t", "phase", "sent", "read", "errors", "errors_by_class", "rate_in", "rate_out",
 * "conns", "unread", "smtp_sessions", "pop3_sessions", "arrivals", "late_busy",
 * "late_engine", "left_behind" (reader visits that left mail for later),
 * "empty_visits" (reader visits that found none of the mail owed to the mailbox),
 * "full_visits" (reader visits that retrieved mail), "idle_syncs" (the IMAP idle
 * clients' syncs: reader visits too, "pop3_sessions" + "idle_syncs" the visits),
 * "latency", "stage" with a load profile, and "server" when it was measured}: what a window of the run (a
 * capacity step's steady part) is judged on, added up over its intervals. */
json_t *interval_json(const struct interval_view *v);
/* "[    12s send ] sent 1.2k (100/s)  read ...", the server's mem and spool when
 * they are measured (what is not measured is not shown, rather than shown as 0). */
void interval_line(FILE *f, const struct interval_view *v, const struct series_now *srv);

#endif
