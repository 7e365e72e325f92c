/* stair: the staircase search's state machine and its fit (include/capacity/stair.h). */
#include "capacity/stair.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/exitcodes.h"

const char *level_outcome_name(enum level_outcome o)
{
    switch (o) {
    case LEVEL_PASS: return "pass";
    case LEVEL_FAIL: return "fail";
    case LEVEL_OPEN: return "open";
    case LEVEL_INVALID: return "invalid";
    }
    return "?";
}

const char *stair_kind_name(enum stair_kind k)
{
    switch (k) {
    case RUN_PROBE: return "probe";
    case RUN_CLIMB: return "staircase";
    case RUN_REFINE: return "refine";
    case RUN_CONFIRM: return "confirm";
    case RUN_RETRY: return "retry";
    }
    return "?";
}

double stair_probe_share(double share) { return fmin(1, share * STAIR_PROBE_SHARE); }

void stair_init(struct stair *s, const struct stair_rules *r)
{
    memset(s, 0, sizeof *s);
    s->r = *r;
    if (!(s->r.step > 0))
        s->r.step = 0.04;
    if (!(s->r.factor > 1))
        s->r.factor = 2;
    s->probe = fmin(r->start, r->max_rate);
    s->confirmed = -1;
}

void stair_stop(struct stair *s, const char *why)
{
    if (s->done)
        return;
    s->done = 1;
    snprintf(s->end, sizeof s->end, "%s", why);
}

/* A level's load: the rate its arrivals offered where measured (a Poisson level
 * offers its rate give or take a few per cent, as much as the levels' spacing),
 * else the rate asked. The bracket, the band and the fit are of loads. A refuting
 * confirmation level counts at no more than the rate it asked, the claim's share:
 * the claim is refuted, and a level that passed at a load between would be
 * claimed again. */
static double load(const struct stair_level *l)
{
    double x = l->offered > 0 ? l->offered : l->rate;
    return l->searched ? fmin(x, l->rate) : x;
}

/* Whether a level is only a confirmation's (or a probe's), not one of the search's
 * own: a refuting confirmation level became one (reclaim). */
static int aside(const struct stair_level *l)
{
    return l->kind == RUN_PROBE || (l->kind == RUN_CONFIRM && !l->searched);
}

/* How often a rate was run by the search's levels (probes and the confirmation
 * aside, and the levels the tester limited), and how often it passed and failed. */
static void tries(const struct stair *s, double rate, unsigned *runs, unsigned *pass, unsigned *fail)
{
    *runs = *pass = *fail = 0;
    for (unsigned i = 0; i < s->n; i++) {
        const struct stair_level *l = &s->v[i];
        if (aside(l) || l->out == LEVEL_INVALID || l->rate != rate)
            continue;
        (*runs)++;
        *pass += l->out == LEVEL_PASS;
        *fail += l->out == LEVEL_FAIL;
    }
}

/* Whether level l stands as the outcome o it had. A rate tried more than once is
 * classified by the majority of its decided trials, as RFC 9971 (MLRsearch)
 * classifies a load by the share of its trials that failed (its goal exceed ratio,
 * one half in CSIT): a surge of the server's queue can fail one level at a rate it
 * sustains, and the rate's other trials outvote it. A rate whose trials are tied
 * stands as neither until it is tried again (retry_disputed). */
static int stands(const struct stair *s, const struct stair_level *l, enum level_outcome o)
{
    if (aside(l) || l->out != o)
        return 0;
    unsigned runs, pass, fail;
    tries(s, l->rate, &runs, &pass, &fail);
    return o == LEVEL_PASS ? pass > fail : fail > pass;
}

double stair_pass_max(const struct stair *s)
{
    double m = 0;
    for (unsigned i = 0; i < s->n; i++)
        if (stands(s, &s->v[i], LEVEL_PASS) && load(&s->v[i]) > m)
            m = load(&s->v[i]);
    return m;
}

