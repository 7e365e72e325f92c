/* judge: the one judgement of what a run measured, of a merged load's figures and
 * of a capacity step's window: the gates (verdict/gate.h), the verdict
 * (verdict/verdict.h) and the exit status, from one struct of the figures they read.
 * The rule "the tester held the load back" lives here alone. Pure: figures in,
 * judgement out. */
#ifndef MS_VERDICT_JUDGE_H
#define MS_VERDICT_JUDGE_H

#include <stdint.h>

#include "engine/ledger.h"
#include "engine/stats.h"
#include "lib/hist.h"
#include "verdict/gate.h"
#include "verdict/verdict.h"

/* What a judgement reads. Pointers are borrowed for the call. */
struct judge_figures {
    const struct counters *c;        /* sent, read, errors, sessions */
    const struct ledger_outcome *lo; /* the ledger's outcomes; NULL: a window the ledger did not judge
                                      * (a capacity step's): the gates alone, no verdict */
    const struct hist *lat;          /* LAT_COUNT histograms, or NULL */
    const struct err_count *err;     /* errors by class */
    unsigned nerr;
    int settled;                     /* 1 settled, 0 not, -1 no sweep was needed (or none ran) */
    int swept;                       /* a sweep ran */
    int interrupted;
    uint64_t senders, readers;       /* configured sessions */
    double elapsed_s;                /* the whole run */
    struct verdict_window send;
    double rate;                     /* smtp.rate as set (0: as fast as the senders go) */
    double sweep_timeout_s, settle_s;
    /* Arrivals of the schedule the tester held back (started late for a busy sender
     * or a late engine, or never started), of those due. */
    uint64_t held, due;
    /* "kept up" (verdict/keptup.h): the backlog may grow by this share of the
     * accepted rate over send's samples (capacity.queue_growth) */
    double growth_share;
    const struct recovery_spike *spikes;   /* a profile's spikes, for gate.recovery (verdict/recovery.h) */
    unsigned nspikes;
    /* What decides the run's status beside its gates: the run was stopped by a
     * signal (signalled; signal its number), and smtp.size_dist = ladder's rungs
     * that lost or corrupted accepted mail. A merged load and a window have none. */
    int signalled, signal;
    unsigned ladder_failures;
};

/* Whether the tester held the load back: more than 1 arrival in 1000 due was late
 * or never started. Then the figures are the tester's, not the server's. */
int judge_held_back(uint64_t held, uint64_t due);

/* Whether the mail clients' checks (pop3.poll_interval) were the tester's: more than
 * 1 in 100 began over a second late, every reader busy. Then the login rate
 * achieved is the tester's, not the profile's. */
int judge_readers_late(uint64_t late, uint64_t checks);
/* Whether delivery latency measured the readers rather than the server: when the
 * senders stopped, more mail waited unread than the readers take in one round
 * (readers x per_session) while the server's queue, where it was counted (queued
 * >= 0), held under a tenth of it: the mail sat in mailboxes waiting for a reader. */
int judge_readers_bound(uint64_t unread, long long queued, uint64_t readers, uint64_t per_session);

/* Judges f against g: every gate into gates (freed by gate_judgement_free), the
 * verdict into verdict when f->lo is set (verdict may be NULL then too). "Kept up"
 * is judged over f->send's samples, after the other gates have said whether the
 * server kept the readers waiting (a pop3.* gate failed: then a growing backlog is
 * the server's, whatever the readers did). The gates' exit status goes into
 * gates->exit_status: 0, MS_EXIT_GATE_INTEGRITY or MS_EXIT_GATE_QOS. Returns the
 * run's: the gates', but MS_EXIT_SIGNAL + the signal when one stopped it, whatever
 * the gates said, and MS_EXIT_GATE_INTEGRITY when a ladder's rung failed. */
int judge(const struct gates *g, const struct judge_figures *f, struct gate_judgement *gates,
          struct run_verdict *verdict);

#endif
