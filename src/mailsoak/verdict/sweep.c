/* sweep: the settle rule and the sweep's proof (include/verdict/sweep.h). The
 * controller (run/run.c) feeds it what it sees and carries out what it decides. */
#include "verdict/sweep.h"

#define NS_PER_S 1000000000ull

static void start_pass(struct sweep *sw, const struct sweep_seen *s)
{
    sw->pass++;
    sw->pass_start = s->now;
    sw->ended = 0;
    sw->gains = s->gains;
    int settled = s->queue_settled(s->arg, 1);     /* read at every pass start: fresh marks */
    sw->qualifies = s->now >= sw->quiet_since + sw->rule.settle && settled;
    /* the passes that can end the sweep look in every mailbox sent mail, for copies
     * delivered again where nothing is owed */
    sw->full = sw->rule.full && (sw->qualifies || s->owed <= 0);
}

/* The current pass proves what it did not find: it began after the server settled
 * and met no new mail, and the queue, read per message, marked what it still holds
 * (or, only counted, is empty). */
static int pass_proves(const struct sweep *sw, const struct sweep_seen *s)
{
    return sw->qualifies && s->gains == sw->gains && s->queue_settled(s->arg, 0);
}

void sweep_begin(struct sweep *sw, const struct sweep_rule *rule, const struct sweep_seen *s)
{
    *sw = (struct sweep){ .rule = *rule, .start = s->now, .quiet_since = s->now };
    start_pass(sw, s);
}

enum sweep_next sweep_step(struct sweep *sw, const struct sweep_seen *s)
{
    if (s->now - sw->start >= sw->rule.timeout)
        return SWEEP_DONE;
    if (!sw->ended) {
        if (!s->pass_done)
            return SWEEP_ON;
        if (pass_proves(sw, s)) {
            sw->proof_pass = sw->pass;
            return SWEEP_DONE;
        }
        sw->ended = 1;
        if (s->gains != sw->gains)
            sw->quiet_since = s->now;
        if (s->owed <= 0 && (sw->full || !sw->rule.full))
            return SWEEP_DONE;       /* everything was read: nothing to prove */
    }
    uint64_t gap = sw->rule.settle < NS_PER_S ? sw->rule.settle : NS_PER_S;
    if (s->now >= sw->pass_start + gap) {
        start_pass(sw, s);
        return SWEEP_NEW_PASS;
    }
    return SWEEP_ON;
}

uint32_t sweep_conclude(struct sweep *sw, const struct sweep_seen *s, int in_sweep)
{
    if (in_sweep && !sw->proof_pass && sw->pass && !sw->ended && pass_proves(sw, s))
        sw->proof_pass = sw->pass;
    return sw->proof_pass;
}