/* The lowest level that stands failed, or NULL. */
static const struct stair_level *lowest_failure(const struct stair *s)
{
    const struct stair_level *f = NULL;
    for (unsigned i = 0; i < s->n; i++)
        if (stands(s, &s->v[i], LEVEL_FAIL) && (!f || load(&s->v[i]) < load(f)))
            f = &s->v[i];
    return f;
}

double stair_fail_min(const struct stair *s)
{
    const struct stair_level *f = lowest_failure(s);
    return f ? load(f) : 0;
}

unsigned stair_disputes(const struct stair *s, struct stair_dispute *d, unsigned max)
{
    unsigned n = 0;
    for (unsigned i = 0; i < s->n && n < max; i++) {
        const struct stair_level *l = &s->v[i];
        unsigned runs, pass, fail, seen = 0;
        if (aside(l))
            continue;
        tries(s, l->rate, &runs, &pass, &fail);
        for (unsigned k = 0; k < n; k++)
            seen |= d[k].rate == l->rate;
        if (pass && fail && !seen)
            d[n++] = (struct stair_dispute){ l->rate, pass, fail };
    }
    for (unsigned i = 1; i < n; i++)
        for (unsigned k = i; k > 0 && d[k].rate < d[k - 1].rate; k--) {
            struct stair_dispute t = d[k];
            d[k] = d[k - 1];
            d[k - 1] = t;
        }
    return n;
}

/* The level of the relevant lower bound, or NULL. */
static const struct stair_level *lower_bound(const struct stair *s)
{
    double f = stair_fail_min(s);
    const struct stair_level *b = NULL;
    for (unsigned i = 0; i < s->n; i++) {
        const struct stair_level *l = &s->v[i];
        if (stands(s, l, LEVEL_PASS) && (f == 0 || load(l) < f) && (!b || load(l) > load(b)))
            b = l;
    }
    return b;
}

double stair_lower_bound(const struct stair *s)
{
    const struct stair_level *b = lower_bound(s);
    return b ? load(b) : 0;
}

double stair_capacity(const struct stair *s)
{
    const struct stair_level *b = lower_bound(s);
    /* never above the load it kept up with: with no drain between levels, a level
     * can read the one before's backlog on top of its own mail (MLRsearch's
     * conditional throughput is the bound's load times one less its loss ratio) */
    return !b ? 0 : b->delivered > 0 ? fmin(b->delivered, load(b)) : load(b);
}

void stair_band(const struct stair *s, double *lo, double *hi)
{
    *lo = *hi = 0;
    double pass = stair_lower_bound(s), fail = stair_fail_min(s);
    for (unsigned i = 0; i < s->n; i++) {
        unsigned runs, passed, failed;
        if (aside(&s->v[i]) || s->v[i].out != LEVEL_OPEN ||
            load(&s->v[i]) <= pass || (fail > 0 && load(&s->v[i]) >= fail))
            continue;
        tries(s, s->v[i].rate, &runs, &passed, &failed);
        if (passed || failed)
            continue;
        if (*lo == 0 || load(&s->v[i]) < *lo)
            *lo = load(&s->v[i]);
        if (load(&s->v[i]) > *hi)
            *hi = load(&s->v[i]);
    }
}

