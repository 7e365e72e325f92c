/* rerun: what a capacity search does once a step is judged (include/capacity/rerun.h). */
#include "capacity/rerun.h"

#include <stdio.h>

void rerun_init(struct rerun_state *s, const struct rerun_rules *r)
{
    *s = (struct rerun_state){ .window = r->window };
}

void rerun_sessions(const struct rerun_state *s, const struct rerun_rules *r, double rate, unsigned *senders,
                    unsigned *readers)
{
    *senders = search_need_at(&s->needs, rate, NEED_SENDERS, r->base_senders);
    *readers = search_need_at(&s->needs, rate, NEED_READERS, r->base_readers);
}

/* What the tester was shown not to lack at this rate: what the step before at the
 * same rate had shown, and, when this step ran again with more of what that one
 * lacked and the tester still limited it alike, what it added if that moved no more
 * mail (step_fix_futile); the later steps start without it. The step is then judged
 * again without it: as the server's, unless the tester still lacks something else. */
static void tester_or_server(struct rerun_state *s, const struct step_rules *rules, const struct step_record *prev,
                             struct step_record *st)
{
    if (!prev || !st->f || prev->rate != st->rate || !prev->f)
        return;
    st->ruled_out |= prev->ruled_out & ~(1u << FIX_WINDOW);   /* each step its own longer window */
    enum step_fix fix = prev->j.verdict == STEP_INVALID ? prev->j.fix : FIX_NONE;
    if (fix != FIX_NONE && st->j.verdict == STEP_INVALID && st->j.fix == fix &&
        step_fix_futile(fix, prev->f, fix == FIX_SENDERS ? prev->senders : prev->readers, st->f,
                        fix == FIX_SENDERS ? st->senders : st->readers)) {
        st->ruled_out |= 1u << fix;
        search_need_futile(&s->needs, st->rate, fix == FIX_SENDERS ? NEED_SENDERS : NEED_READERS,
                           fix == FIX_SENDERS ? prev->senders : prev->readers);
    }
    if (st->ruled_out)
        step_judge(rules, st->f, st->ruled_out, &st->j);
}

enum rerun_action rerun_next(const struct rerun_rules *r, struct rerun_state *s, const struct step_rules *rules,
                             const struct step_record *prev, struct step_record *st, char *why, size_t n)
{
    tester_or_server(s, rules, prev, st);
    int longer = s->window < r->window_max && s->retries < RERUN_RETRIES;
    if (st->f && st->j.verdict == STEP_INVALID && st->j.fix == FIX_WINDOW && !longer) {
        /* the longest window the search runs: its trend, whatever its halves did */
        st->ruled_out |= 1u << FIX_WINDOW;
        step_judge(rules, st->f, st->ruled_out, &st->j);
    }
    if (st->j.verdict == STEP_INVALID && st->j.fix == FIX_WINDOW) {
        s->window = 2 * s->window < r->window_max ? 2 * s->window : r->window_max;
        s->retries++;
        return RERUN_WINDOW;
    }
    if (st->j.verdict == STEP_INVALID) {
        /* the tester limited the step: more of what it lacked, the same rate again */
        enum step_fix fix = st->j.fix;
        unsigned what = fix == FIX_SENDERS ? st->senders : fix == FIX_READERS ? st->readers : 0;
        uint64_t max = fix == FIX_SENDERS ? r->max_senders : r->max_readers;
        if ((fix == FIX_SENDERS || fix == FIX_READERS) && st->f && what < max && s->retries < RERUN_RETRIES) {
            unsigned more = fix == FIX_SENDERS ? what * 2 : step_readers_needed(st->f->accepted, st->f->delivered, what);
            search_need(&s->needs, st->rate, fix == FIX_SENDERS ? NEED_SENDERS : NEED_READERS,
                        more > max ? (unsigned)max : more);
            s->retries++;
            return RERUN_MORE;
        }
        snprintf(why, n, "the tester limited the step at %.1f msg/s: %s", st->rate, st->j.why);
        return RERUN_STOP;
    }
    s->retries = 0;
    s->window = r->window;
    return RERUN_JUDGED;
}
