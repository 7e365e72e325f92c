/* drift: whether the server keeps up, four statistics over a window's backlog
 * (include/verdict/drift.h). */
#include "verdict/drift.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

const char *drift_decision_name(enum drift_decision d)
{
    switch (d) {
    case DRIFT_UNDECIDED: return "undecided";
    case DRIFT_KEPT_UP: return "kept up";
    case DRIFT_BEHIND: return "behind";
    case DRIFT_INDETERMINATE: return "indeterminate";
    }
    return "?";
}

void drift_rules_default(struct drift_rules *r)
{
    memset(r, 0, sizeof *r);
    r->share = 0.05;
    r->alpha = 0.05;
    r->beta = 0.05;
    r->batch = 2;
    r->min_batches = 8;
    r->cap_s = 120;
    r->arrivals_cv2 = 1;
}

void drift_rules_level(struct drift_rules *r, double share, double level_s, double interval_s)
{
    drift_rules_default(r);
    r->share = share;
    r->cap_s = level_s;
    r->min_batches = 8;
    double batch_s = fmin(2, level_s / 16);
    r->batch = (unsigned)fmax(1, round(batch_s / interval_s));
}

/* Least-squares fit of y over x: the slope, its standard error in *se and the
 * residuals' variance in *rv when rv is not NULL (both 0 with fewer than 3 points). */
