/* stair_judge: a staircase run's levels judged from its result, the sessions the
 * next run takes when the tester limited one, and the settings a run starts with
 * (include/capacity/stair_judge.h). */
#include "capacity/stair_judge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity/level.h"
#include "lib/alloc.h"
#include "lib/hist.h"
#include "result/result.h"

/* A level's span in its run (s since the start): its stage's as the run wrote it
 * (smtp.profile_end = decided ends a decided stage early, and a stage after one
 * decided behind never runs: t0 = t1), else as planned. */
static void level_span(const struct result *r, int read, const struct stair_run_record *rr, unsigned i, double *t0,
                       double *t1)
{
    unsigned st = i + (rr->lead_s > 0);
    *t0 = rr->lead_s + rr->level_s * i;
    *t1 = rr->lead_s + rr->level_s * (i + 1);
    if (read && st < r->nstages && r->stages[st].t1 >= r->stages[st].t0) {
        *t0 = r->stages[st].t0;
        *t1 = r->stages[st].t1;
    }
}

/* 1 << FIX_READERS when more readers were shown to read no more than fewer did
 * (step_fix_futile, as a step's rerun): this run's, where the run before it had
 * fewer and a level they limited, or any later run's with as many or more. Mail
 * left in the mailboxes is then the server's (its POP3 side's), and more readers
 * would only load it further. The fewer's level may be of another rate: the rerun
 * starts below it when levels below were open, and more readers reading less at a
 * lower rate than fewer read at a higher one is the same evidence (a testbed's 40,
 * then 80, readers read 159 and 147 msg/s where 20 had read 170). The proof (in
 * c->futile) stands for the rest of the search: readers that read no more when
 * there were more are waiting on the server, at any rate (a testbed's 48, shown no
 * better than 35, fell behind again at a lower rate and grew twice more). */
static unsigned readers_ruled_out(struct stair_record *c, const struct stair_run_record *rr, double delivered,
                                  double rate)
{
    if (c->futile.more && rr->readers >= c->futile.more)
        return 1u << FIX_READERS;
    if (c->nruns < 2)
        return 0;
    const struct stair_run_record *prev = &c->runs[c->nruns - 2];
    if (prev->readers >= rr->readers)
        return 0;
    double most = -1;
    for (size_t i = 0; i < c->nlevels; i++) {
        const struct stair_level_record *o = &c->levels[i];
        if (o->run == prev->n && o->read && o->lj.out == LEVEL_INVALID && o->lj.j.fix == FIX_READERS)
            most = fmax(most, o->read_rate);
    }
    struct step_figures before = { .delivered = most }, after = { .delivered = delivered };
    if (!(most >= 0) || !step_fix_futile(FIX_READERS, &before, prev->readers, &after, rr->readers))
        return 0;
    c->futile.more = rr->readers;
    c->futile.fewer = prev->readers;
    c->futile.run = rr->n;
    c->futile.rate = rate;
    return 1u << FIX_READERS;
}