/* Levels from lo upwards, step apart, the last at or above hi, at most max_rate. */
static void climb(const struct stair *s, double lo, double hi, enum stair_kind kind, struct stair_run *run)
{
    run->kind = kind;
    run->n = 0;
    for (double x = lo; run->n < STAIR_LEVELS_MAX && x <= s->r.max_rate * (1 + 1e-9); x *= 1 + s->r.step) {
        run->rate[run->n++] = x;
        if (x >= hi * (1 - 1e-9))
            break;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Whether a refinement asked for a rate inside (lo, hi) and its arrivals offered a
 * load outside [lo, hi] (a few per cent off the rate asked): it left the gap as it
 * was, and asking again would only repeat it. */
static int asked_inside(const struct stair *s, double lo, double hi)
{
    for (unsigned i = 0; i < s->n; i++) {
        const struct stair_level *l = &s->v[i];
        if (l->kind == RUN_REFINE && l->out != LEVEL_INVALID && l->rate > lo && l->rate < hi &&
            (load(l) < lo || load(l) > hi))
            return 1;
    }
    return 0;
}

/* How many levels of the search (probes and the confirmation aside) were open. */
static unsigned opens(const struct stair *s)
{
    unsigned n = 0;
    for (unsigned i = 0; i < s->n; i++)
        n += !aside(&s->v[i]) && s->v[i].out == LEVEL_OPEN;
    return n;
}

/* The open levels between lo and hi (0: no bound) run once and never decided:
 * again, twice as long (RUN_RETRY). Inside a bracket (hi > 0), of more than two
 * only the middle one, a bisection: whichever way it is decided, half the others
 * are outside the new bracket, where a run of them all took up to two levels'
 * time each (the first to fall behind ended it). Once a retried level came back
 * open (the knee's band is there) the rest go in one run, ascending: bisecting on
 * would spend a run on each. 0 when there are none. */
static int retry_open(const struct stair *s, double lo, double hi, struct stair_run *run)
{
    run->kind = RUN_RETRY;
    run->n = 0;
    int open_again = 0;
    for (unsigned i = 0; i < s->n && run->n < STAIR_LEVELS_MAX; i++) {
        unsigned runs, pass, fail;
        const struct stair_level *l = &s->v[i];
        if (aside(l) || l->out != LEVEL_OPEN || load(l) <= lo || (hi > 0 && load(l) >= hi))
            continue;
        open_again |= l->kind == RUN_RETRY;
        tries(s, l->rate, &runs, &pass, &fail);
        if (runs == 1 && !pass && !fail)
            run->rate[run->n++] = l->rate;
    }
    if (!run->n)
        return 0;
    qsort(run->rate, run->n, sizeof *run->rate, cmp_double);
    if (hi > 0 && run->n > 2 && !open_again) {
        run->rate[0] = run->rate[(run->n - 1) / 2];
        run->n = 1;
    }
    return 1;
}

/* A rate whose trials are tied, once more (best of three; a third trial open or
 * limited leaves it tied, and it stands as neither); else the lowest failure, its
 * rate run once, once more before the claim
 * below it is confirmed (RUN_RETRY: twice as long). A level fails on a trend it
 * saw within its length, and a server's queue can surge for as long at a rate it
 * sustains; a second trial at that rate tells the surge from the knee, and costs
 * little where the rate is truly over it (the level ends once decided behind).
 * dispute_only: only the tied rates. 0 when there is none. */
static int retry_disputed(const struct stair *s, int dispute_only, struct stair_run *run)
{
    run->kind = RUN_RETRY;
    run->n = 0;
    unsigned pass, fail, runs;
    for (unsigned i = 0; i < s->n && !run->n; i++) {
        const struct stair_level *l = &s->v[i];
        if (aside(l))
            continue;
        tries(s, l->rate, &runs, &pass, &fail);
        if (pass && pass == fail && runs < 3)
            run->rate[run->n++] = l->rate;
    }
    const struct stair_level *f = lowest_failure(s);
    if (!run->n && !dispute_only && f) {
        tries(s, f->rate, &runs, &pass, &fail);
        if (runs == 1)
            run->rate[run->n++] = f->rate;
    }
    return run->n > 0;
}

/* SPECmail2001's 80, 100 and 120 % of the capacity claimed, but for the levels an
 * earlier try kept (stair_keep_before_invalid). */
static void confirmation(const struct stair *s, struct stair_run *run)
{
    double cap = stair_capacity(s), share[3] = { 0.8, 1, 1.2 };
    run->kind = RUN_CONFIRM;
    run->n = 3 - s->confirm_kept;
    for (unsigned i = 0; i < run->n; i++)
        run->rate[i] = share[s->confirm_kept + i] * cap;
}

void stair_next(const struct stair *s, struct stair_run *run)
{
    memset(run, 0, sizeof *run);
    if (s->done)
        return;
    if (s->probe > 0) {
        /* the probe's levels double in one run up to max_rate; the run ends at the
         * first that falls behind (smtp.profile_end = decided) */
        run->kind = RUN_PROBE;
        for (double x = s->probe; run->n < STAIR_LEVELS_MAX; x = fmin(x * s->r.factor, s->r.max_rate)) {
            run->rate[run->n++] = x;
            if (x >= s->r.max_rate * (1 - 1e-9))
                break;
        }
        return;
    }
    double pass = stair_lower_bound(s), fail = stair_fail_min(s), top = 1 + 2 * s->r.step;
    /* the last run the search may make is the confirmation's, when there is a
     * capacity to confirm: a search whose runs ran out on its staircases ended with
     * a claim nothing had tried at 80, 100 and 120 % */
    if (s->r.confirm && s->confirmed < 0 && pass > 0 && s->r.max_runs && s->runs + 1 >= s->r.max_runs) {
        confirmation(s, run);
        return;
    }
    if (retry_disputed(s, 1, run))
        return;
    if (pass == 0 && fail == 0) {
        /* the first staircase: from below what the probe delivered to above it;
         * one whose levels were all open, once more, twice as long; after that
         * nothing (the backlog too noisy to judge in capacity.level) */
        if (!retry_open(s, 0, 0, run) && !opens(s))
            climb(s, s->mrr * (1 - s->r.below), s->mrr * top, RUN_CLIMB, run);
        return;
    }
    if (pass == 0) {
        /* every level failed, or passed only above a failure: a staircase below the lowest */
        double lo = fail * (1 - s->r.below);
        climb(s, lo, fail / (1 + s->r.step), RUN_CLIMB, run);
        return;
    }
    if (fail == 0) {
        /* every level passed or was open: a staircase above the highest tried (open
         * levels count as tried; climbing from the highest pass ran the same open
         * levels again, and again, until the runs were used up) */
        double tried = pass;
        for (unsigned i = 0; i < s->n; i++)
            if (!aside(&s->v[i]) && s->v[i].out == LEVEL_OPEN)
                tried = fmax(tried, load(&s->v[i]));
        climb(s, tried * (1 + s->r.step), tried * (1 + s->r.below), RUN_CLIMB, run);
        return;
    }
    /* the widest gap between rates tried (open levels count as tried) from the
     * capacity (the highest pass below every failure) to the lowest failure:
     * refined where wider than the precision */
    double tried[STAIR_HISTORY_MAX + 2];
    unsigned k = 0;
    tried[k++] = pass;
    tried[k++] = fail;
    for (unsigned i = 0; i < s->n; i++)
        if (!aside(&s->v[i]) && s->v[i].out != LEVEL_INVALID && load(&s->v[i]) > tried[0] &&
            load(&s->v[i]) < tried[1])
            tried[k++] = load(&s->v[i]);
    qsort(tried, k, sizeof *tried, cmp_double);
    unsigned w = 0;
    for (unsigned i = 1; i + 1 < k; i++)
        if (tried[i + 1] / tried[i] > tried[w + 1] / tried[w])
            w = i;
    if (tried[w + 1] > tried[w] * (1 + s->r.precision) && !asked_inside(s, tried[w], tried[w + 1])) {
        /* levels precision apart inside the gap, its ends not run again */
        run->kind = RUN_REFINE;
        double g = tried[w + 1] / tried[w];
        unsigned m = (unsigned)ceil(log(g) / log(1 + s->r.precision)) - 1;
        if (m < 1)
            m = 1;
        if (m > STAIR_LEVELS_MAX)
            m = STAIR_LEVELS_MAX;
        for (unsigned i = 1; i <= m; i++)
            run->rate[run->n++] = tried[w] * pow(g, (double)i / (m + 1));
        return;
    }
    if (retry_open(s, pass, fail, run) || retry_disputed(s, 0, run))
        return;
    if (s->r.confirm && s->confirmed < 0)
        confirmation(s, run);
}

void stair_remaining(const struct stair *s, const struct stair_run *run, unsigned *runs, unsigned *levels)
{
    *runs = *levels = 0;
    if (run->kind == RUN_PROBE) {
        /* the first staircase: from (1 - below) to (1 + 2 step) of what the probe delivers */
        *runs += 1;
        *levels += (unsigned)ceil(log((1 + 2 * s->r.step) / (1 - s->r.below)) / log(1 + s->r.step)) + 1;
    }
    if (run->kind != RUN_CONFIRM && s->r.confirm) {
        *runs += 1;
        *levels += 6;
    }
}

void stair_delivered(struct stair *s, const double *delivered, unsigned n)
{
    for (unsigned i = 0; i < n && i < s->n; i++)
        s->v[s->n - n + i].delivered = delivered[i];
}

void stair_offered(struct stair *s, const double *offered, unsigned n)
{
    for (unsigned i = 0; i < n && i < s->n; i++)
        s->v[s->n - n + i].offered = offered[i];
}

/* The rate a level's outcome is fitted at: its load. */
static double fit_x(const struct stair_level *l) { return load(l); }

/* A probe's levels in order: the first that fell behind ends the probing, the most
 * any level delivered seeding the staircase; one the tester limited says nothing
 * of the server and the levels after it began with what it left, so the probe goes
 * again from it, a few times; one at max_rate that did not fall behind ends the
 * search; else the probe goes on above its last level. */
static void probe_result(struct stair *s, const struct stair_run *run, const enum level_outcome *out, double delivered)
{
    unsigned n = 0;
    while (n < run->n && out[n] != LEVEL_INVALID)
        n++;
    if (n)
        s->probe_best = fmax(s->probe_best, delivered);
    for (unsigned i = 0; i < n; i++)
        if (out[i] == LEVEL_FAIL && s->probe_best > 0) {
            s->probe = 0;
            s->mrr = s->probe_best;
            return;
        }
    if (n < run->n) {
        s->probe = run->rate[n];
        if (++s->probe_invalid >= STAIR_PROBE_TRIES)
            stair_stop(s, "the probe said nothing of the server (the tester limited it, every try)");
        return;
    }
    double last = run->rate[run->n - 1];
    if (last < s->r.max_rate * (1 - 1e-9)) {
        s->probe = fmin(last * s->r.factor, s->r.max_rate);
        return;
    }
    /* at max_rate: an open probe did not keep up, and proves no rate */
    char why[200];
    double x = load(&s->v[s->n - 1]);
    if (out[run->n - 1] == LEVEL_PASS) {
        s->at_least = x;
        snprintf(why, sizeof why, "the probe at capacity.max_rate kept up: the capacity is at least %.1f msg/s, "
                 "unproven beyond (raise capacity.max_rate)", x);
    } else {
        s->max_open = 1;
        snprintf(why, sizeof why, "the probe at capacity.max_rate was open (neither kept up nor behind at %.1f "
                 "msg/s): no rate proven (a longer capacity.level decides more)", x);
    }
    stair_stop(s, why);
}

/* The confirmation's trials of share j (0, 1, 2: its 80, 100 and 120 % level) at
 * rate, in every confirmation run: how many came out as SPECmail2001 asks (80 and
 * 100 % pass, 120 % fails) and how many otherwise (a level limited by the tester
 * says neither). */
static void confirm_votes(const struct stair *s, unsigned j, double rate, unsigned *as_asked, unsigned *against)
{
    *as_asked = *against = 0;
    for (unsigned i = 0; i < s->n; i++) {
        const struct stair_level *l = &s->v[i];
        if (l->kind != RUN_CONFIRM || l->searched || l->rate != rate || l->out == LEVEL_INVALID)
            continue;
        if (l->out == (j < 2 ? LEVEL_PASS : LEVEL_FAIL))
            (*as_asked)++;
        else
            (*against)++;
    }
}

/* The first of the run's levels whose trials do not stand as SPECmail2001 asks
 * (more as asked than otherwise), with its votes; run->n when every one does. */
static unsigned confirm_unsettled(const struct stair *s, const struct stair_run *run, unsigned *yes, unsigned *no)
{
    unsigned j = 0;
    *yes = *no = 0;      /* a run of no levels: no votes, and it refutes nothing */
    for (; j < run->n && j < 3; j++) {
        confirm_votes(s, j, run->rate[j], yes, no);
        if (*yes <= *no)
            return j;
    }
    return run->n;
}

/* A confirmation's level that refuted the claim, the first time, or whose trials
 * are tied: the confirmation again from it (best of three), the levels before it
 * kept and recorded once, with the next run's. A level fails on a trend it saw
 * within its length, and a confirmation's 100 % level starts a fifth above its 80 %
 * one: the server's queue can surge for a level's length where the rate holds (a
 * testbed's mbox store did, where its staircase's finer steps had passed that
 * rate), and a second trial tells the surge from a claim too high (retry_disputed's
 * reason). 1 when it goes again. */
static int confirm_again(struct stair *s, const struct stair_run *run)
{
    if (s->r.max_runs && s->runs >= s->r.max_runs)
        return 0;
    unsigned yes, no, j = confirm_unsettled(s, run, &yes, &no);
    if (j >= run->n || !no || yes + no >= 3 || (no > yes && yes + no >= 2))
        return 0;        /* all stand, or not decided (limited), or refuted twice, or three trials */
    /* the kept levels leave the history: the next run's result records them */
    unsigned first = s->n - run->n;
    for (unsigned i = 0; i < j; i++)
        s->confirm_head[i] = s->v[first + i];
    for (unsigned i = j; i < run->n; i++)
        s->v[first + i - j] = s->v[first + i];
    s->n -= j;
    s->confirm_kept = j;
    return 1;
}

/* A claim whose 80 or 100 % level stands refuted (share j: its trials against it
 * outnumber those for it) is claimed again below while confirmations and runs
 * remain, as a benchmarker lowers a claim SPECmail2001 refused and as a step
 * search starts a new round: the refuted claim recorded, its 80 and 100 % levels
 * (every trial) made the search's own, so the lowest failure is at most the claim
 * and the next claim is what was delivered below it. The search then goes on as
 * after any run: a refinement where that leaves a gap wider than the precision,
 * else the new claim's confirmation. 1 when it goes on. */
static int reclaim(struct stair *s, const struct stair_run *run, unsigned j)
{
    unsigned rounds = s->r.confirm_rounds ? s->r.confirm_rounds : 1;
    if (s->nrefuted + 1 >= rounds || s->nrefuted >= STAIR_CLAIMS_MAX || (s->r.max_runs && s->runs >= s->r.max_runs))
        return 0;
    double claim = stair_capacity(s);
    const struct stair_level *by = &s->v[s->n - run->n + j];
    s->refuted[s->nrefuted++] = (struct stair_claim){ claim, 80 + 20 * j, load(by) };
    for (unsigned i = 0; i < s->n; i++)
        if (s->v[i].kind == RUN_CONFIRM && !s->v[i].searched && s->v[i].rate <= claim * (1 + 1e-9))
            s->v[i].searched = 1;
    s->confirm_invalid = 0;
    return 1;
}

void stair_result(struct stair *s, const struct stair_run *run, const enum level_outcome *out, double delivered)
{
    stair_result_measured(s, run, out, delivered, NULL, NULL);
}

void stair_result_measured(struct stair *s, const struct stair_run *run, const enum level_outcome *out,
                           double delivered, const double *lv_offered, const double *lv_delivered)
{
    if (run->kind == RUN_CONFIRM && s->confirm_kept) {
        /* the levels an earlier try kept, then this run's: the three in order */
        unsigned k = s->confirm_kept;
        struct stair_run all;
        enum level_outcome o[3];
        double off[3], del[3];
        s->confirm_kept = 0;
        confirmation(s, &all);
        all.n = k + (run->n < 3 - k ? run->n : 3 - k);
        for (unsigned i = 0; i < k; i++) {
            o[i] = s->confirm_head[i].out;
            off[i] = s->confirm_head[i].offered;
            del[i] = s->confirm_head[i].delivered;
        }
        for (unsigned i = k; i < all.n; i++) {
            o[i] = out[i - k];
            off[i] = lv_offered ? lv_offered[i - k] : 0;
            del[i] = lv_delivered ? lv_delivered[i - k] : 0;
        }
        stair_result_measured(s, &all, o, delivered, off, del);
        return;
    }
    s->runs++;
    for (unsigned i = 0; i < run->n && s->n < STAIR_HISTORY_MAX; i++)
        s->v[s->n++] = (struct stair_level){ .run = s->runs, .kind = run->kind, .rate = run->rate[i], .out = out[i],
                                             .offered = lv_offered ? lv_offered[i] : 0,
                                             .delivered = lv_delivered ? lv_delivered[i] : 0 };
    if (run->kind == RUN_PROBE) {
        probe_result(s, run, out, delivered);
    } else if (run->kind == RUN_CONFIRM) {
        /* a level the tester limited (its engine late on a loaded machine) says
         * nothing of the claim: where the others did not already refute it, the
         * confirmation again, a few times, as a probe is */
        int invalid = run->n < 3, refuted = 0;
        for (unsigned i = 0; i < run->n && i < 3; i++) {
            invalid |= out[i] == LEVEL_INVALID;
            refuted |= out[i] != LEVEL_INVALID && out[i] != (i < 2 ? LEVEL_PASS : LEVEL_FAIL);
        }
        if (invalid && !refuted && ++s->confirm_invalid < STAIR_PROBE_TRIES &&
            !(s->r.max_runs && s->runs >= s->r.max_runs))
            return;
        if (confirm_again(s, run))
            return;
        unsigned yes, no, j = confirm_unsettled(s, run, &yes, &no);
        if (!(j < 2 && no > yes && reclaim(s, run, j))) {
            s->confirmed = run->n == 3 && out[0] == LEVEL_PASS && out[1] == LEVEL_PASS && out[2] == LEVEL_FAIL &&
                           j == run->n;
            s->confirm_base = run->rate[1];
            stair_stop(s, s->confirmed            ? "confirmed at 80, 100 and 120 %"
                          : invalid && !refuted ? "NOT confirmed at 80, 100 and 120 %: a level the tester limited, "
                                                  "every try"
                                                : "NOT confirmed at 80, 100 and 120 %");
            return;
        }
    }
    if (s->done)
        return;
    struct stair_run next;
    stair_next(s, &next);
    if (next.n == 0) {
        stair_stop(s, stair_pass_max(s) > 0 || stair_fail_min(s) > 0
                          ? "the bracket reached its precision"
                          : "every level open, twice: the backlog too noisy to judge in capacity.level (longer levels "
                            "decide more)");
        return;
    }
    if (s->r.max_runs && s->runs >= s->r.max_runs)
        stair_stop(s, "capacity's runs used up");
}

unsigned stair_keep_before_invalid(struct stair *s, const struct stair_run *run, const enum level_outcome *out,
                                   double delivered, const double *lv_offered, const double *lv_delivered)
{
    struct stair_run head = *run;
    head.n = 0;
    while (head.n < run->n && out[head.n] != LEVEL_INVALID)
        head.n++;
    if (head.n == 0 || head.n == run->n)
        return 0;
    if (run->kind == RUN_CONFIRM) {
        /* kept until the confirmation's levels after them have run */
        for (unsigned i = 0; i < head.n && s->confirm_kept < 2; i++)
            s->confirm_head[s->confirm_kept++] = (struct stair_level){
                .kind = RUN_CONFIRM, .rate = run->rate[i], .out = out[i], .offered = lv_offered ? lv_offered[i] : 0,
                .delivered = lv_delivered ? lv_delivered[i] : 0 };
        return head.n;
    }
    stair_result_measured(s, &head, out, delivered, lv_offered, lv_delivered);
    return head.n;
}

int stair_exit_status(const struct stair *s)
{
    if (!(stair_lower_bound(s) > 0) || !(stair_fail_min(s) > 0))
        return MS_EXIT_FAILURE;
    return s->r.confirm && s->confirmed != 1 ? MS_EXIT_NOT_CONFIRMED : MS_EXIT_OK;
}

/* The log-likelihood of the levels' outcomes under the logistic of mid and scale. */
static double loglik(const struct stair *s, double mid, double scale)
{
    double ll = 0;
    for (unsigned i = 0; i < s->n; i++) {
        const struct stair_level *l = &s->v[i];
        if (l->kind == RUN_PROBE || l->out == LEVEL_INVALID)
            continue;
        double z = (fit_x(l) - mid) / scale;
        /* log P(pass) = -log(1 + e^z), log P(fail) = z - log(1 + e^z), stably */
        double lp = z > 0 ? -z - log1p(exp(-z)) : -log1p(exp(z)), lf = lp + z;
        ll += l->out == LEVEL_PASS ? lp : l->out == LEVEL_FAIL ? lf : (lp + lf) / 2;
    }
    return ll;
}

void stair_fit(const struct stair *s, double min_scale, struct stair_fit *f)
{
    memset(f, 0, sizeof *f);
    double lo = 0, hi = 0;
    int pass = 0, fail = 0;
    for (unsigned i = 0; i < s->n; i++) {
        const struct stair_level *l = &s->v[i];
        if (l->kind == RUN_PROBE || l->out == LEVEL_INVALID)
            continue;
        pass |= l->out == LEVEL_PASS;
        fail |= l->out == LEVEL_FAIL;
        if (lo == 0 || fit_x(l) < lo)
            lo = fit_x(l);
        if (fit_x(l) > hi)
            hi = fit_x(l);
    }
    if (!pass || !fail || !(hi > lo) || !(min_scale > 0))
        return;
    /* a grid: mid over the levels' span, scale from min_scale to the span, log-spaced;
     * the first best wins, so a clean separation keeps the smallest scale */
    double best = -INFINITY;
    const unsigned NM = 400, NS = 60;
    double smax = fmax(hi - lo, min_scale);
    for (unsigned j = 0; j < NS; j++) {
        double sc = min_scale * pow(smax / min_scale, (double)j / (NS - 1));
        for (unsigned i = 0; i <= NM; i++) {
            double mid = lo + (hi - lo) * i / NM, ll = loglik(s, mid, sc);
            if (ll > best + 1e-12) {
                best = ll;
                f->mid = mid;
                f->scale = sc;
            }
        }
    }
    /* with separated outcomes every mid between the highest pass and the lowest
     * failure fits alike: the middle of that tie */
    double m0 = f->mid, m1 = f->mid;
    while (m0 - (hi - lo) / NM >= lo && loglik(s, m0 - (hi - lo) / NM, f->scale) >= best - 1e-9)
        m0 -= (hi - lo) / NM;
    while (m1 + (hi - lo) / NM <= hi && loglik(s, m1 + (hi - lo) / NM, f->scale) >= best - 1e-9)
        m1 += (hi - lo) / NM;
    f->mid = (m0 + m1) / 2;
    f->p95 = f->mid - f->scale * log(19);
    f->lo = lo;
    f->ok = 1;
}
