/* keptup: whether the server kept up with the mail it accepted, the one judgement a
 * plain run, a capacity level and a capacity step share. It reads the run's own
 * ledger: the backlog of mail accepted and not yet read, sampled over a window, so
 * it judges with or without the server's queue in view; the readers' visits (those
 * that left mail for later, those that found the mail owed to a mailbox not there
 * yet) and, where measured, the server's queue and mailboxes tell a server that
 * falls behind from readers that do. The statistic is one function over the
 * samples (keptup_backlog) and one comparison (keptup_judge): another statistic is
 * a change here, never in a caller. Pure: figures in, judgement out
 * (tests/unit/test_keptup.c). */
#ifndef MS_VERDICT_KEPTUP_H
#define MS_VERDICT_KEPTUP_H

#include <stddef.h>
#include <stdint.h>

/* The backlog's figures over a window, from its samples. */
struct keptup_backlog {
    unsigned n;                      /* samples; fewer than 2: nothing can be told */
    double span_s;                   /* from the first sample to the last */
    double slope;                    /* msg/s: least-squares growth */
    double half[2];                  /* msg/s: the same over the window's first and second half */
    double mean;                     /* messages: the backlog's mean */
};

/* Least-squares slope of y over t (0 with fewer than two points or one time). */
double keptup_slope(const double *t, const double *y, unsigned n);
/* The figures of n samples (t ascending, in s; unread in messages). The halves
 * share the sample nearest the middle, so each is a slope of its own. */
void keptup_backlog(const double *t, const double *unread, unsigned n, struct keptup_backlog *b);

struct keptup_input {
    struct keptup_backlog b;
    double accepted_rate;            /* msg/s accepted in the window */
    /* The readers in the window: their visits, those that left mail for later
     * (pop3.max_per_session: the store holds more than they take), those that found
     * none of the mail the mailbox was owed (the server had not delivered it yet). */
    uint64_t visits, left_behind, empty_visits;
    uint64_t full_visits;            /* visits that retrieved mail: it waited in the mailbox for them */
    int readers_busy;                /* the readers' checks began late, every reader busy (poll_interval) */
    /* The server's side of the backlog, where the collector counted it. */
    int has_spool, has_store;
    double spool_slope, store_slope; /* msg/s */
    int server_slows_readers;        /* a pop3.* gate failed: the readers waited for the server */
    int readers_ruled_out;           /* more readers were shown to read no more (capacity) */
    /* A sequential test's decision over the same window (verdict/drift.h), when it
     * reached one: 1 the backlog held, -1 it grew; 0 none, and the slope decides. */
    int decided;
    const char *decided_by;          /* the test's name */
    double decided_value, decided_bound;   /* msg/s */
};

struct keptup_rules {
    double growth_share;             /* the backlog may grow by this share of the accepted rate */
};

enum keptup_outcome {
    KEPTUP_UNKNOWN,                  /* fewer than two samples, or nothing accepted */
    KEPTUP_YES,                      /* the backlog held */
    KEPTUP_BEHIND,                   /* it grew, and the server is why */
    KEPTUP_TESTER,                   /* it grew, and our readers are why: the tester's limit */
};
extern const char *const keptup_outcome_names[];   /* "unknown", "yes", "behind", "tester" */

#define KEPTUP_STAT "backlog growth"
#define KEPTUP_SPRT "backlog growth, sequential test"

struct keptup_result {
    enum keptup_outcome outcome;
    const char *stat;                /* the statistic's name: KEPTUP_STAT */
    double value, bound;             /* msg/s: the statistic and its bound */
    double half_bound;               /* msg/s: the bound over half the window */
    int swing;                       /* grew past half_bound in one half and fell in the other */
    int server_seen;                 /* KEPTUP_TESTER: the server's queue or mailboxes showed the growth is ours */
    char why[240];                   /* what the readers and the server's side showed */
    /* s: where a plain run's window was judged from, once its backlog had filled
     * (verdict.c); 0 when it was judged from its start */
    double filled_s;
};

/* The bound the backlog may grow by over span_s: its share of the accepted rate,
 * or its own noise, 3 standard deviations of a count of its mean. */
double keptup_bound(const struct keptup_rules *r, double accepted_rate, double mean, double span_s);
/* The backlog held when it grew by no more than the bound. When it grew more, the
 * readers are why (KEPTUP_TESTER) when they left mail in the mailboxes on more than
 * 1 visit in 20, or all of them were busy, or the mailboxes' count grew by half the
 * backlog's growth or more, or the queue, counted without the mailboxes, grew by
 * under half of it, or, with neither counted, over 9 in 10 of their visits that
 * wanted mail retrieved mail that waited for them (the others found the mail owed
 * not there yet: the server held it); unless the server
 * kept them waiting (server_slows_readers), more readers read no more
 * (readers_ruled_out) or the queue, counted, grew past the bound by itself. Else
 * the server is why. */
void keptup_judge(const struct keptup_rules *r, const struct keptup_input *in, struct keptup_result *out);

#endif