static double fit_line(const double *x, const double *y, unsigned n, double *se, double *rv)
{
    double sx = 0, sy = 0;
    *se = 0;
    if (rv)
        *rv = 0;
    if (n < 2)
        return 0;
    for (unsigned i = 0; i < n; i++) {
        sx += x[i];
        sy += y[i];
    }
    double mx = sx / n, my = sy / n, sxx = 0, sxy = 0;
    for (unsigned i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (!(sxx > 0))
        return 0;
    double b = sxy / sxx;
    if (n > 2) {
        double rss = 0;
        for (unsigned i = 0; i < n; i++) {
            double e = y[i] - my - b * (x[i] - mx);
            rss += e * e;
        }
        *se = sqrt(rss / (n - 2) / sxx);
        if (rv)
            *rv = rss / (n - 2);
    }
    return b;
}

static double fit(const double *x, const double *y, unsigned n, double *se) { return fit_line(x, y, n, se, NULL); }

/* The window's length and its accepted and read rates (msg/s). */
static double rates(const struct drift_point *p, unsigned n, double *a, double *d)
{
    double w = n >= 2 ? p[n - 1].t - p[0].t : 0, sa = 0, sd = 0;
    for (unsigned i = 1; i < n; i++) {
        sa += p[i].accepted;
        sd += p[i].read;
    }
    *a = w > 0 ? sa / w : 0;
    *d = w > 0 ? sd / w : 0;
    return w;
}

static void fixed(struct drift_result *o, double w, double value, double bound)
{
    o->at_s = w;
    o->value = value;
    o->bound = bound;
    o->d = value > bound ? DRIFT_BEHIND : DRIFT_KEPT_UP;
}

/* The backlog's noise as capacity's step.c bounds it: 3 standard deviations of a
 * count of its mean, spread over the window. */
static double count_noise(double mean, double w)
{
    return 3 * sqrt(mean + 1) / w;
}

void drift_slope(const struct drift_rules *r, const struct drift_point *p, unsigned n, struct drift_result *o)
{
    memset(o, 0, sizeof *o);
    double a, d, w = rates(p, n, &a, &d);
    if (n < 3 || !(w > 0))
        return;
    double *t = xcalloc(2 * (size_t)n, sizeof *t), *u = t + n, mean = 0, se;
    for (unsigned i = 0; i < n; i++) {
        t[i] = p[i].t;
        u[i] = p[i].unread;
        mean += u[i] / n;
    }
    fixed(o, w, fit(t, u, n, &se), fmax(r->share * a, count_noise(mean, w)));
    free(t);
}

void drift_latency(const struct drift_rules *r, const struct drift_point *p, unsigned n, struct drift_result *o)
{
    memset(o, 0, sizeof *o);
    double a, d, w = rates(p, n, &a, &d);
    if (n < 4 || !(w > 0) || !(d > 0))
        return;
    double *s = xcalloc(2 * (size_t)n, sizeof *s), *y = s + n, se;
    unsigned m = 0;
    for (unsigned i = 1; i < n; i++)
        if (p[i].lat_n > 0) {
            /* the mail read in this interval was accepted about its mean wait before */
            s[m] = (p[i].t + p[i - 1].t) / 2 - p[i].lat_mean;
            y[m++] = p[i].lat_mean;
        }
    /* a wait growing by g s a second of acceptance is a backlog growing by g x the
     * read rate (Little's law) */
    if (m >= 3) {
        double g = fit(s, y, m, &se);
        fixed(o, w, g * d, fmax(r->share * a, 3 * se * d));
    }
    free(s);
}

void drift_troughs(const struct drift_rules *r, const struct drift_point *p, unsigned n, unsigned sub,
                   struct drift_result *o)
{
    memset(o, 0, sizeof *o);
    double a, d, w = rates(p, n, &a, &d);
    if (!sub || n < 2 || !(w > 0))
        return;
    unsigned k = (n - 1) / sub;
    if (k < 3)
        return;
    double *t = xcalloc(2 * (size_t)k, sizeof *t), *lo = t + k, mean = 0, se;
    for (unsigned j = 0; j < k; j++) {
        unsigned i0 = 1 + j * sub;
        lo[j] = p[i0].unread;
        for (unsigned i = i0; i < i0 + sub; i++)
            lo[j] = fmin(lo[j], p[i].unread);
        t[j] = (p[i0 - 1].t + p[i0 + sub - 1].t) / 2;
        mean += lo[j] / k;
    }
    fixed(o, w, fit(t, lo, k, &se), fmax(r->share * a, count_noise(mean, w)));
    free(t);
}

/* The net flow's variance per second from k batches' flows y of mean length bt:
 * batch means, the batches' variance corrected for their lag-1 autocorrelation (a
 * backlog that swings back makes consecutive batches' flows of opposite sign, one
 * that drifts keeps their sign). */
static double batch_var(const double *y, unsigned k, double bt)
{
    double m = 0, s2 = 0, c1 = 0;
    for (unsigned i = 0; i < k; i++)
        m += y[i] / k;
    for (unsigned i = 0; i < k; i++)
        s2 += (y[i] - m) * (y[i] - m);
    for (unsigned i = 1; i < k; i++)
        c1 += (y[i] - m) * (y[i - 1] - m);
    /* a lag-1 correlation of fewer than 8 batches is mostly noise; and bounded, the
     * correction at most triples or thirds the variance */
    double r1 = s2 > 0 && k >= 8 ? c1 / s2 : 0;
    r1 = fmax(-0.5, fmin(0.5, r1));
    return k > 1 ? s2 / (k - 1) / bt * (1 + r1) / (1 - r1) : 0;
}

void drift_sprt(const struct drift_rules *r, const struct drift_point *p, unsigned n, enum drift_variance v,
                struct drift_result *o)
{
    memset(o, 0, sizeof *o);
    o->llr_hi = log((1 - r->beta) / r->alpha);
    o->llr_lo = log(r->beta / (1 - r->alpha));
    unsigned b = r->batch ? r->batch : 1, kmax = n > 0 ? (n - 1) / b : 0;
    double *y = xcalloc(kmax + 1, sizeof *y), acc = 0;
    for (unsigned k = 1; k <= kmax; k++) {
        const struct drift_point *e = &p[k * b], *s = &p[(k - 1) * b];
        y[k - 1] = e->unread - s->unread;
        for (unsigned i = (k - 1) * b + 1; i <= k * b; i++)
            acc += p[i].accepted;
        double T = e->t - p[0].t;
        o->at_s = T;
        if (k < r->min_batches || !(T > 0))
            continue;
        double a = acc / T, bt = T / k;   /* accepted rate, a batch's mean length */
        double var = r->arrivals_cv2 * a; /* of the net flow, per second */
        if (v != DRIFT_VAR_POISSON) {
            double bm = batch_var(y, k, bt);
            var = v == DRIFT_VAR_FLOORED ? fmax(var, bm) : bm;
        }
        var = fmax(var, 1 / bt);          /* at least a message per batch */
        double theta = r->share * a, S = e->unread - p[0].unread, V = var * T + 2 * r->swing;
        o->value = S / T;
        o->bound = theta / 2;
        o->llr = theta * T / V * (S - theta * T / 2);
        o->d = o->llr >= o->llr_hi ? DRIFT_BEHIND : o->llr <= o->llr_lo ? DRIFT_KEPT_UP
             : T >= r->cap_s ? DRIFT_INDETERMINATE : DRIFT_UNDECIDED;
        if (o->d != DRIFT_UNDECIDED)
            break;
    }
    free(y);
}

unsigned drift_fill_end(const struct drift_rules *r, const double *t, const double *unread, unsigned n)
{
    unsigned b = r->batch ? r->batch : 1;
    double max_s = n > 1 ? (t[n - 1] - t[0]) / 5 : 0;
    for (unsigned i = b; i < n && t[i] - t[0] <= max_s + 1e-9; i++)
        if (unread[i] <= unread[i - b])
            return i;
    return 0;
}

/* The backlog's line over p[0..n): its residuals' variance, and its slope in *slope
 * (both 0 with fewer than 4 points). */
static double swing_line(const struct drift_point *p, unsigned n, double *slope)
{
    *slope = 0;
    if (n < 4)
        return 0;
    double *t = xcalloc(2 * (size_t)n, sizeof *t), *u = t + n, se, rv;
    for (unsigned i = 0; i < n; i++) {
        t[i] = p[i].t;
        u[i] = p[i].unread;
    }
    *slope = fit_line(t, u, n, &se, &rv);
    free(t);
    return rv;
}

double drift_swing(const struct drift_point *p, unsigned n)
{
    double slope;
    return swing_line(p, n, &slope);
}

double drift_swing_kept(const struct drift_point *all, unsigned n, double from, double to, double share,
                        double prev)
{
    unsigned i = 1;
    while (i < n && all[i - 1].t < from - 1e-6)
        i++;
    unsigned j = i;
    while (j < n && all[j].t <= to + 1e-6)
        j++;
    if (j - i < 3)
        return prev;
    double a = 0, slope, swing = swing_line(all + i - 1, j - i + 1, &slope);
    for (unsigned k = i; k < j; k++)
        a += all[k].accepted;
    a /= all[j - 1].t - all[i - 1].t;
    return slope <= share * a ? swing : prev;
}

void drift_growth_z(const struct drift_rules *r, const struct drift_point *p, unsigned n, double z_crit,
                    struct drift_result *o)
{
    memset(o, 0, sizeof *o);
    unsigned b = r->batch ? r->batch : 1, k = n > 0 ? (n - 1) / b : 0;
    if (k < 4)
        return;
    double *y = xcalloc(k, sizeof *y);
    for (unsigned j = 1; j <= k; j++)
        y[j - 1] = p[j * b].unread - p[(j - 1) * b].unread;
    double T = p[k * b].t - p[0].t, S = p[k * b].unread - p[0].unread;
    if (!(T > 0)) {
        free(y);
        return;
    }
    double bt = T / k, var = fmax(batch_var(y, k, bt), 1 / bt), se = sqrt(var / T);
    free(y);
    o->at_s = T;
    o->value = S / T;
    o->bound = z_crit * se;
    o->z = S / T / se;
    o->d = o->z > z_crit ? DRIFT_BEHIND : DRIFT_KEPT_UP;
}
