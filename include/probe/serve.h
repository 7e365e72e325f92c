/* serve: `mailsoak probe`, the collector and the log watcher alone on a server's
 * host, their samples served over HTTP: /metrics for Prometheus, /samples for the
 * runs that pull them (probe/wire.h). Nothing of the load is here. */
#ifndef MS_PROBE_SERVE_H
#define MS_PROBE_SERVE_H

#include "probe/series.h"
#include "settings/config.h"

/* Samples the server of cfg's [server] and serves it on probe.listen until SIGINT
 * or SIGTERM. Exit status: 0 stopped by a signal, 2 bad configuration. */
int probe_serve(const struct config *cfg);

/* The Prometheus exposition of a series (malloc'd): its last sample, counters since
 * the series began. host and probe label mailsoak_server_info. */
char *probe_metrics_text(struct series *s, const char *host, const char *probe, uint64_t now_ns, size_t *len);

#endif
