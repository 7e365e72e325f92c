/* level: one level of a staircase run (capacity/stair.h) judged from its run's
 * result: the send intervals of its span cut from the timeline, the gates of
 * capacity/step.h over them (SPECmail2001's quality of service, the tester's
 * limits), and whether the server kept up by the sequential test of verdict/drift.h
 * in place of the step's fixed-window slope: the level passes when the test says
 * kept up and every gate passes, fails when the test says behind or a gate fails,
 * and is open when the test reached neither bound within the level (the knee's
 * band). Pure: a read result (result/result.h) in, a judgement out (tests/unit/test_stair.c). */
#ifndef MS_CAPACITY_LEVEL_H
#define MS_CAPACITY_LEVEL_H

#include <stddef.h>

#include "capacity/stair.h"
#include "capacity/step.h"
#include "result/result.h"
#include "verdict/drift.h"
#include "verdict/stage_end.h"

/* What a level's sequential test weighs (enum level_series, verdict/stage_end.h):
 * mail waiting in the mailboxes wanders with the readers' logins by more than a
 * level can tell from a trend, the server's queue far less (the replay's scores
 * are in docs/results/capacity.md); that mail is judged by the gates
 * (STEP_READERS_BY_GATES in capacity/step.h). */
extern const char *const level_series_names[];   /* "the backlog", "the server's queue" */
enum level_series level_series_of(const struct result *r);

/* The points of the send intervals that began at or after start_s and ended by
 * end_s, for drift.h: p[0] the end of the interval before them (what the level
 * began with). Their backlog is series s: with LEVEL_QUEUE the queue's count, an
 * interval without one carrying the last (the queue is counted every
 * server.queue_interval). Returns how many (0: none), *out allocated, freed by the
 * caller. */
unsigned level_points(const struct result *r, enum level_series s, double start_s, double end_s,
                      struct drift_point **out);

/* The ledger's outcomes of the mail the level accepted (its stage of the run's
 * verdict.stages: sent, lost, duplicated, corrupted, pending) in place of the whole
 * run's in f, so a loss fails the level that lost it. -1, f unchanged, when the
 * result has no such stage (a file of an older mailsoak: the whole run's stay). */
int level_ledger(const struct result *r, unsigned stage, struct step_figures *f);

struct level_judgement {
    enum level_outcome out;
    struct drift_result kept;        /* the sequential test, or the fixed one when fixed */
    int fixed;                       /* a confirmation's level open at its cap: drift_growth_z decided */
    struct step_judgement j;         /* the gates and the tester's limits over the level */
    char why[240];                   /* what failed, or why it is invalid or open */
};

/* The level's judgement from its figures (step_read_span) and its points of
 * series s, with drift_sprt's variance v; ruled_out as step_judge's (1 <<
 * FIX_READERS: more readers were shown to read no more at this rate, so mail left
 * in the mailboxes is the server's). */
void level_judge(const struct step_rules *r, const struct drift_rules *dr, enum drift_variance v, unsigned ruled_out,
                 const struct step_figures *f, enum level_series s, const struct drift_point *p, unsigned n,
                 struct level_judgement *lj);

/* The one-sided test a confirmation's level open at its cap is judged by
 * (drift_growth_z at 1 %): a claim is refuted only by a backlog that grew past its
 * own noise. */
#define LEVEL_CONFIRM_Z 2.326
/* A confirmation's level (SPECmail2001's 80, 100 or 120 %): as level_judge, and so
 * ended when its sequential test decides it, as every level is; one still open at
 * its cap is judged by the fixed-sample test of its whole length (drift_growth_z at
 * LEVEL_CONFIRM_Z) instead: the sequential test's indifference zone (growth from
 * nothing to the bound) would leave a claim at the ceiling a coin's toss or open,
 * so such a level passes unless the backlog grew significantly, and is never open. */
void level_judge_confirm(const struct step_rules *r, const struct drift_rules *dr, enum drift_variance v,
                         unsigned ruled_out, const struct step_figures *f, enum level_series s,
                         const struct drift_point *p, unsigned n, struct level_judgement *lj);

#endif
