/* sources: the server side of a run as one source for the controller and the
 * writers: the local collector (the [server] keys, when this host is the server's)
 * and the probes on the server hosts (server.probe), each a series on its own
 * clock. Figures are added up over the sources (spool, store, I/O, log hits; mem
 * is the sum of each host's own peak) and times are mapped to the run's clock, so
 * with one source the table, the JSON and the timeline are exactly that source's. */
#ifndef MS_RUN_SOURCES_H
#define MS_RUN_SOURCES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "probe/logwatch.h"
#include "probe/sample.h"
#include "probe/series.h"
#include "result/run_result.h"
#include "settings/config.h"

struct sources;

/* Starts the local collector (if [server] names anything to sample) and a puller per
 * probe; NULL with the reason in err (exit 2: a key that names nothing, a probe that
 * does not answer). t0: the run's start, CLOCK_MONOTONIC ns. */
struct sources *sources_start(const struct config *cfg, uint64_t t0, char *err, size_t errlen);
/* Takes every source's last sample (the local one now, a fresh one from each probe). */
void sources_stop(struct sources *s);
void sources_free(struct sources *s);
/* The logs the local collector followed, read again since the run began (after
 * sources_stop; logwatch_rescan). A probe's logs are on its host: not read. */
void sources_rescan_logs(struct sources *s, logwatch_rescan_fn fn, void *ctx);

/* Every source walks now (the spool, the store: the local collector, and each probe
 * in a pull of its own), unless it did less than min_age_ns ago; waits for them (at
 * most 10 s each). -1 when one could not: its figures may be from an older walk. */
int sources_refresh(struct sources *s, uint64_t min_age_ns);
void sources_now(struct sources *s, struct series_now *out);
void sources_summary(struct sources *s, struct probe_summary *out);
void sources_interval(struct sources *s, uint64_t from, uint64_t to, struct probe_interval *out);
/* In time order; with several sources each text starts with its label. */
void sources_events(struct sources *s, struct probe_events *out);
/* The server side as plain data for the writers (result/run_result.h): the sources
 * added up, their events, and each source alone (its label, a probe's pull figures,
 * its summary, its samples' window on the run's clock). After sources_stop; freed
 * with the result (run_result_free). */
void sources_snapshot(struct sources *s, struct run_server *out);

#endif
