/* step: one step of a capacity search, judged from its run's result file. The
 * step's run ramps up to its rate, holds it through a warm-up that is not judged,
 * and then for the steady window; the window is the timeline's intervals of the
 * send phase that began after the ramp and the warm-up,
 * and every figure the step is judged on is added up over them (counts, error
 * classes, the latency histograms themselves, never percentiles), beside the whole
 * run's ledger (lost, duplicated, corrupted). Pure: a read result (result/result.h) in, figures and a
 * judgement out (tests/unit/test_capacity.c). */
#ifndef MS_CAPACITY_STEP_H
#define MS_CAPACITY_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "engine/stats.h"
#include "lib/hist.h"
#include "result/result.h"
#include "verdict/gate.h"

struct step_figures {
    unsigned intervals;              /* timeline entries in the steady window */
    double window_s;                 /* its length */
    struct counters c;               /* its counts: sent, read, errors, sessions, arrivals, late, left_behind */
    struct hist lat[LAT_COUNT];      /* its latencies, merged */
    unsigned nerr;
    struct err_count err[ERR_CLASSES_MAX];
    double offered, accepted, delivered;   /* msg/s in the window: arrivals started, accepted, read */
    double unread_slope;             /* msg/s: growth of the mail accepted and not yet read (least squares) */
    double unread_half[2];           /* msg/s: the same over the window's first and second half */
    /* The server's side of that backlog, where the collector measured it: the
     * queue ([server] spool_dir) and the mailboxes ([server] store_dir). */
    int has_spool, has_store;
    double spool_slope, store_slope; /* msg/s */
    double unread_mean;              /* messages: the backlog's mean over the window */
    unsigned unread_n;               /* its samples (verdict/keptup.h) */
    /* the whole run */
    uint64_t sent, lost, duplicated, corrupted, pending;
    int settled;                     /* 1, 0, or -1: no sweep was needed */
    int interrupted;
};

/* Reads a step's result (a `mailsoak run` JSON) whose steady window began start_s
 * into its run (after the ramp and the warm-up). 0, or -1
 * with the reason in err (not a result file, a timeline entry without its counts,
 * histograms that do not add up). */
int step_read(const struct result *r, double start_s, struct step_figures *f, char *err, size_t errlen);
/* The same over the send intervals that began at or after start_s and ended by
 * end_s: a level of a staircase run (capacity/level.h). */
int step_read_span(const struct result *r, double start_s, double end_s, struct step_figures *f, char *err,
                   size_t errlen);

/* What a step is judged against: the steady state (the backlog of mail accepted
 * and not read may grow by at most queue_growth of the accepted rate) and the
 * gates of verdict/gate.h over the window: the run's [gate] settings joined with
 * SPECmail2001's quality of service (every SMTP and POP3 command class answered
 * within 5 s for more than 95 %, delivery within 60 s for more than 95 %, errors
 * under 1 %). */
struct step_rules {
    double queue_growth;             /* share of the accepted rate */
    struct gates g;
};
/* SPECmail2001's gates alone (tests), or over the [gate] settings of cfg (the
 * search): 0, or -1 with the gate key's reason in err. */
void step_rules_specmail(struct step_rules *r, double queue_growth);
int step_rules_from_config(struct step_rules *r, const struct config *cfg, char *err, size_t errlen);

enum step_verdict { STEP_PASS, STEP_FAIL, STEP_INVALID };
/* What would make an invalid step valid, by running it again with more of it:
 * senders, readers, or (FIX_WINDOW) a longer steady window. */
enum step_fix { FIX_NONE, FIX_SENDERS, FIX_READERS, FIX_WINDOW };

#define STEP_CHECKS_MAX (LAT_COUNT + 8)
struct step_check {
    char name[48];                   /* "lost", "queue growth", "smtp.rcpt p95", "delivery p95", "errors" */
    int pass;
    double value, bound;             /* in unit */
    const char *op, *unit;           /* "<=", "=", ">"; "", "msg/s", "ms", "%" */
};

struct step_judgement {
    enum step_verdict verdict;
    enum step_fix fix;               /* STEP_INVALID: what to add, or FIX_NONE */
    char why[240];                   /* STEP_INVALID: why the step says nothing of the server */
    unsigned n;
    struct step_check v[STEP_CHECKS_MAX];
    int first_failed;                /* index in v, or -1 */
};

