/* level: a staircase level cut from its run's timeline and judged (include/capacity/level.h). */
#include "capacity/level.h"

#include <stdio.h>
#include <string.h>

#include "lib/alloc.h"

int level_ledger(const struct result *r, unsigned stage, struct step_figures *f)
{
    const struct result_stage *st = stage < r->nstages ? &r->stages[stage] : NULL;
    if (!st || !st->has_accepted)
        return -1;
    f->sent = st->accepted;
    f->lost = st->lost;
    f->duplicated = st->duplicated;
    f->corrupted = st->corrupted;
    f->pending = st->pending;
    return 0;
}

const char *const level_series_names[] = { "the backlog", "the server's queue" };

enum level_series level_series_of(const struct result *r)
{
    for (size_t i = 0; i < r->nintervals; i++)
        if (!strcmp(r->intervals[i].phase, "send"))
            return r->intervals[i].has_spool ? LEVEL_QUEUE : LEVEL_BACKLOG;
    return LEVEL_BACKLOG;
}

unsigned level_points(const struct result *r, enum level_series s, double start_s, double end_s,
                      struct drift_point **out)
{
    size_t n = r->nintervals;
    struct drift_point *p = xcalloc(n + 1, sizeof *p);
    unsigned np = 0;
    double prev_t = 0, prev_u = 0, queue = 0;
    for (size_t i = 0; i < n; i++) {
        const struct result_interval *e = &r->intervals[i];
        double te = e->t, u = level_backlog(s, e->has_spool, e->spool, (double)e->unread, &queue);
        if (!strcmp(e->phase, "send") && prev_t >= start_s - 1e-6 && te <= end_s + 1e-6) {
            if (np == 0)
                p[np++] = (struct drift_point){ .t = prev_t, .unread = prev_u };
            const struct result_latency *d = &e->lat[LAT_DELIVERY];
            p[np++] = (struct drift_point){
                .t = te,
                .accepted = (double)e->c.sent,
                .read = (double)e->c.read,
                .unread = u,
                .lat_n = (double)d->count,
                .lat_mean = d->mean / 1000,
            };
        }
        prev_t = te;
        prev_u = u;
    }
    *out = p;
    return np;
}

/* The gates and the tester's limits over the level; 1 when they decided it
 * (invalid, or a gate failed). */
static int level_gates(const struct step_rules *r, unsigned ruled_out, const struct step_figures *f,
                       enum level_series s, struct level_judgement *lj)
{
    memset(lj, 0, sizeof *lj);
    /* the backlog's growth is the sequential test's, and a level's length is its
     * cap, not a window to lengthen; whose growth it is, the server's or our
     * readers', is asked as of a step and a plain run, but of a level judged on
     * the queue only where a gate failed */
    unsigned how = 1u << FIX_WINDOW | STEP_GROWTH_ELSEWHERE | (s == LEVEL_QUEUE ? STEP_READERS_BY_GATES : 0);
    step_judge(r, f, ruled_out | how, &lj->j);
    if (lj->j.verdict == STEP_INVALID) {
        lj->out = LEVEL_INVALID;
        snprintf(lj->why, sizeof lj->why, "%s", lj->j.why);
        return 1;
    }
    if (lj->j.first_failed >= 0) {
        char b[200];
        lj->out = LEVEL_FAIL;
        snprintf(lj->why, sizeof lj->why, "%s", step_check_describe(&lj->j.v[lj->j.first_failed], b, sizeof b));
        return 1;
    }
    return 0;
}

void level_judge(const struct step_rules *r, const struct drift_rules *dr, enum drift_variance v, unsigned ruled_out,
                 const struct step_figures *f, enum level_series s, const struct drift_point *p, unsigned n,
                 struct level_judgement *lj)
{
    const char *what = level_series_names[s];
    if (level_gates(r, ruled_out, f, s, lj)) {
        if (lj->out == LEVEL_FAIL)
            drift_sprt(dr, p, n, v, &lj->kept);
        return;
    }
    drift_sprt(dr, p, n, v, &lj->kept);
    switch (lj->kept.d) {
    case DRIFT_BEHIND:
        lj->out = LEVEL_FAIL;
        snprintf(lj->why, sizeof lj->why, "behind: %s grew by %.2f msg/s (bound %.2f), decided in %.0f s", what,
                 lj->kept.value, 2 * lj->kept.bound, lj->kept.at_s);
        break;
    case DRIFT_KEPT_UP:
        lj->out = LEVEL_PASS;
        snprintf(lj->why, sizeof lj->why, "kept up: %s grew by %.2f msg/s, decided in %.0f s", what, lj->kept.value,
                 lj->kept.at_s);
        break;
    default:
        lj->out = LEVEL_OPEN;
        snprintf(lj->why, sizeof lj->why, "open: %s grew by %.2f msg/s in %.0f s, neither bound reached", what,
                 lj->kept.value, lj->kept.at_s);
        break;
    }
    /* Judged on the queue, mail outside it may grow past the bound and the level
     * pass where its delivery gate did: our readers' pace, or mail the server keeps
     * where [server] spool_dir does not look (a second queue, an LMTP backend's),
     * which its "delivered" would then overstate. Said, so a reader can tell. */
    double outside = f->unread_slope - (f->has_spool ? f->spool_slope : 0);
    if (s == LEVEL_QUEUE && lj->out == LEVEL_PASS && outside > dr->share * f->accepted) {
        size_t len = strlen(lj->why);
        snprintf(lj->why + len, sizeof lj->why - len, "; mail outside the queue grew %.2f msg/s (our readers', or "
                 "a queue spool_dir misses)", outside);
    }
}

void level_judge_confirm(const struct step_rules *r, const struct drift_rules *dr, enum drift_variance v,
                         unsigned ruled_out, const struct step_figures *f, enum level_series s,
                         const struct drift_point *p, unsigned n, struct level_judgement *lj)
{
    level_judge(r, dr, v, ruled_out, f, s, p, n, lj);
    if (lj->out != LEVEL_OPEN)
        return;
    lj->fixed = 1;
    drift_growth_z(dr, p, n, LEVEL_CONFIRM_Z, &lj->kept);
    if (lj->kept.d == DRIFT_BEHIND) {
        lj->out = LEVEL_FAIL;
        snprintf(lj->why, sizeof lj->why, "behind: %s grew by %.2f msg/s over %.0f s, %.1f standard errors "
                 "(bound %.2f msg/s)", level_series_names[s], lj->kept.value, lj->kept.at_s, lj->kept.z, lj->kept.bound);
    } else if (lj->kept.d == DRIFT_KEPT_UP) {
        lj->out = LEVEL_PASS;
        snprintf(lj->why, sizeof lj->why, "kept up: %s grew by %.2f msg/s over %.0f s, within its noise "
                 "(%.1f standard errors, bound %.2f msg/s)", level_series_names[s], lj->kept.value, lj->kept.at_s,
                 lj->kept.z, lj->kept.bound);
    } else {
        lj->out = LEVEL_INVALID;
        snprintf(lj->why, sizeof lj->why, "too few intervals to judge %s (%u)", level_series_names[s], n);
    }
}
