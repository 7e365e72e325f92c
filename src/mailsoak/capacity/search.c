/* search: the capacity search's state machine (include/capacity/search.h). */
#include "capacity/search.h"

#include <stdio.h>
#include <string.h>

#include "lib/exitcodes.h"

const double search_confirm_share[3] = { 0.8, 1.0, 1.2 };

void search_init(struct search *s, const struct search_rules *r)
{
    memset(s, 0, sizeof *s);
    s->r = *r;
    s->phase = SP_COARSE;
    s->next = r->start < r->max_rate ? r->start : r->max_rate;
    for (int i = 0; i < 3; i++)
        s->confirmed[i] = -1;
}

const char *search_phase_name(const struct search *s, char *buf, unsigned n)
{
    switch (s->phase) {
    case SP_COARSE: snprintf(buf, n, "coarse"); break;
    case SP_BISECT: snprintf(buf, n, "bisect"); break;
    case SP_CONFIRM:
        if (s->round > 1)
            snprintf(buf, n, "confirm %.0f%% #%d", 100 * search_confirm_share[s->confirm_i], s->round);
        else
            snprintf(buf, n, "confirm %.0f%%", 100 * search_confirm_share[s->confirm_i]);
        break;
    case SP_DONE: snprintf(buf, n, "done"); break;
    }
    return buf;
}

void search_stop(struct search *s, const char *why)
{
    if (s->phase == SP_DONE)
        return;
    s->phase = SP_DONE;
    s->next = 0;
    snprintf(s->end, sizeof s->end, "%s", why);
}

/* A confirmation round of base, or the search's end when its rounds are used up. */
static void confirm_round(struct search *s, double base, const char *why)
{
    int rounds = s->r.confirm_rounds > 0 ? s->r.confirm_rounds : 1;
    if (s->round >= rounds) {
        char b[sizeof s->end];
        snprintf(b, sizeof b, "not confirmed in %d round%s: %s", s->round, s->round == 1 ? "" : "s", why);
        search_stop(s, b);
        return;
    }
    s->phase = SP_CONFIRM;
    s->round++;
    s->base = base;
    s->confirm_i = 0;
    for (int i = 0; i < 3; i++)
        s->confirmed[i] = -1;
    s->next = base * search_confirm_share[0];
}

static void confirm_or_end(struct search *s)
{
    if (!s->r.confirm || !(s->lo > 0)) {
        search_stop(s, s->lo > 0 ? "the bisection reached its precision" : "no rate passed");
        return;
    }
    confirm_round(s, s->lo, "");
}

static void bisect_or_end(struct search *s)
{
    if (s->hi - s->lo <= s->r.precision * s->lo) {
        confirm_or_end(s);
        return;
    }
    s->phase = SP_BISECT;
    s->next = (s->lo + s->hi) / 2;
}

void search_result(struct search *s, int pass)
{
    double rate = s->next;
    if (s->phase == SP_DONE)
        return;
    if (pass && rate > s->pass_max)
        s->pass_max = rate;
    if (!pass && (!(s->fail_min > 0) || rate < s->fail_min))
        s->fail_min = rate;
    switch (s->phase) {
    case SP_COARSE:
        if (pass) {
            s->lo = rate;
            if (s->hi > 0) {         /* coming down from a failure: the bracket is found */
                bisect_or_end(s);
            } else if (rate >= s->r.max_rate) {
                search_stop(s, "capacity.max_rate passed: the capacity is at least that");
            } else {
                s->next = rate * s->r.factor < s->r.max_rate ? rate * s->r.factor : s->r.max_rate;
            }
        } else {
            s->hi = rate;
            if (s->lo > 0) {
                bisect_or_end(s);
            } else if (rate / s->r.factor < 0.01) {
                search_stop(s, "no rate passed, down to 0.01 msg/s");
            } else {
                s->next = rate / s->r.factor;
            }
        }
        return;
    case SP_BISECT:
        if (pass)
            s->lo = rate;
        else
            s->hi = rate;
        bisect_or_end(s);
        return;
    case SP_CONFIRM: {
        char why[120];
        s->confirmed[s->confirm_i] = pass;
        if (s->confirm_i < 2 && !pass) {
            /* the base did not hold when run again: the next round just below what failed */
            snprintf(why, sizeof why, "%.0f %% of %.1f msg/s failed", 100 * search_confirm_share[s->confirm_i], s->base);
            confirm_round(s, rate * (1 - s->r.precision), why);
            return;
        }
        if (s->confirm_i == 1 && s->base > s->held)
            s->held = s->base;
        if (s->confirm_i == 2 && pass) {
            /* the server holds more than the base: the next round is of what passed */
            snprintf(why, sizeof why, "120 %% of %.1f msg/s passed", s->base);
            confirm_round(s, rate, why);
            return;
        }
        if (++s->confirm_i < 3) {
            s->next = s->base * search_confirm_share[s->confirm_i];
            return;
        }
        snprintf(why, sizeof why, "confirmed at 80 %% and 100 %%, failed at 120 %% (round %d)", s->round);
        search_stop(s, why);
        return;
    }
    case SP_DONE:
        return;
    }
}

int search_found(const struct search *s)
{
    return s->lo > 0 && (s->hi > 0 || s->lo >= s->r.max_rate);
}

/* A round's steps are reset when the next begins, so these are the last round's: a
 * round ended early (80 or 100 % failed, or 120 % passed with no rounds left) is not. */
int search_confirmed(const struct search *s)
{
    return s->confirmed[0] == 1 && s->confirmed[1] == 1 && s->confirmed[2] == 0;
}

int search_exit_status(const struct search *s)
{
    if (!search_found(s))
        return MS_EXIT_FAILURE;
    return s->r.confirm && !search_confirmed(s) ? MS_EXIT_NOT_CONFIRMED : MS_EXIT_OK;
}

double search_capacity(const struct search *s)
{
    if (!search_found(s))
        return 0;
    if (search_confirmed(s))
        return s->base;
    return s->held > 0 ? s->held : s->lo;
}

double search_known_lo(const struct search *s)
{
    double c = search_capacity(s);
    return s->fail_min > 0 && s->fail_min < c ? s->fail_min : c;
}

double search_known_hi(const struct search *s)
{
    double c = search_capacity(s);
    if (!(c > 0))
        return 0;
    double h = s->pass_max > c ? s->pass_max : c;
    return s->fail_min > h ? s->fail_min : h;
}

void search_need(struct search_needs *nd, double rate, enum search_who who, unsigned count)
{
    if (nd->n < SEARCH_NEEDS_MAX) {
        nd->v[nd->n].rate = rate;
        nd->v[nd->n].who = who;
        nd->v[nd->n].count = count;
        nd->n++;
    }
}

void search_need_futile(struct search_needs *nd, double rate, enum search_who who, unsigned count)
{
    for (unsigned i = 0; i < nd->n; i++)
        if (nd->v[i].who == who && nd->v[i].rate == rate && nd->v[i].count > count)
            nd->v[i].count = count;
}

unsigned search_need_at(const struct search_needs *nd, double rate, enum search_who who, unsigned base)
{
    unsigned n = base;
    for (unsigned i = 0; i < nd->n; i++)
        if (nd->v[i].who == who && nd->v[i].rate <= rate && nd->v[i].count > n)
            n = nd->v[i].count;
    return n;
}