unsigned stair_judge_run(struct stair_record *c, const struct step_rules *rules, const struct stair_run *run,
                         struct stair_run_record *rr, double tol_s, enum level_outcome *out, double *delivered)
{
    char err[300], why[300];
    struct result r;
    int read = result_load(&r, rr->json, why, sizeof why) == 0;
    struct drift_rules dr = c->dr;
    struct step_rules rl = *rules;
    dr.cap_s = rr->level_s;
    /* a probe asks its coarser question of the readers too: whether a growth of
     * that size was theirs */
    if (run->kind == RUN_PROBE)
        dr.share = rl.queue_growth = stair_probe_share(dr.share);
    *delivered = 0;
    unsigned ran = 0;
    int limited_probe = 0;
    /* the swing of the series the levels are judged on (level.h), and of the
     * backlog for a level whose mail in the mailboxes is the server's, in the last
     * level before that kept up, carried level by level as the run carried it when
     * it ended each (verdict/stage_end.c) */
    struct drift_point *all[2] = { NULL, NULL };
    enum level_series series = read ? level_series_of(&r) : LEVEL_BACKLOG;
    unsigned nall[2] = { 0, 0 };
    for (int k = 0; read && k <= (int)series; k++)
        nall[k] = level_points(&r, (enum level_series)k, 0, INFINITY, &all[k]);
    double swing[2] = { 0, 0 }, limited = 0;
    for (unsigned i = 0; i < run->n; i++) {
        double t0, t1;
        level_span(&r, read, rr, i, &t0, &t1);
        if (i > 0 && !(t1 > t0))
            break;                   /* the run ended before it */
        c->levels = grow(c->levels, &c->levels_cap, c->nlevels, 1, sizeof *c->levels);
        struct stair_level_record *l = &c->levels[c->nlevels++];
        memset(l, 0, sizeof *l);
        l->run = rr->n;
        l->kind = run->kind;
        l->rate = run->rate[i];
        l->t0 = t0;
        l->t1 = t1;
        for (int k = 0; i > 0 && k <= (int)series; k++)
            swing[k] = drift_swing_kept(all[k], nall[k], l[-1].t0, l->t0, dr.share, swing[k]);
        struct step_figures f;
        if (!read) {
            l->lj.out = LEVEL_INVALID;
            snprintf(l->lj.why, sizeof l->lj.why, "its run (exit %d) wrote no result: %.150s", rr->exit_status, why);
        } else if (step_read_span(&r, l->t0 - tol_s, l->t1 + tol_s, &f, err, sizeof err) < 0) {
            l->lj.out = LEVEL_INVALID;
            snprintf(l->lj.why, sizeof l->lj.why, "its result: %.200s", err);
        } else {
            struct drift_point *p;
            l->own_ledger = level_ledger(&r, i + (rr->lead_s > 0), &f) == 0;
            unsigned n = level_points(&r, series, l->t0 - tol_s, l->t1 + tol_s, &p);
            struct drift_rules dl = dr;
            dl.swing = swing[series];
            void (*judge)(const struct step_rules *, const struct drift_rules *, enum drift_variance, unsigned,
                          const struct step_figures *, enum level_series, const struct drift_point *, unsigned,
                          struct level_judgement *) =
                run->kind == RUN_CONFIRM ? level_judge_confirm : level_judge;
            judge(&rl, &dl, DRIFT_VAR_BATCH, 0, &f, series, p, n, &l->lj);
            int on_queue = series == LEVEL_QUEUE;
            /* judged again as the server's when its readers fell behind and more
             * of them were shown to read no more: on the whole backlog, the mail
             * waiting in the mailboxes the server's too */
            unsigned ro = 0;
            if (l->lj.out == LEVEL_INVALID && l->lj.j.fix == FIX_READERS &&
                (ro = readers_ruled_out(c, rr, f.delivered, l->rate))) {
                free(p);
                n = level_points(&r, LEVEL_BACKLOG, l->t0 - tol_s, l->t1 + tol_s, &p);
                dl.swing = swing[LEVEL_BACKLOG];
                judge(&rl, &dl, DRIFT_VAR_BATCH, ro, &f, LEVEL_BACKLOG, p, n, &l->lj);
                on_queue = 0;
            }
            if (ro && (l->lj.out == LEVEL_FAIL || l->lj.out == LEVEL_OPEN)) {
                size_t w = strlen(l->lj.why);
                if (c->futile.run == rr->n)
                    snprintf(l->lj.why + w, sizeof l->lj.why - w, " (%u readers read no more than %u: the server's)",
                             c->futile.more, c->futile.fewer);
                else
                    snprintf(l->lj.why + w, sizeof l->lj.why - w, " (%u readers; %u read no more than %u at %.1f msg/s "
                             "in run %u: the server's)", rr->readers, c->futile.more, c->futile.fewer,
                             c->futile.rate, c->futile.run);
            }
            free(p);
            /* a level after one whose readers fell behind starts with the
             * mail they left (no drain between levels): its backlog is partly theirs,
             * so it is not judged (the search keeps only the levels before the
             * limited one, stair_keep_before_invalid) */
            if (limited > 0 && run->kind != RUN_CONFIRM) {
                l->lj.out = LEVEL_INVALID;
                l->lj.j.fix = FIX_NONE;
                snprintf(l->lj.why, sizeof l->lj.why, "not judged: it began with the mail the readers left behind at "
                         "%.1f msg/s", limited);
            }
            l->read = 1;
            l->offered = f.offered;
            l->accepted = f.accepted;
            l->read_rate = f.delivered;
            l->delivered = step_server_delivered(&f, on_queue);
            l->delivery_p95_ms = (double)hist_percentile(&f.lat[LAT_DELIVERY], 95) / 1e6;
            l->lost = f.lost;
            l->duplicated = f.duplicated;
            l->corrupted = f.corrupted;
            l->pending = f.pending;
            rr->message_s = hist_mean(&f.lat[LAT_SMTP_MESSAGE]) / 1e9;
        }
        limited_probe |= l->lj.out == LEVEL_INVALID;
        struct step_figures half;
        if (run->kind == RUN_PROBE && !limited_probe &&
            step_read_span(&r, (l->t0 + l->t1) / 2 - tol_s, l->t1 + tol_s, &half, err, sizeof err) == 0)
            *delivered = fmax(*delivered, step_server_delivered(&half, series == LEVEL_QUEUE));
        if (l->lj.out == LEVEL_INVALID && l->lj.j.fix == FIX_READERS && !(limited > 0))
            limited = l->rate;
        out[ran++] = l->lj.out;
        stair_level_line(stderr, l);
    }
    free(all[0]);
    free(all[1]);
    if (read)
        result_free(&r);
    return ran;
}

