/* stage_end: whether a stage of smtp.profile may end before its time
 * (smtp.profile_end = decided, capacity's staircase). A stage judged by the
 * sequential test of "kept up" (verdict/drift.h) is decided once the test crossed
 * a bound: kept up, and the next stage may start at once; behind, and the send
 * window may end (a staircase's levels above a failure say nothing more of the
 * capacity). A stage the test has not decided runs its planned time, and is open
 * at its end. The intervals a stage is judged on are those a capacity level is cut
 * from its run's timeline by (capacity/level.h's level_points with the same
 * tolerance), so the test decides here on the points the search judges later, and
 * a stage ended here reads, in the result, as decided when it ended. Pure: the
 * stages' spans and each interval in, what to do out (tests/unit/test_stage_end.c). */
#ifndef MS_VERDICT_STAGE_END_H
#define MS_VERDICT_STAGE_END_H

#include <stddef.h>

#include "verdict/drift.h"

/* What a stage (a capacity level) is judged on: the server's queue where the
 * run's first send interval counted it, else the backlog of the run's own ledger
 * (capacity/level.h says why). The queue is counted every server.queue_interval:
 * an interval without a count carries the last one. */
enum level_series { LEVEL_BACKLOG, LEVEL_QUEUE };
/* An interval's backlog in series s: its unread, or the queue's count when it has
 * one (has_spool), which becomes *queue, else *queue. */
double level_backlog(enum level_series s, int has_spool, double spool, double unread, double *queue);

struct stage_end_rules {
    struct drift_rules dr;           /* the sequential test; its cap each stage's planned length */
    enum drift_variance v;
    double tol_s;                    /* an interval is a stage's when it began at most this before the
                                        stage's start and ended at most this after its end (half an interval) */
    unsigned first;                  /* the first stage judged (1 behind a lead-in) */
};

struct stage_end {
    unsigned cur;                    /* the stage whose intervals are gathered */
    unsigned n;
    size_t cap;
    struct drift_point *p;           /* p[0] the end of the interval before its first */
    double last_t, last_unread;      /* the end of the last interval seen */
    struct drift_point *all;         /* every interval's end since the run's start (all[0]) */
    unsigned nall;
    size_t allcap;
    double swing;                    /* the backlog's in the last stage that kept up (drift_swing_kept) */
    int series_known;                /* series chosen: at the run's first interval */
    enum level_series series;
    double queue;                    /* the queue's last count */
};

enum stage_end_act {
    STAGE_GO_ON,                     /* nothing decided */
    STAGE_NEXT,                      /* kept up: the stage ends now, the next begins */
    STAGE_STOP,                      /* behind: the stage ends now, and the send window with it */
};

void stage_end_init(struct stage_end *s);
/* An interval's backlog as the stages' test weighs it, in the series its first
 * interval chose (level_backlog): pt->unread for stage_end_step. */
double stage_end_backlog(struct stage_end *s, int has_spool, double spool, double unread);
void stage_end_free(struct stage_end *s);
/* One interval of the send window, ending at pt->t (s since the run's start; its
 * accepted and read counts and the backlog at its end), with each of the n stages'
 * span as it stands (t0, t1: planned, or as ended) and planned length. The act for
 * stage *which at pt->t; *res the test's result when it ran. */
enum stage_end_act stage_end_step(struct stage_end *s, const struct stage_end_rules *r, const double *t0,
                                  const double *t1, const double *planned, unsigned n, const struct drift_point *pt,
                                  unsigned *which, struct drift_result *res);

#endif
