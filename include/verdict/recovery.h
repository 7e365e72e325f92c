/* recovery: peak and recovery. A load profile of stages (smtp.profile) that holds
 * a base rate, spikes and returns: how long after the spike's end the backlog of
 * mail accepted and not read, and the delivery latency, were back to their level of
 * the base stage before it, and the ledger's proof of every message accepted during
 * the spike. Pure but for recovery_count, which walks a ledger whose threads have
 * stopped (tests/unit/test_recovery.c). */
#ifndef MS_VERDICT_RECOVERY_H
#define MS_VERDICT_RECOVERY_H

#include <stddef.h>
#include <stdint.h>

#include "engine/ledger.h"

/* A stage of the profile, on the run's clock. */
struct recovery_stage {
    double t0, t1;                   /* s into the run */
    double rate;                     /* msg/s offered */
};

/* The end of an interval of the send window. */
struct recovery_point {
    double t;                        /* s into the run */
    double unread;                   /* the ledger's backlog */
    double delivery_ms;              /* the interval's delivery latency p50; < 0: nothing delivered in it */
};

/* The ledger's outcomes of the messages accepted within a time span. */
struct recovery_proof {
    uint64_t accepted, delivered, duplicated, corrupted, lost, pending;
};

#define RECOVERY_MAX 8

struct recovery_spike {
    unsigned stage;                  /* the spike's stage; stage - 1 is its base */
    double base_rate, spike_rate;    /* msg/s offered */
    double start_s, end_s;           /* the spike's stage on the run's clock */
    int has_base;                    /* the base stage had samples to take a level from */
    double base_backlog, base_latency_ms;   /* the base stage's levels: the highest of its backlog with its
                                             * noise, of its latency's p50 with its spread; back is within
                                             * them or 5 % of the peak's excess over them */
    int base_steady;                 /* the base stage's backlog held (kept up's bound); -1: too few points */
    double base_growth;              /* msg/s: its least-squares slope */
    double peak_backlog, peak_latency_ms;   /* the highest from the spike's start on */
    int recovered;                   /* 1 both back within the send window, 0 not, -1 cannot tell */
    double backlog_s, latency_s;     /* s after the spike's end until each was back (< 0: never) */
    double recovery_s;               /* the later of the two; not recovered: the time seen so far */
    double from_s;                   /* recovered: the interval end before, still not back (< 0: none) */
    int late;                        /* the gap between from_s and recovery_s is wider than the points'
                                      * usual spacing: the run took no interval end there */
    struct recovery_proof proof;     /* the messages accepted during the spike (recovery_count) */
};

/* The spikes of a profile: a stage offered more than the stage before it, with a
 * stage after it that offers less. Levels and times from the points; returns how
 * many (at most max) were found. */
unsigned recovery_find(const struct recovery_stage *st, unsigned nst, const struct recovery_point *p, unsigned np,
                       struct recovery_spike *out, unsigned max);

/* The ledger's outcomes of the entries accepted from t0 (inclusive) to t1 (s into
 * the run), once every thread stopped and the verdicts are final. */
void recovery_count(const struct ledger *l, double t0, double t1, struct recovery_proof *out);

#endif
