/* search: the capacity search over the arrival rate, as a pure state machine: it
 * says which rate to try next and takes each step's outcome. Coarse steps first,
 * multiplying the rate by `factor` while steps pass (dividing it while they fail),
 * then bisection between the highest passing and the lowest failing rate until
 * they are within `precision` of each other, then (SPECmail2001's method) the
 * confirmation at 80 %, 100 % and 120 % of the rate found. A server's pass or
 * fail near its capacity is noisy: a rate that passed in the bisection can fail
 * when it is run again. So a confirmation whose 80 % or 100 % step fails starts
 * again at the failed rate less `precision`, and one whose 120 % step passes at
 * 120 % of its base, up to `confirm_rounds` rounds in all; the capacity is the base
 * of the round that came out as SPECmail2001 asks. Every judged step is evidence
 * of where the capacity lies: the interval [search_known_lo, search_known_hi]
 * spans the capacity, the lowest rate that failed and the highest that passed, so
 * when the server passed above a rate it failed at, the interval is that band of
 * chance, measured, not the bisection's precision. No clock, no files:
 * tests/unit/test_capacity.c drives it against known ceilings, steady and noisy. */
#ifndef MS_CAPACITY_SEARCH_H
#define MS_CAPACITY_SEARCH_H

struct search_rules {
    double start, factor, max_rate, precision;
    int confirm;
    int confirm_rounds;              /* confirmations run at most (0 is taken as 1) */
};

enum search_phase { SP_COARSE, SP_BISECT, SP_CONFIRM, SP_DONE };

struct search {
    struct search_rules r;
    enum search_phase phase;
    double next;                     /* the rate to try; 0 once done */
    double lo, hi;                   /* the bracket of coarse steps and bisection: highest passing,
                                        lowest failing; 0: none yet */
    double pass_max, fail_min;       /* over every step, confirmations too; 0: none yet */
    int confirm_i;                   /* the confirmation step in progress: 0, 1, 2 (80, 100, 120 %) */
    int confirmed[3];                /* this round's steps: 1 pass, 0 fail, -1 not run */
    int round;                       /* the confirmation round, 1, 2, ...; 0: none yet */
    double base;                     /* the rate this round confirms */
    double held;                     /* the highest base whose 80 % and 100 % steps passed; 0: none */
    char end[200];                   /* why the search ended */
};

extern const double search_confirm_share[3];   /* 0.8, 1.0, 1.2 */

/* What the tester needed, by rate: a step its senders or readers limited at a rate
 * with N of them needs at least 2N there and at every rate above it; a rate below
 * starts again from the configured count: carried down, the logins of the readers a
 * high rate needed would load the server a low rate measures. */
enum search_who { NEED_SENDERS, NEED_READERS };
#define SEARCH_NEEDS_MAX 64
struct search_needs {
    unsigned n;
    struct { double rate; enum search_who who; unsigned count; } v[SEARCH_NEEDS_MAX];
};
/* count of who are needed at rate and above (a full list keeps what it has). */
void search_need(struct search_needs *nd, double rate, enum search_who who, unsigned count);
/* More than count of who were shown futile at rate (step_fix_futile): the needs
 * recorded there are cut back to count, so no later step, at that rate or above,
 * starts with what moved no more mail (and loads the server with their logins). */
void search_need_futile(struct search_needs *nd, double rate, enum search_who who, unsigned count);
/* How many of who to start a step at rate with: the most needed at any rate at or
 * below it, at least base. */
unsigned search_need_at(const struct search_needs *nd, double rate, enum search_who who, unsigned base);

void search_init(struct search *s, const struct search_rules *r);
/* The rate of the next step, or 0 when the search is over (s->end says why). */
static inline double search_next(const struct search *s) { return s->phase == SP_DONE ? 0 : s->next; }
/* The name of the phase the next step belongs to: "coarse", "bisect", "confirm 80 %"... */
const char *search_phase_name(const struct search *s, char *buf, unsigned n);
/* The step at search_next() passed (1) or failed (0). */
void search_result(struct search *s, int pass);
/* Ends the search early: the time is up, the tester cannot offer the rate, a signal. */
void search_stop(struct search *s, const char *why);
/* The search found a capacity: a passing rate below a failing one (or max_rate passed). */
int search_found(const struct search *s);
/* A confirmation round came out as SPECmail2001 asks: 80 % and 100 % pass, 120 % fails. */
int search_confirmed(const struct search *s);
/* What the search exits with (lib/exitcodes.h): MS_EXIT_OK, a capacity found (and
 * confirmed when asked); MS_EXIT_NOT_CONFIRMED, found but its confirmation failed;
 * MS_EXIT_FAILURE, none found. */
int search_exit_status(const struct search *s);
/* The capacity, msg/s: the confirmed base; unconfirmed, the highest base whose 80 %
 * and 100 % steps passed, else the bracket's highest pass; 0 when none was found. */
double search_capacity(const struct search *s);
/* Where the evidence puts the capacity: from the lower of the capacity and the
 * lowest failing rate to the higher of the highest passing and the lowest failing
 * rate. Without noise that is [capacity, lowest failure], the precision; where a
 * rate passed above one that failed, the band in which steps passed or failed by
 * chance. Searches agree when their intervals share a rate. */
double search_known_lo(const struct search *s);
double search_known_hi(const struct search *s);

#endif
