/* keptup: the backlog's growth over a window, and whose it is
 * (include/verdict/keptup.h). */
#include "verdict/keptup.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const keptup_outcome_names[] = { "unknown", "yes", "behind", "tester" };

double keptup_slope(const double *t, const double *y, unsigned n)
{
    double st = 0, sy = 0, stt = 0, sty = 0;
    if (n < 2)
        return 0;
    for (unsigned i = 0; i < n; i++) {
        st += t[i];
        sy += y[i];
        stt += t[i] * t[i];
        sty += t[i] * y[i];
    }
    double d = n * stt - st * st;
    return d > 0 ? (n * sty - st * sy) / d : 0;
}

void keptup_backlog(const double *t, const double *unread, unsigned n, struct keptup_backlog *b)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    if (!n)
        return;
    b->span_s = t[n - 1] - t[0];
    b->slope = keptup_slope(t, unread, n);
    double mid = (t[0] + t[n - 1]) / 2;
    unsigned h = 0;
    while (h + 1 < n && t[h + 1] <= mid + 1e-9)
        h++;
    b->half[0] = keptup_slope(t, unread, h + 1);
    b->half[1] = keptup_slope(t + h, unread + h, n - h);
    for (unsigned i = 0; i < n; i++)
        b->mean += unread[i] / n;
}

double keptup_bound(const struct keptup_rules *r, double accepted_rate, double mean, double span_s)
{
    double noise = span_s > 0 ? 3 * sqrt(mean + 1) / span_s : INFINITY;
    return fmax(r->growth_share * accepted_rate, noise);
}

/* "412 of 480 visits found the mail owed not there yet" when there were visits. */
static void visits_said(const struct keptup_input *in, char *buf, size_t n)
{
    if (in->visits)
        snprintf(buf, n, "; %llu of %llu reader visits found none of the mail owed to the mailbox (not delivered "
                 "yet), %llu retrieved mail that waited, %llu left mail for later", (unsigned long long)in->empty_visits,
                 (unsigned long long)in->visits, (unsigned long long)in->full_visits,
                 (unsigned long long)in->left_behind);
    else
        snprintf(buf, n, "; no reader visits");
}

void keptup_judge(const struct keptup_rules *r, const struct keptup_input *in, struct keptup_result *o)
{
    const struct keptup_backlog *b = &in->b;
    memset(o, 0, sizeof *o);
    o->stat = KEPTUP_STAT;
    o->value = b->slope;
    if (b->n < 2 || !(b->span_s > 0) || !(in->accepted_rate > 0)) {
        o->outcome = KEPTUP_UNKNOWN;
        snprintf(o->why, sizeof o->why, "%s", b->n < 2 || !(b->span_s > 0)
                 ? "fewer than two samples of the backlog in the window (a longer run, or a shorter run.interval)"
                 : "nothing was accepted in the window");
        return;
    }
    o->bound = keptup_bound(r, in->accepted_rate, b->mean, b->span_s);
    o->half_bound = keptup_bound(r, in->accepted_rate, b->mean, b->span_s / 2);
    double up = fmax(b->half[0], b->half[1]), down = fmin(b->half[0], b->half[1]);
    o->swing = up > o->half_bound && down < 0;
    char v[200];
    visits_said(in, v, sizeof v);
    /* a sequential test that decided over the window speaks for it (fewer wrong
     * calls near the bound than the slope: docs/results/capacity.md) */
    if (in->decided) {
        o->stat = in->decided_by ? in->decided_by : KEPTUP_SPRT;
        o->value = in->decided_value;
        o->bound = in->decided_bound;
    }
    if (in->decided > 0 || (!in->decided && b->slope <= o->bound)) {
        o->outcome = KEPTUP_YES;
        snprintf(o->why, sizeof o->why, "the backlog grew %.2f msg/s (bound %.2f%s)", o->value, o->bound,
                 in->decided ? ", a sequential test" : "");
        return;
    }
    /* a queue counted growing past the bound by itself: the server fell behind,
     * whatever the readers did besides */
    int queue_grew = in->has_spool && in->spool_slope > keptup_bound(r, in->accepted_rate, b->mean, b->span_s);
    if (!in->server_slows_readers && !in->readers_ruled_out && !queue_grew) {
        int left = in->left_behind * 20 > in->visits;
        int in_store = in->has_store && in->store_slope >= b->slope / 2;
        int not_queued = !in->has_store && in->has_spool && in->spool_slope < b->slope / 2;
        /* the server's side not seen: the visits say where the mail waited. A server
         * that keeps up has delivered the owed mail by the time a reader that falls
         * behind comes: a visit finding it not there yet is rare (1 in 200 on the
         * testbed), and more than 1 in 10 says the server held mail back too */
        int waited = !in->has_store && !in->has_spool && in->full_visits > 9 * in->empty_visits;
        if (left || in->readers_busy || in_store || not_queued || waited) {
            o->outcome = KEPTUP_TESTER;
            o->server_seen = !left && !in->readers_busy && !waited;
            if (left)
                snprintf(o->why, sizeof o->why, "the readers fell behind the mail the store holds: %llu of %llu visits "
                         "left mail for later while the backlog grew by %.2f msg/s", (unsigned long long)in->left_behind,
                         (unsigned long long)in->visits, b->slope);
            else if (waited)
                snprintf(o->why, sizeof o->why, "the readers fell behind the mail the store holds: %llu of %llu visits "
                         "retrieved mail that waited for them, %llu found the mail owed not there yet, while the "
                         "backlog grew by %.2f msg/s", (unsigned long long)in->full_visits,
                         (unsigned long long)in->visits, (unsigned long long)in->empty_visits, b->slope);
            else if (in->readers_busy)
                snprintf(o->why, sizeof o->why, "the readers fell behind: their checks began late, every reader busy, "
                         "while the backlog grew by %.2f msg/s", b->slope);
            else
                snprintf(o->why, sizeof o->why, "the readers fell behind the mail the store holds: the backlog grew by "
                         "%.2f msg/s, the server's %s by %.2f", b->slope, in_store ? "mailboxes" : "queue only",
                         in_store ? in->store_slope : in->spool_slope);
            return;
        }
    }
    o->outcome = KEPTUP_BEHIND;
    snprintf(o->why, sizeof o->why, "the backlog grew %.2f msg/s (bound %.2f%s)%.170s", o->value, o->bound,
             in->decided ? ", a sequential test" : "", v);
}
