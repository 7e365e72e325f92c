/* stair: the capacity search as a staircase, a pure state machine (no clock, no
 * files; tests/unit/test_stair.c). Instead of a run per rate, each run offers a
 * rising staircase of levels with no drain between them, and each level is judged
 * while it runs by the sequential test of verdict/drift.h: kept up (pass), behind
 * (fail), or neither by its cap (open: the knee's band, reported, never guessed).
 * The search, as FD.io CSIT's MLRsearch does, starts with a probe that offers more
 * than the server takes: one run of levels doubling from capacity.start until one
 * falls behind; the most a level of it delivered (MLRsearch's maximum receive
 * rate; not the last level's, as a mail server offered far more than it takes can
 * spend on accepting the time it needs to deliver) places the first staircase,
 * from below it to above it in levels a few per cent apart. A staircase whose lowest level failed is followed by one lower; one
 * whose highest passed, by one higher; a gap between the highest pass and the
 * lowest failure wider than the precision, with no level tried in it, by a short
 * staircase inside it. Every level is evidence: the answer is the highest passing
 * level, the lowest failing one, the band of open levels, and a pass probability
 * fitted over all of them (stair_fit, after PLRsearch), then SPECmail2001's 80, 100
 * and 120 % confirmation of the capacity claimed, as a run's three levels. A claim
 * its 80 or 100 % level refutes is claimed again below, as a benchmarker lowers a
 * claim SPECmail2001 refused: those levels join the search's evidence, and the
 * search goes on from it (capacity.confirm_rounds confirmations at most). */
#ifndef MS_CAPACITY_STAIR_H
#define MS_CAPACITY_STAIR_H

struct stair_rules {
    double start;                    /* the first probe's rate, msg/s */
    double factor;                   /* a probe level that kept up: the next offers this many times more */
    double max_rate;
    double step;                     /* the levels' spacing, a share of the rate (0.04) */
    double below;                    /* the first staircase starts this share below the probe's delivered rate */
    double precision;                /* the bracket wanted: lowest failure within this share above the highest pass */
    unsigned max_runs;               /* probes and staircases, the confirmation included: the last run is
                                        the confirmation's when a capacity is claimed by then */
    int confirm;                     /* SPECmail2001's 80/100/120 % after the search */
    unsigned confirm_rounds;         /* confirmations at most (capacity.confirm_rounds; 0 is taken as 1):
                                        a claim refuted too high is claimed again below (stair_result) */
};

enum level_outcome { LEVEL_PASS, LEVEL_FAIL, LEVEL_OPEN, LEVEL_INVALID };
const char *level_outcome_name(enum level_outcome o);

#define STAIR_LEVELS_MAX 16
#define STAIR_HISTORY_MAX 160
#define STAIR_PROBE_TRIES 3
#define STAIR_CLAIMS_MAX 8
/* A probe's sequential test weighs "kept up" against a growth of this many times
 * capacity.queue_growth: a probe asks only whether the server is clearly overloaded
 * (the staircase finds where), and the test decides in a time that falls as the
 * square of its alternative, so a probe far over the knee is stopped in seconds,
 * before its backlog outlasts it into the runs that follow, and one far under it
 * moves on without waiting out its level. */
#define STAIR_PROBE_SHARE 4

/* RUN_RETRY: the open levels inside the bracket once more, twice as long (the
 * middle one of more than two, a bisection, until one comes back open): an open
 * level had too little time to be classified, and MLRsearch measures a load until
 * it is (a level open twice is the knee's band). */
enum stair_kind { RUN_PROBE, RUN_CLIMB, RUN_REFINE, RUN_CONFIRM, RUN_RETRY };
const char *stair_kind_name(enum stair_kind k);

/* What the next run offers: its levels' rates, lowest first. */
struct stair_run {
    enum stair_kind kind;
    unsigned n;
    double rate[STAIR_LEVELS_MAX];
};

struct stair_level {
    unsigned run;                    /* 1, 2, ...: the run it was part of */
    enum stair_kind kind;
    double rate;                     /* asked for, msg/s */
    double offered;                  /* what its arrivals offered, msg/s; 0: not measured */
    double delivered;                /* what the server delivered (the readers read) during it, msg/s; 0: not measured */
    enum level_outcome out;
    int searched;                    /* a confirmation's 80 or 100 % level whose claim it refuted too high:
                                        one of the search's levels since, at the lower of its rate and load */
};

/* A claim a confirmation refuted too high, before the search claimed again below. */
struct stair_claim {
    double claim;                    /* msg/s */
    unsigned share_pct;              /* the level that refuted it: 80 or 100 */
    double offered;                  /* what that level's last trial offered, msg/s */
};

struct stair {
    struct stair_rules r;
    int done;
    unsigned runs;
    double probe;                    /* the next probe's first rate; 0 once a level of it fell behind */
    double mrr;                      /* the most any probe level delivered, once one fell behind, msg/s */
    double probe_best;               /* the most a probe level delivered so far, msg/s */
    unsigned probe_invalid;          /* probes the tester limited: run again from the level it limited, up
                                        to STAIR_PROBE_TRIES in all */
    unsigned confirm_invalid;        /* confirmations a level the tester limited left undecided: the same */
    unsigned confirm_kept;           /* the confirmation's first levels, run before a level the tester limited */
    struct stair_level confirm_head[2];
    unsigned n;
    struct stair_level v[STAIR_HISTORY_MAX];
    double at_least;                 /* a probe at max_rate kept up: the capacity is at least the load it
                                        offered (msg/s), unproven beyond; 0 otherwise */
    int max_open;                    /* a probe at max_rate was open: neither kept up nor behind */
    int confirmed;                   /* -1 not run, 0 not confirmed, 1 confirmed */
    double confirm_base;
    unsigned nrefuted;               /* claims refuted too high and claimed again below, in order */
    struct stair_claim refuted[STAIR_CLAIMS_MAX];
    char end[200];
};

