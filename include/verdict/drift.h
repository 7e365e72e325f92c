/* drift: whether a server keeps up with the mail it accepts, judged from the
 * run's own ledger: the backlog of mail accepted and not yet read, sampled at the
 * end of each interval of a steady send window. A server that keeps up holds the
 * backlog steady (it swings, but comes back); one that does not lets it grow by the
 * difference of the two rates. Four statistics tell them apart, each a pure function
 * of the window's points (no clock, no files), scored against runs of a known
 * ceiling by tests/unit/test_drift.c (docs/results/capacity.md):
 *  - the backlog's least-squares slope over a fixed window (capacity's step.c);
 *  - Wald's sequential probability ratio test (Wald 1945) on the net flow, accepted
 *    less read, per batch of intervals: "grows by nothing" against "grows by a share
 *    of the accepted rate", its variance from the batches themselves with their lag-1
 *    autocorrelation corrected (batch means: Schmeiser 1982; Law & Kelton), deciding as
 *    soon as the evidence crosses a bound, or indeterminate at a cap;
 *  - the delivery latency's growth against the time the mail was accepted (Little's
 *    law: a growing backlog is a growing wait);
 *  - the backlog's troughs: the least of each sub-window, whose slope ignores the
 *    swings' peaks. */
#ifndef MS_VERDICT_DRIFT_H
#define MS_VERDICT_DRIFT_H

/* One interval of the send window, at its end. */
struct drift_point {
    double t;                        /* s since the run began */
    double accepted, read;           /* messages in the interval */
    double unread;                   /* the backlog at its end: accepted and not yet read */
    double lat_n, lat_mean;          /* delivery latency of the mail read in it: count, mean (s) */
};

enum drift_decision {
    DRIFT_UNDECIDED,                 /* a sequential test that wants more intervals */
    DRIFT_KEPT_UP,
    DRIFT_BEHIND,
    DRIFT_INDETERMINATE,             /* the cap reached between the bounds: the knee's band */
};
const char *drift_decision_name(enum drift_decision d);

struct drift_rules {
    double share;                    /* behind: the backlog grows by this share of the accepted rate */
    double alpha, beta;              /* the sequential test's errors: kept up called behind, and back */
    unsigned batch;                  /* intervals per batch */
    unsigned min_batches;            /* batches before its first decision */
    double cap_s;                    /* past this the sequential test is indeterminate */
    double swing;                    /* the backlog's own swing before the window (drift_swing, in
                                        messages squared): its growth over the window carries twice
                                        it whatever the window's length; 0 none */
    double arrivals_cv2;             /* the arrivals' squared coefficient of variation: 1 for a
                                        Poisson process, 0 evenly spaced (DRIFT_VAR_FLOORED's floor) */
};
/* share 0.05 (capacity.queue_growth's default), alpha = beta = 0.05, batches of 2
 * intervals, 8 of them at least (the replay's choice: docs/results/capacity.md), a
 * cap of 120 s, Poisson arrivals. */
void drift_rules_default(struct drift_rules *r);
/* A staircase level's rules (capacity's, and smtp.profile_end = decided's): the
 * default's, behind at share, batches of about 2 s (at most a sixteenth of a level
 * of level_s, whole intervals of interval_s), 8 batches before a decision (fewer
 * make a variance of noise: 4 batches of 1 s once passed a level 8 % over the
 * ceiling), capped at the level's end. */
void drift_rules_level(struct drift_rules *r, double share, double level_s, double interval_s);

struct drift_result {
    enum drift_decision d;
    double z;                        /* drift_growth_z: the growth in standard errors */
    double at_s;                     /* the window's time when it was decided (or its length) */
    double value, bound;             /* msg/s: the growth measured, and the bound it was held to */
    double llr, llr_lo, llr_hi;      /* the sequential test's log-likelihood ratio and its bounds */
};