int stair_more_sessions(const struct stair_record *c, unsigned n, const enum level_outcome *out, unsigned max_senders,
                        unsigned max_readers, unsigned *senders, unsigned *readers, int *retries)
{
    const struct stair_level_record *l = NULL;
    for (unsigned i = 0; i < n && !l; i++)
        if (out[i] == LEVEL_INVALID && c->levels[c->nlevels - n + i].lj.j.fix != FIX_NONE)
            l = &c->levels[c->nlevels - n + i];
    enum step_fix fix = l ? l->lj.j.fix : FIX_NONE;
    if (fix == FIX_SENDERS && *senders < max_senders && *retries < 2) {
        *senders = 2 * *senders > max_senders ? max_senders : 2 * *senders;
        ++*retries;
        return 1;
    }
    if (fix == FIX_READERS && *readers < max_readers && *retries < 2) {
        unsigned need = step_readers_needed(l->accepted, l->read_rate, *readers);
        *readers = need > max_readers ? max_readers : need;
        ++*retries;
        return 1;
    }
    *retries = 0;
    return 0;
}

/* The lead-in: not judged (a run starts with no backlog, and its first seconds
 * fill the pipeline, mail accepted and not yet read, to its level: a growth that is
 * no trend). */
int stair_run_settings(const struct config *cfg, const struct stair_run *run, const struct stair_run_record *rr,
                       uint64_t lead, uint64_t level, uint64_t interval, int check, char (*kvs)[160], char *profile,
                       size_t profile_len, char **kv)
{
    const struct capacity_config *k = &cfg->capacity;
    size_t used = (size_t)snprintf(profile, profile_len, "smtp.profile=");
    if (lead)
        used += (size_t)snprintf(profile + used, profile_len - used, "%llums@%.6g,",
                                 (unsigned long long)(lead / 1000000), run->rate[0]);
    for (unsigned i = 0; i < run->n; i++)
        used += (size_t)snprintf(profile + used, profile_len - used, "%s%llums@%.6g", i ? "," : "",
                                 (unsigned long long)(level / 1000000), run->rate[i]);
    int n = 0;
    snprintf(kvs[n++], sizeof kvs[0], "smtp.arrivals=%s", k->arrivals ? "exponential" : "constant");
    snprintf(kvs[n++], sizeof kvs[0], "run.interval=%llums", (unsigned long long)(interval / 1000000));
    snprintf(kvs[n++], sizeof kvs[0], "smtp.senders=%u", rr->senders);
    snprintf(kvs[n++], sizeof kvs[0], "pop3.readers=%u", rr->readers);
    snprintf(kvs[n++], sizeof kvs[0], "pop3.visit=%s", k->visit_owed ? "owed" : "random");
    snprintf(kvs[n++], sizeof kvs[0], "run.messages=0");
    snprintf(kvs[n++], sizeof kvs[0], "run.drain=%llums", (unsigned long long)(k->drain / 1000000));
    snprintf(kvs[n++], sizeof kvs[0], "run.check=%s", check ? "yes" : "no");
    snprintf(kvs[n++], sizeof kvs[0], "run.label=%.100s", cfg->label[0] ? cfg->label : stair_kind_name(run->kind));
    snprintf(kvs[n++], sizeof kvs[0], "run.seed=%llu", (unsigned long long)(cfg->seed ? cfg->seed + rr->n : 0));
    snprintf(kvs[n++], sizeof kvs[0], "run.json=%.150s", rr->json);
    /* a level ends once decided (verdict/stage_end.h), the confirmation's too */
    snprintf(kvs[n++], sizeof kvs[0], "smtp.profile_end=decided");
    /* the run ends its probe by the probe's own test (stair_judge_run's) */
    if (run->kind == RUN_PROBE)
        snprintf(kvs[n++], sizeof kvs[0], "capacity.queue_growth=%.6g", stair_probe_share(k->queue_growth));
    for (int i = 0; i < n; i++)
        kv[i] = kvs[i];
    kv[n++] = profile;
    return n;
}
