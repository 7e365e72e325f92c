/* stair_judge: a staircase run's result read and each of its levels cut from it
 * and judged (capacity/level.h), their records added to the search's
 * (capacity/stair_output.h). A level's span is its stage's as the run wrote it: a
 * run with smtp.profile_end = decided ends a stage when its test decided, and one
 * decided behind ends the run, so the levels above it never ran. And, from those
 * records, what the search's next run takes when the tester limited a level: more
 * senders or readers. And the settings a run is started with, which make it so. */
#ifndef MS_CAPACITY_STAIR_JUDGE_H
#define MS_CAPACITY_STAIR_JUDGE_H

#include "capacity/stair.h"
#include "capacity/stair_output.h"
#include "capacity/step.h"
#include "settings/config.h"

/* A staircase run's result read, and each of its levels that ran into out[],
 * adding their records; *delivered is the most a probe's levels before any the
 * tester limited delivered, each over its second half (its first fills the
 * pipeline from the level before).
 * An interval is a level's when it began at most tol_s (half an interval) before the
 * level and ended at most tol_s after it, the rule the run ended its stages by
 * (verdict/stage_end.h). Returns how many levels ran: those after a level decided
 * behind did not. */
unsigned stair_judge_run(struct stair_record *c, const struct step_rules *rules, const struct stair_run *run,
                         struct stair_run_record *rr, double tol_s, enum level_outcome *out, double *delivered);

/* The settings a staircase run is started with (`mailsoak run --set`, kv[]
 * pointing into kvs and profile; the count): its levels as smtp.profile stages of
 * `level` ns behind a lead-in of `lead` ns at the first level's rate, each ended
 * once its test decided (smtp.profile_end = decided, the confirmation's too), the
 * search's arrivals, sessions and readers' visits, and a probe's growth bound
 * (stair_probe_share). */
#define STAIR_SETTINGS_MAX 16
#define STAIR_PROFILE_MAX ((STAIR_LEVELS_MAX + 1) * 32 + 16)
int stair_run_settings(const struct config *cfg, const struct stair_run *run, const struct stair_run_record *rr,
                       uint64_t lead, uint64_t level, uint64_t interval, int check, char (*kvs)[160], char *profile,
                       size_t profile_len, char **kv);

/* After a run whose level the tester limited (the first of its n levels in out[]
 * invalid for want of senders or readers): 1 when the search goes again from it
 * with more, twice the senders or the readers its rate takes by what its readers
 * read (step_readers_needed, as a step's: never doubled), at most twice in a row (*retries)
 * and within the maxima; else 0, and *retries starts again. */
int stair_more_sessions(const struct stair_record *c, unsigned n, const enum level_outcome *out, unsigned max_senders,
                        unsigned max_readers, unsigned *senders, unsigned *readers, int *retries);

#endif
