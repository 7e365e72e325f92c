/* verdict: what a run proved, in words a user cannot misread. From the ledger's
 * outcomes, the send window's figures and the gates' judgement: the state (proven,
 * failed, unproven, nothing), what was proven (delivered exactly once, N of M),
 * what failed (lost, duplicated, corrupted), what is unproven and why (each pending
 * reason as a share of the accepted mail), whether the server kept up (accepted
 * against delivered rate, the backlog's growth over the window and whose it is),
 * and, when it did not settle or keep up, the remedy measured from the run; when a
 * protocol's sessions failed in large numbers (refused, dropped, timed out), a line
 * that says the load carried was not the load offered, whatever the ledger proved. Pure:
 * figures in, verdict out; judge() (verdict/judge.h) makes it, result/verdict_output.c
 * prints it in the table and writes it in the JSON. */
#ifndef MS_VERDICT_VERDICT_H
#define MS_VERDICT_VERDICT_H

#include <stdint.h>

#include "engine/ledger.h"
#include "engine/stats.h"
#include "verdict/gate.h"
#include "verdict/keptup.h"

/* One interval's end in the send window: what "kept up" is judged on. */
struct verdict_sample {
    double t;                        /* s into the run */
    double unread;                   /* the ledger's backlog: accepted, not yet read */
    int has_spool, has_store;        /* the server's queue and mailboxes were counted */
    double spool, store;             /* messages */
    double delivery_ms;              /* the interval's delivery latency p50; < 0: nothing delivered in it */
    /* the run's counts so far: accepted, reader visits, those that left mail,
     * those that found none of the owed mail, those that retrieved mail, polls and
     * late polls */
    uint64_t sent, visits, left_behind, empty_visits, full_visits, polls, polls_late;
};

/* The send window, as the controller saw it at its intervals. */
struct verdict_window {
    double seconds;                  /* its length */
    uint64_t accepted, read;         /* within it */
    int has_spool;                   /* the server's queue was counted */
    double spool_t0, spool_t1;       /* s: the first and the last count within the window */
    uint64_t spool_first, spool_last;
    /* The intervals' ends from the first one after smtp.ramp on: the backlog fills
     * to its level during the first interval, which is not judged. Freed by
     * verdict_window_free. */
    struct verdict_sample *kept;
    size_t nkept, capkept;
    /* s: how often the server's mailboxes are walked and its queue counted
     * ([server] walk_interval, queue_interval): a count repeats itself between
     * readings, so one is read only when its readings span two of them */
    double walk_s, queue_s;
    /* s: "kept up" is judged on the samples from here on (a profile's last stage
     * and an interval: the load the run ends at); 0: all of them */
    double from_s;
};

/* Adds the end of a send interval to w: ignored before warm_s (smtp.ramp plus an
 * interval); one closer than gap_s to the sample before it (half an interval: the
 * short entry a change of phase makes) replaces that one, unless it is the first.
 * The same rule for a run (run/run.c) and a result judged again (run/rejudge.c). */
void verdict_window_sample(struct verdict_window *w, const struct verdict_sample *s, double warm_s, double gap_s);
void verdict_window_free(struct verdict_window *w);
/* Whether the server kept up over w's samples (verdict/keptup.h), the backlog
 * allowed to grow by growth_share of the accepted rate; server_slows_readers: a
 * pop3.* gate failed. */
void verdict_keptup(const struct verdict_window *w, double growth_share, int server_slows_readers,
                    struct keptup_result *out);
/* The same by the backlog's least-squares slope alone, for a span whose own
 * sequential test (verdict/stage_end.h, with a level's rules) left it undecided:
 * as a capacity level is judged after its run (capacity/step.c), where a second
 * test with the plain run's rules could call behind what the level's called open. */
void verdict_keptup_slope(const struct verdict_window *w, double growth_share, struct keptup_result *out);

struct verdict_input {
    const struct counters *c;
    const struct ledger_outcome *lo;
    int settled;                     /* 1, 0, -1: no sweep was needed (or none ran) */
    int swept;                       /* a sweep ran */
    int interrupted;
    uint64_t senders, readers;
    double elapsed_s;                /* the whole run */
    struct verdict_window send;
    double rate;                     /* smtp.rate as set (0: as fast as the senders go) */
    double sweep_timeout_s, settle_s;
    int tester_limited;              /* the senders or the engine held back the offered load */
    const struct err_count *err;     /* errors by class: the most frequent names the remedy */
    unsigned nerr;
    const struct gate_judgement *gates;
    const struct keptup_result *kept;   /* verdict_keptup's, or NULL: cannot tell */
};

enum verdict_state {
    VERDICT_PROVEN,                  /* every accepted message delivered exactly once, proven */
    VERDICT_FAILED,                  /* mail lost, duplicated or corrupted, or nothing sent or read */
    VERDICT_UNPROVEN,                /* nothing failed, but not all of it is proven */
    VERDICT_NO_PROOF,                /* no readers: nothing could be proven (a senders-only run) */
};
extern const char *const verdict_state_names[];   /* "proven", "failed", "unproven", "no proof" */

#define VERDICT_TEXT 400

struct run_verdict {
    enum verdict_state state;
    uint64_t accepted, proven;       /* proven: delivered exactly once */
    double proven_share, unproven_share;          /* of accepted, 0..1 */
    double pending_share[PR_COUNT];
    /* Kept up: 1 yes, 0 no, -1 cannot tell (fewer than two samples, no senders,
     * or our readers fell behind with the server's side not counted): by the
     * backlog of the run's ledger (verdict/keptup.h). */
    int kept_up;
    int tester_limited;                           /* as given: the tester held the load back */
    struct keptup_result kept;                    /* the judgement; outcome KEPTUP_UNKNOWN without one */
    double accepted_rate, read_rate;              /* msg/s in the send window */
    double delivered_rate;                        /* msg/s the server delivered in it: accepted less the
                                                   * queue's growth, or read when the queue is not counted */
    double after_rate;                            /* msg/s read after the window (drain and sweep) */
    double backlog_rate;                          /* msg/s the unread backlog grew in the window */
    int has_queue_rate;
    double queue_rate;                            /* msg/s the server's queue grew in the window */
    double suggested_rate;                        /* smtp.rate to rerun with, 0: none */
    double more_sweep_s;                          /* seconds more the sweep would need, 0: none */
    char headline[VERDICT_TEXT];                  /* one line: the state and the main figure */
    char remedy[VERDICT_TEXT];                    /* what to change, "" when nothing */
    /* The protocol whose session attempts (sessions + errors, as gate.errors counts
     * them) failed the most, when more than VERDICT_SESSION_ERRORS of them did. */
    double session_error_share;                   /* 0..1, of that protocol's attempts */
    char session_errors[VERDICT_TEXT];            /* "" when under the bound */
};

#define VERDICT_SESSION_ERRORS 0.10

void verdict_make(const struct verdict_input *in, struct run_verdict *out);

#endif
