/* metrics: `mailsoak run --metrics ADDR:PORT`, the run's live figures in the
 * Prometheus text format. The controller renders them from its interval
 * snapshots and publishes the text; the HTTP thread only copies the last text
 * published. Nothing here touches a worker. */
#ifndef MS_METRICS_H
#define MS_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/hist.h"
#include "engine/ledger.h"
#include "engine/stats.h"

/* What the controller knows at an interval's end; everything cumulative. */
struct metrics_view {
    const char *run_id, *label, *phase;
    double elapsed_s;
    const struct counters *c;
    const struct err_count *err;
    unsigned nerr;
    const struct hist *lat;          /* LAT_COUNT histograms since the start */
    const struct ledger_outcome *lo; /* so far: pending means accepted and not yet read */
    int64_t unread;                  /* the ledger's owed messages */
    uint64_t ledger_held, ledger_compacted;   /* entries kept in full, and compacted (ledger_compact) */
    const char *readers;             /* what the readers speak: "pop3" (NULL) or "imap" */
};

/* The exposition text of a view (malloc'd, NUL-terminated). */
char *metrics_text(const struct metrics_view *v, size_t *len);

/* Cumulative bucket counts of h at the upper bounds le[] (seconds): a bucket of h
 * counts below a bound when its midpoint does, as the percentiles do (0.8 %). */
void metrics_buckets(const struct hist *h, const double *le, size_t n, uint64_t *cum);

struct run_metrics;
/* Serves /metrics on listen (see httpd_start); NULL with the reason in err. */
struct run_metrics *metrics_start(const char *listen, const char *token, char *err, size_t errlen);
const char *metrics_address(const struct run_metrics *m);
/* Renders v and makes it what the next scrape gets. */
void metrics_publish(struct run_metrics *m, const struct metrics_view *v);
void metrics_stop(struct run_metrics *m);

#endif
