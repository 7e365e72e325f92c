/* stage_end: when a stage of smtp.profile is decided (include/verdict/stage_end.h). */
#include "verdict/stage_end.h"

#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

void stage_end_init(struct stage_end *s) { memset(s, 0, sizeof *s); }

double level_backlog(enum level_series s, int has_spool, double spool, double unread, double *queue)
{
    if (has_spool)
        *queue = spool;
    return s == LEVEL_QUEUE ? *queue : unread;
}

double stage_end_backlog(struct stage_end *s, int has_spool, double spool, double unread)
{
    if (!s->series_known) {
        s->series_known = 1;
        s->series = has_spool ? LEVEL_QUEUE : LEVEL_BACKLOG;
    }
    return level_backlog(s->series, has_spool, spool, unread, &s->queue);
}

void stage_end_free(struct stage_end *s)
{
    free(s->p);
    free(s->all);
    memset(s, 0, sizeof *s);
}

static void add(struct stage_end *s, struct drift_point pt)
{
    s->p = grow(s->p, &s->cap, s->n, 1, sizeof *s->p);
    s->p[s->n++] = pt;
}

static void add_all(struct stage_end *s, struct drift_point pt)
{
    s->all = grow(s->all, &s->allcap, s->nall, 1, sizeof *s->all);
    s->all[s->nall++] = pt;
}

enum stage_end_act stage_end_step(struct stage_end *s, const struct stage_end_rules *r, const double *t0,
                                  const double *t1, const double *planned, unsigned n, const struct drift_point *pt,
                                  unsigned *which, struct drift_result *res)
{
    double a = s->last_t, ua = s->last_unread;
    s->last_t = pt->t;
    s->last_unread = pt->unread;
    if (!s->nall)
        add_all(s, (struct drift_point){ .t = 0, .unread = 0 });
    add_all(s, *pt);
    memset(res, 0, sizeof *res);
    /* past the stage's end: the next stage's, or none's */
    while (s->cur < n && pt->t > t1[s->cur] + r->tol_s) {
        s->cur++;
        s->n = 0;
    }
    if (s->cur >= n || a < t0[s->cur] - r->tol_s)
        return STAGE_GO_ON;          /* begun before the stage: neither stage's */
    unsigned k = s->cur;
    if (!s->n) {
        add(s, (struct drift_point){ .t = a, .unread = ua });
        if (k > r->first)
            s->swing = drift_swing_kept(s->all, s->nall, t0[k - 1], t0[k], r->dr.share, s->swing);
    }
    add(s, *pt);
    if (k < r->first)
        return STAGE_GO_ON;
    struct drift_rules dr = r->dr;
    dr.cap_s = planned[k];
    dr.swing = s->swing;
    drift_sprt(&dr, s->p, s->n, r->v, res);
    if (res->d != DRIFT_KEPT_UP && res->d != DRIFT_BEHIND)
        return STAGE_GO_ON;
    *which = k;
    s->n = 0;
    s->cur = res->d == DRIFT_KEPT_UP ? k + 1 : n;
    return res->d == DRIFT_KEPT_UP ? STAGE_NEXT : STAGE_STOP;
}
