/* rerun: what a capacity search does once a step is judged, as a pure function. A
 * step the tester limited is run again at its rate with more of what it lacked:
 * twice the senders, or the readers what they read says it needs
 * (step_readers_needed), within capacity.max_senders and max_readers; the steps at
 * that rate or above start with as many (search_need_at), never a lower rate. When
 * more of it moved no more mail (step_fix_futile), the tester is cleared of it
 * (ruled_out) and the step judged again as the server's. A step whose backlog swung
 * within its window (FIX_WINDOW) is run again with twice the window, up to
 * window_max; the longest is judged as it is. At most RERUN_RETRIES runs again at one
 * rate; then, or when nothing can be added (the engine late), the search stops,
 * never counting the step against the server. cmd/cmd_capacity.c runs the steps;
 * tests/unit/test_capacity.c drives this. */
#ifndef MS_CAPACITY_RERUN_H
#define MS_CAPACITY_RERUN_H

#include <stddef.h>
#include <stdint.h>

#include "capacity/output.h"
#include "capacity/search.h"
#include "capacity/step.h"

#define RERUN_RETRIES 4

struct rerun_rules {
    uint64_t window, window_max;     /* ns: capacity.window; the longest an unsteady step gets */
    unsigned base_senders, base_readers;   /* the configured sessions */
    uint64_t max_senders, max_readers;     /* capacity.max_senders, capacity.max_readers */
};

struct rerun_state {
    uint64_t window;                 /* ns: the next step's window */
    unsigned retries;                /* runs again at the current rate so far */
    struct search_needs needs;       /* senders and readers needed, by rate */
};

enum rerun_action {
    RERUN_JUDGED,                    /* the step passed or failed: the search takes it (search_result) */
    RERUN_WINDOW,                    /* the same rate again, with state->window */
    RERUN_MORE,                      /* the same rate again, with more senders or readers (rerun_sessions) */
    RERUN_STOP,                      /* the tester cannot offer the rate: stop the search, why says so */
};

void rerun_init(struct rerun_state *s, const struct rerun_rules *r);
/* The senders and readers a step at rate starts with. */
void rerun_sessions(const struct rerun_state *s, const struct rerun_rules *r, double rate, unsigned *senders,
                    unsigned *readers);
/* Settles the step just judged (st; prev the step before it, or NULL): what the
 * tester was shown not to lack at its rate goes into st->ruled_out (prev's at the
 * same rate carried, a futile fix added) and st is judged again with it (under
 * rules); then what the search does next, with state updated for the next step's
 * window and sessions. RERUN_STOP puts the reason in why. */
enum rerun_action rerun_next(const struct rerun_rules *r, struct rerun_state *s, const struct step_rules *rules,
                             const struct step_record *prev, struct step_record *st, char *why, size_t n);

#endif
