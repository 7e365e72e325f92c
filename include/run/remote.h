/* remote: one `mailsoak probe` on another host, pulled by the run with libcurl. A
 * thread of its own asks for the samples since the last pull every interval (the
 * workers and the controller never wait for the network), fills a series on the
 * probe's clock, and keeps an estimate of that clock's offset from ours.
 *
 * Clocks: each pull of /time is an exchange sent at s and answered at r on our
 * CLOCK_MONOTONIC, carrying the probe's reading p; p - (s + r) / 2 is the offset,
 * wrong by at most (r - s) / 2. The estimate is the offset of the quickest of the
 * last exchanges (NTP's clock filter), so a slow answer never moves it much and a
 * drift between the clocks is still followed. */
#ifndef MS_REMOTE_H
#define MS_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "probe/series.h"
#include "result/run_result.h"

#define CLOCK_EXCHANGES 16

struct clock_est {
    struct { int64_t offset; uint64_t rtt; } x[CLOCK_EXCHANGES];
    unsigned n, next;
};
void clock_est_add(struct clock_est *c, uint64_t sent, uint64_t recv, uint64_t remote);
/* The offset (remote - local, ns) of the quickest kept exchange and its round trip;
 * 0 without any. */
int clock_est_best(const struct clock_est *c, int64_t *offset, uint64_t *rtt);

/* "[LABEL=]http://HOST:PORT": the label (HOST:PORT when none) and the base URL. */
int remote_parse(const char *spec, char *label, size_t labellen, char *url, size_t urllen, char *err, size_t errlen);

struct remote;
/* Estimates the clock, takes the baseline (a fresh sample of the probe) and starts
 * pulling every interval_ns. NULL with the reason in err when the probe does not
 * answer as one. examples: log lines kept per class (the run's log_examples). */
struct remote *remote_start(const char *spec, const char *token, size_t examples, uint64_t interval_ns,
                            char *err, size_t errlen);
/* Pulls now with a fresh sample (the probe walks its spool and store first), unless
 * one began less than min_age_ns ago; waits for it, at most timeout_ns. 0, or -1
 * when the pull failed, timed out or the puller stopped: the figures may be old. */
int remote_refresh(struct remote *r, uint64_t min_age_ns, uint64_t timeout_ns);
/* Stops pulling, then pulls once more with a fresh sample: the window's last one. */
void remote_stop(struct remote *r);
void remote_free(struct remote *r);

const char *remote_label(const struct remote *r);
struct series *remote_series(struct remote *r);
/* The current estimate: probe time = run time + offset. */
int64_t remote_offset(struct remote *r);
/* How the figures came, into o (result/run_result.h): url, host, the clock's
 * offset and error, pulls, pull errors, the last error, restarts, gaps. After
 * remote_stop. */
void remote_view(struct remote *r, struct run_source *o);

#endif