/* What the search has shown the tester not to lack at a step's rate (ruled_out, a
 * search decision, capacity/rerun.h): bits 1 << FIX_SENDERS and 1 << FIX_READERS
 * when more of them moved no more mail (step_fix_futile): arrivals that waited for a
 * sender waited for the server's SMTP side, mail waiting in the mailboxes for its
 * POP3 side, never for the tester; 1 << FIX_WINDOW when the step's window is the
 * longest the search runs, so it is judged on its whole window however its halves
 * disagree.
 * A step is invalid, and says nothing of the server, when the tester limited it:
 * its run was interrupted or had no steady interval; its engine ran late on the
 * schedule, or arrivals waited for a free sender (more than 1 in 1000: FIX_SENDERS,
 * unless more senders were shown to get no more mail accepted: ruled_out); the
 * backlog grew but not in the server's queue: its readers left mail in the
 * mailboxes (more than 1 visit in 20), or the mailboxes' count grew by half the
 * backlog's growth or more, or the queue, measured, grew by under half of it
 * (FIX_READERS: the store holds the mail and the readers do not come for it), unless
 * the server keeps the readers waiting (a pop3.* gate fails: then it is the server's)
 * or more readers were shown to read no more (ruled_out). The
 * backlog may also grow by its own noise: 3 standard deviations of a count of its
 * mean (3 sqrt(mean + 1)) over the window. Otherwise it passes when every check
 * passes: nothing lost, duplicated or corrupted in the whole run, mail accepted (with
 * the senders ruled out, 95 % of the offered: what the server did not take of an
 * open-loop arrival rate it did not sustain), the backlog steady, and every gate of
 * the rules over the window (gate_judge). A step that passes, or fails only its
 * backlog's growth, is invalid all the same (FIX_WINDOW: the window caught a swing,
 * not a trend) when its window's halves disagree: the backlog grew past the bound
 * (with the noise of a half window) in one half and fell in the other. Near a
 * server's knee its backlog can swing for longer than a window, so one window's
 * slope may be a swing's; above the knee both halves grow. */
void step_judge(const struct step_rules *r, const struct step_figures *f, unsigned ruled_out, struct step_judgement *j);
/* A ruled_out bit of its own: the backlog's growth is the caller's to judge (a
 * staircase level's sequential test), so its "queue growth" check and the swing's
 * longer window are left out; whose growth it is (the readers') is still asked. */
#define STEP_GROWTH_ELSEWHERE (1u << 8)
/* Another: the caller's test weighs the server's queue (a level judged on it,
 * capacity/level.h), so mail our readers leave in the mailboxes limits the step
 * only where a gate failed over it (the delivery time is taken when they read):
 * their backlog wanders with Dovecot's logins by more than a level can tell from
 * a trend. */
#define STEP_READERS_BY_GATES (1u << 9)
/* How many readers a step its readers limited (FIX_READERS) needs at its rate,
 * sized by what they read: each of them read delivered / readers msg/s in the
 * window, so the accepted rate takes readers x accepted / delivered of them (msg/s
 * over the same span), and a
 * quarter more to read the backlog the window left; at least one more, at most
 * twice as many (and twice as many when they read nothing). Never plain doubling:
 * a reader is a login, and the logins of readers doubled past their need load the
 * server they measure. */
unsigned step_readers_needed(double accepted, double delivered, unsigned readers);
/* What the server delivered over f's window, msg/s: with its queue counted
 * (on_queue, and the window has its slope) what it accepted less what its queue
 * grew by, else what our readers read (f->delivered, which mail left in the
 * mailboxes lowers though the server delivered it). */
double step_server_delivered(const struct step_figures *f, int on_queue);
/* Whether what was added to a step the tester limited was futile: run again at the
 * same rate with more senders (readers), it had under 5 % more mail accepted
 * (delivered) than before. Then the server was the limit, not the tester: adding
 * more could only end the search as the tester's fault. */
int step_fix_futile(enum step_fix fix, const struct step_figures *before, unsigned n_before,
                    const struct step_figures *after, unsigned n_after);
/* "queue growth 6.1 msg/s, must be <= 5.0 msg/s" */
const char *step_check_describe(const struct step_check *c, char *buf, size_t n);
/* The command class of the window with the highest pNN (lat_pct), or -1. */
int step_worst_command(const struct step_figures *f, double pct);
/* Whether a latency class is a command class the rules bound: every smtp.* and
 * pop3.* but smtp.message (the whole transaction). */
int step_is_command(unsigned k);

#endif
