/* sweep: the settle rule and the sweep's proof, the one place that decides when a
 * complete visit of a mailbox can prove a message lost. The sweep reads, in passes,
 * the mailboxes that still owe mail once the drain is over. A pass proves what it
 * did not find only when it began after the mailboxes had been quiet for `settle`
 * (no pass found new mail since), found no new mail itself, and the server's queue
 * could no longer change a verdict at its start and at its end.
 *
 * A copy the server delivers again (after a lost final reply, say) lands in a
 * mailbox whose first copy was read: one that owes nothing, which the drain and the
 * passes over owing mailboxes never open. So the passes that can end the sweep, one
 * that begins with nothing owed (the closing pass) and one that began after the
 * server settled (it may prove), are full: they visit every mailbox the run sent
 * mail to, and such a copy is read as a duplicate. The other passes stay on the
 * owing mailboxes, to follow late mail quickly; nothing owed ends the sweep only
 * after a full pass, so every sweep ends with one unless its time runs out.
 *
 * Pure decisions: the controller passes what it saw (the time, the sweep sessions'
 * gains, whether the pass is over, the owed count, the queue as a callback) and
 * carries out the decision (a new pass, the end); nothing here reads a clock, an
 * atomic, a file or a socket, so tests/unit/test_sweep.c drives it step by step. */
#ifndef MS_VERDICT_SWEEP_H
#define MS_VERDICT_SWEEP_H

#include <stdint.h>

struct sweep_rule {
    uint64_t settle;                 /* ns the mailboxes must stay quiet before a pass can prove */
    uint64_t timeout;                /* ns the sweep may take in all */
    int full;                        /* full passes as above; 0: only owing mailboxes (the fill's verification) */
};

/* What the controller sees at one step of the sweep. */
struct sweep_seen {
    uint64_t now;                    /* monotonic ns */
    uint64_t gains;                  /* first retrievals of our mail by sweep sessions, so far */
    int pass_done;                   /* the cursor passed every user and no sweep session holds one */
    int64_t owed;                    /* accepted entries not yet read */
    /* Whether the server's queue can no longer change a verdict (read per message:
     * always, having marked what it holds; counted only: empty). fresh: a pass
     * starts, the previous marks are cleared. Called only when the answer matters:
     * reading a queue per message opens every queued file. */
    int (*queue_settled)(void *arg, int fresh);
    void *arg;
};

struct sweep {
    struct sweep_rule rule;
    uint64_t start;                  /* when the sweep began */
    uint64_t pass_start;             /* when the current pass began */
    uint64_t quiet_since;            /* end of the last pass that found new mail (or the sweep's start) */
    uint64_t gains;                  /* seen->gains when the current pass began */
    uint32_t pass;                   /* the current pass, from 1 */
    uint32_t proof_pass;             /* the pass that proves (0: none) */
    int qualifies;                   /* the current pass began after the server settled */
    int ended;                       /* the current pass ended and proved nothing */
    int full;                        /* the current pass visits every mailbox that was sent mail */
};

enum sweep_next {
    SWEEP_ON,                        /* keep sweeping */
    SWEEP_NEW_PASS,                  /* publish sw->pass to the readers and rewind the cursor */
    SWEEP_DONE,                      /* stop: proof_pass says whether a pass proves */
};

/* The drain is over (with rule->full, also when nothing is owed: the closing pass):
 * the sweep begins with pass 1 (publish it and sw->full as for SWEEP_NEW_PASS).
 * Mail may have arrived unseen until now, so the quiet period starts now. */
void sweep_begin(struct sweep *sw, const struct sweep_rule *rule, const struct sweep_seen *s);
/* One step (the controller's, every 20 ms or so). A pass that found new mail, or
 * began too early, proves nothing: another follows, at most one a second (sooner
 * when settle is shorter), until one proves, a full pass (or, without rule.full,
 * any) ends with nothing owed, or the time is up. */
enum sweep_next sweep_step(struct sweep *sw, const struct sweep_seen *s);
/* At the end of the run, once the readers stopped: the proving pass (0: none).
 * A sweep cut short by its time (in_sweep: the run stopped in the sweep, not on a
 * signal) proves with what the current pass read of the mailboxes it visited in
 * full, provided that pass qualified and met no new mail. */
uint32_t sweep_conclude(struct sweep *sw, const struct sweep_seen *s, int in_sweep);

#endif