/* A probe's share of growth (STAIR_PROBE_SHARE times share, at most 1). */
double stair_probe_share(double share);
void stair_init(struct stair *s, const struct stair_rules *r);
/* The next run; n = 0 when the search is over (s->end says why). */
void stair_next(const struct stair *s, struct stair_run *run);
/* The outcome of the run stair_next gave: each level's, and for a probe the most
 * its levels before any the tester limited delivered (msg/s). A level invalid (the
 * tester limited it) is kept as evidence of nothing. */
void stair_result(struct stair *s, const struct stair_run *run, const enum level_outcome *out, double delivered);
/* The same, with what each level offered and delivered (msg/s, 0 where not
 * measured), known before the next run is chosen. */
void stair_result_measured(struct stair *s, const struct stair_run *run, const enum level_outcome *out,
                           double delivered, const double *lv_offered, const double *lv_delivered);
/* A run that the tester limited at a level goes again with more sessions; the
 * levels it ran before that one stand, the tester not limiting them. Records those
 * (as a run of their own, with what they offered and delivered, and for a probe the
 * most they delivered; a confirmation's until its levels after them have run, the
 * three then judged together) so that the next run starts at the limited level,
 * not again from its first. Their count: 0 for a run limited at its first. */
unsigned stair_keep_before_invalid(struct stair *s, const struct stair_run *run, const enum level_outcome *out,
                                   double delivered, const double *lv_offered, const double *lv_delivered);
/* What each level of the last run's n offered (msg/s, 0 where not measured): a
 * level of Poisson arrivals offers its rate give or take sqrt(rate / length), 2.6 %
 * at 50 msg/s for 30 s, as much as the levels' spacing, so the fit places each
 * outcome at the rate it had. */
void stair_offered(struct stair *s, const double *offered, unsigned n);
/* What remains after the run stair_next gave, if the search goes as planned: runs
 * (a probe is followed by a staircase, a staircase or refinement by the
 * confirmation when asked) and their levels, the confirmation's counted twice
 * (its levels are twice as long). A refinement or a staircase beyond the first
 * may add to it: "about". */
void stair_remaining(const struct stair *s, const struct stair_run *run, unsigned *runs, unsigned *levels);
/* What each level of the last run's n delivered (msg/s, 0 where not measured). */
void stair_delivered(struct stair *s, const double *delivered, unsigned n);
/* Ends the search early (time limit, a signal, the tester). */
void stair_stop(struct stair *s, const char *why);

/* The evidence, over every level but the probes' (offered to be overloaded) and
 * the confirmation's, each at its load (the rate its arrivals offered where
 * measured, else the rate asked): the highest passing load and the lowest failing
 * one (0: none), the span of the loads of levels open every time their rate was
 * run (0, 0: none). */
double stair_pass_max(const struct stair *s);
double stair_fail_min(const struct stair *s);
/* The rates whose decided trials disagree (probes and the confirmation aside), at
 * most max, lowest first, each with how many of its levels passed and failed. A
 * rate stands as the most of its trials say, as neither while they are tied (and
 * is tried again); the rates above count only the levels that stand. */
struct stair_dispute {
    double rate;
    unsigned passed, failed;
};
unsigned stair_disputes(const struct stair *s, struct stair_dispute *d, unsigned max);
/* The relevant lower bound (MLRsearch's), a load: the highest passing level below
 * the lowest failing one (a pass above a failure is chance near the knee, the band,
 * never the claim), or the highest pass when none failed; 0 when no level passed
 * below every failure. */
double stair_lower_bound(const struct stair *s);
/* The capacity claimed: what the server delivered at the relevant lower bound
 * (MLRsearch's "conditional throughput": the receive rate at that load), its
 * asked rate where that was not measured; 0 without a lower bound. A level a few
 * per cent over the ceiling can pass (the test's indifference zone: a growth
 * under capacity.queue_growth of the rate), but what it delivered is the
 * server's own rate. */
double stair_capacity(const struct stair *s);
/* The knee's band: the lowest and highest load of the levels open and never
 * decided at their rate, inside the bracket, above the lower bound and below the
 * lowest failure (one outside is implied by the pass below or the failure above
 * it, as MLRsearch's loads are, and a bisecting retry leaves it); 0, 0 when
 * none. */
void stair_band(const struct stair *s, double *lo, double *hi);

/* A pass probability over the rate fitted to every level's outcome (pass 1, fail
 * 0, open a half of each) at the rate it offered (its asked rate where that was not
 * measured), the logistic P(x) = 1 / (1 + exp((x - mid) / scale)),
 * by maximum likelihood on a grid, the scale at least min_scale (levels that
 * separate cleanly fit any smaller one alike). p50 = mid, p95 the rate at which
 * P = 0.95. ok = 0 without a pass and a failure. */
struct stair_fit {
    int ok;
    double mid, scale, p95;
    double lo;                       /* the lowest rate fitted: a p95 below it is extrapolated */
};
void stair_fit(const struct stair *s, double min_scale, struct stair_fit *f);
/* The search's exit status, as a step search's (search_exit_status): 1 without a
 * level that passed below one that failed, MS_EXIT_NOT_CONFIRMED when the
 * confirmation was asked and did not come out as SPECmail2001 asks (or never ran),
 * else 0. */
int stair_exit_status(const struct stair *s);

#endif
