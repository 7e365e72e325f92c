/* search: the capacity search's state machine (include/capacity/search.h). */
#include "capacity/search.h"

#include <stdio.h>
#include <string.h>

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
    case SP_CONFIRM: snprintf(buf, n, "confirm %.0f%%", 100 * search_confirm_share[s->confirm_i]); break;
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

static void confirm_or_end(struct search *s)
{
    if (!s->r.confirm || !(s->lo > 0)) {
        search_stop(s, s->lo > 0 ? "the bisection reached its precision" : "no rate passed");
        return;
    }
    s->phase = SP_CONFIRM;
    s->base = s->lo;
    s->confirm_i = 0;
    s->next = s->base * search_confirm_share[0];
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
    case SP_CONFIRM:
        s->confirmed[s->confirm_i] = pass;
        if (++s->confirm_i < 3) {
            s->next = s->base * search_confirm_share[s->confirm_i];
            return;
        }
        search_stop(s, search_confirmed(s) ? "confirmed at 80 % and 100 %, failed at 120 %"
                                           : "the confirmation did not come out as 80 % and 100 % pass, 120 % fails");
        return;
    case SP_DONE:
        return;
    }
}

int search_found(const struct search *s)
{
    return s->lo > 0 && (s->hi > 0 || s->lo >= s->r.max_rate);
}

int search_confirmed(const struct search *s)
{
    return s->confirmed[0] == 1 && s->confirmed[1] == 1 && s->confirmed[2] == 0;
}
