/* search: the capacity search over the arrival rate, as a pure state machine: it
 * says which rate to try next and takes each step's outcome. Coarse steps first,
 * multiplying the rate by `factor` while steps pass (dividing it while they fail),
 * then bisection between the highest passing and the lowest failing rate until
 * they are within `precision` of each other, then (SPECmail2001's method) the
 * confirmation at 80 %, 100 % and 120 % of the rate found. The capacity is the
 * highest passing rate; [lo, hi] is how precisely the search knows it. No clock,
 * no files: tests/unit/test_capacity.c drives it against a known ceiling. */
#ifndef MS_CAPACITY_SEARCH_H
#define MS_CAPACITY_SEARCH_H

struct search_rules {
    double start, factor, max_rate, precision;
    int confirm;
};

enum search_phase { SP_COARSE, SP_BISECT, SP_CONFIRM, SP_DONE };

struct search {
    struct search_rules r;
    enum search_phase phase;
    double next;                     /* the rate to try; 0 once done */
    double lo, hi;                   /* highest passing, lowest failing; 0: none yet */
    int confirm_i;                   /* the confirmation step in progress: 0, 1, 2 (80, 100, 120 %) */
    int confirmed[3];                /* each confirmation step: 1 pass, 0 fail, -1 not run */
    double base;                     /* the rate the confirmation is of */
    char end[200];                   /* why the search ended */
};

extern const double search_confirm_share[3];   /* 0.8, 1.0, 1.2 */

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
/* The confirmation came out as SPECmail2001 asks: 80 % and 100 % pass, 120 % fails. */
int search_confirmed(const struct search *s);

#endif