/* The points p[0..n) of a window: p[0] is its start (only its time and backlog are
 * read), p[1..n) its intervals. Fixed-window statistics decide on the whole window:
 * behind when the growth exceeds the larger of share x accepted rate and the
 * statistic's own noise (3 standard errors). */
void drift_slope(const struct drift_rules *r, const struct drift_point *p, unsigned n, struct drift_result *out);
void drift_latency(const struct drift_rules *r, const struct drift_point *p, unsigned n, struct drift_result *out);
void drift_troughs(const struct drift_rules *r, const struct drift_point *p, unsigned n, unsigned sub,
                   struct drift_result *out);
/* The net flow's variance the sequential test assumes: the arrivals' (a Poisson
 * process's: its rate, times arrivals_cv2), the batches' own (batch means, lag-1
 * corrected), or the larger of the two (the arrivals' noise is there whatever the
 * batches say, and a handful of batches can say far less). */
enum drift_variance { DRIFT_VAR_POISSON, DRIFT_VAR_BATCH, DRIFT_VAR_FLOORED };
/* The sequential test over the window's intervals as far as they go: the first
 * batch at which its ratio crosses a bound decides (at_s its time); DRIFT_UNDECIDED
 * when the window ends first within the cap, DRIFT_INDETERMINATE past the cap. The
 * growth S over T is taken as normal with variance var T + 2 swing: a backlog that
 * keeps up is stationary, and the difference of two of its points carries twice its
 * variance however close they are, which the batches of a short window cannot see
 * (a server that pauses a second lifts the backlog by a second's mail). */
void drift_sprt(const struct drift_rules *r, const struct drift_point *p, unsigned n, enum drift_variance v,
                struct drift_result *out);
/* A fixed-sample one-sided test of "the backlog does not grow" over the whole
 * window: its growth S over the window's time T, in standard errors of the net
 * flow's batch-means variance (as drift_sprt's, at least the arrivals' noise of a
 * message a batch): z = S / sqrt(var T). Behind when z > z_crit (2.33: 1 % one-
 * sided), kept up otherwise: a claim refuted only by growth its noise cannot
 * explain, the confirmation's question. value the growth (msg/s), bound the growth
 * at z_crit; DRIFT_UNDECIDED with fewer than 4 batches. */
void drift_growth_z(const struct drift_rules *r, const struct drift_point *p, unsigned n, double z_crit,
                    struct drift_result *out);

/* Where a window's backlog has filled: the first i >= r->batch within the first
 * fifth of the window (t[0] to t[n - 1]) at which the backlog (t[i], unread[i]) is
 * no higher than a batch before; 0 when there is none, a backlog that grew all
 * along. A fresh server's queue and mailboxes fill to their steady level (Little's
 * law: the accepted rate times the mean wait) before they can hold it; the fill is
 * not growth. A plain run's "kept up" is judged from there (verdict.c). */
unsigned drift_fill_end(const struct drift_rules *r, const double *t, const double *unread, unsigned n);

/* The swing of the backlog over points p[0..n): the variance of their backlog
 * about its least-squares line, a trend removed; 0 with fewer than 4 points. */
double drift_swing(const struct drift_point *p, unsigned n);
/* The swing of a run's backlog from `from` to `to` (a staircase's level: at one
 * rate, so a trend in it is a line), from the run's points all[0..n) (all[0] its
 * start, each later one an interval's end): drift_swing of the intervals that
 * began at `from` or later and ended by `to`, with the end of the one before them;
 * but only where that backlog kept up, its slope at most share x its accepted rate
 * (a stationary backlog's swing; one that grows swings wider, and would hide the
 * growth of the levels after it): else `prev`, the swing of the last level that
 * did. The staircase's live end (stage_end.h) and its judgement afterwards
 * (capacity/stair_judge.c) both measure it so, level by level from the run's
 * first; a run's first level has none (before it the lead-in fills the pipeline). */
double drift_swing_kept(const struct drift_point *all, unsigned n, double from, double to, double share,
                        double prev);

#endif
