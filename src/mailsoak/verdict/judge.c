/* judge: the gates, the verdict and the exit status from one struct of figures
 * (include/verdict/judge.h). */
#include "verdict/judge.h"

#include <string.h>

#include "lib/exitcodes.h"

int judge_held_back(uint64_t held, uint64_t due)
{
    return held > 0 && held * 1000 > due;
}

int judge_readers_late(uint64_t late, uint64_t checks)
{
    return late * 100 > checks;
}

int judge_readers_bound(uint64_t unread, long long queued, uint64_t readers, uint64_t per_session)
{
    return readers && unread > readers * per_session && (queued < 0 || (uint64_t)queued * 10 < unread);
}

int judge(const struct gates *g, const struct judge_figures *f, struct gate_judgement *gates,
          struct run_verdict *verdict)
{
    struct gate_input gi = {
        .c = f->c, .lo = f->lo, .settled = f->settled, .senders = f->senders, .readers = f->readers,
        .lat = f->lat, .err = f->err, .nerr = f->nerr, .spikes = f->spikes, .nspikes = f->nspikes,
    };
    gate_judge(g, &gi, gates);
    int pop3_slow = 0;
    for (unsigned i = 0; i < gates->n; i++)
        pop3_slow |= !gates->v[i].pass && (!strncmp(gates->v[i].name, "pop3.", 5) ||
                                   !strncmp(gates->v[i].name, "imap.", 5));
    struct keptup_result kept;
    verdict_keptup(&f->send, f->growth_share, pop3_slow, &kept);
    if (kept.outcome != KEPTUP_UNKNOWN) {   /* judged again with it */
        gate_judgement_free(gates);
        gi.kept = &kept;
        gate_judge(g, &gi, gates);
    }
    if (f->lo && verdict) {
        struct verdict_input vi = {
            .c = f->c, .lo = f->lo, .settled = f->settled, .swept = f->swept, .interrupted = f->interrupted,
            .senders = f->senders, .readers = f->readers, .elapsed_s = f->elapsed_s, .send = f->send,
            .rate = f->rate, .sweep_timeout_s = f->sweep_timeout_s, .settle_s = f->settle_s,
            .tester_limited = judge_held_back(f->held, f->due), .err = f->err, .nerr = f->nerr, .gates = gates,
            .kept = &kept,
        };
        verdict_make(&vi, verdict);
    }
    gates->exit_status = gate_exit_status(gates);
    if (f->signalled)
        return MS_EXIT_SIGNAL + f->signal;
    if (f->ladder_failures)
        return MS_EXIT_GATE_INTEGRITY;
    return gates->exit_status;
}
