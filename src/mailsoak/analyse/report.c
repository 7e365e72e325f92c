/* report: the HTML report (effective config, summary table, SVG charts over time) and
 * the timeline CSV, both written atomically. Every string from a result file goes
 * through html_puts/csv_puts; a key a run lacks leaves a gap, never a zero. Repeats
 * are drawn as one line per run in their label's colour, so their spread shows. */
#include "analyse/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/atomicfile.h"
#include "analyse/compare.h"
#include "analyse/escape.h"
#include "lib/units.h"

/* Tableau 10, reordered so that the first six (the classic six columns) are the
 * easiest to tell apart: cyan before brown, which is close to red. */
static const char *const palette[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f",
};
#define NPALETTE (sizeof palette / sizeof palette[0])
/* Error classes get their own palette (ColorBrewer Dark2), so a class's colour is not
 * read as a label's. */
static const char *const class_palette[] = {
    "#d95f02", "#7570b3", "#1b9e77", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666",
};
#define NCLASSPAL (sizeof class_palette / sizeof class_palette[0])

/* Chart geometry (SVG user units). */
#define W 640.0
#define H 260.0
#define ML 66.0
#define MR 14.0
#define MT 12.0
#define MB 40.0
#define LANE 15.0

struct chart {
    char id[64], title[160], ylabel[48], path[192];
    enum cmp_unit unit;
    int per_second;        /* per-interval count in the file; drawn divided by the interval */
    int sum_object;        /* the value is an object of per-class counts; drawn as their sum */
};

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p)
        abort();
    return p;
}

/* "maildir", or "maildir #2" when the label has repeats. */
static void run_name(char *buf, size_t n, const struct result_set *rs, size_t i)
{
    for (size_t g = 0; g < rs->ngroups; g++)
        for (size_t k = 0; k < rs->groups[g].n; k++)
            if (rs->groups[g].runs[k] == i) {
                if (rs->groups[g].n > 1)
                    snprintf(buf, n, "%s #%zu", rs->groups[g].label, k + 1);
                else
                    snprintf(buf, n, "%s", rs->groups[g].label);
                return;
            }
    snprintf(buf, n, "%s", rs->v[i].label);
}

static const char *colour(size_t g)
{
    return palette[g % NPALETTE];
}

/* ---- values over time ---- */

static int entry_t(const json_t *e, double *t)
{
    return json_path_number(e, "t", t);
}

static int entry_value(const json_t *e, const struct chart *c, double dt, double *v)
{
    const json_t *x = json_path_get(e, c->path);
    if (c->sum_object && json_is_object(x)) {
        const char *k;
        json_t *y;
        *v = 0;
        json_object_foreach((json_t *)x, k, y)
            if (json_is_number(y))
                *v += json_number_value(y);
    } else if (json_is_number(x))
        *v = json_number_value(x);
    else
        return -1;
    if (c->per_second) {
        if (!(dt > 0))
            return -1;
        *v /= dt;
    }
    return isfinite(*v) ? 0 : -1;
}

/* Calls fn for each point of run i on chart c; a missing value is passed as NAN so
 * the caller can break the line there. */
typedef void (*point_fn)(void *ctx, double t, double v);

static void each_point(const struct result *r, const struct chart *c, point_fn fn, void *ctx)
{
    size_t i;
    json_t *e;
    double prev = 0, t, v;
    json_array_foreach(r->timeline, i, e) {
        if (!json_is_object(e) || entry_t(e, &t) < 0)
            continue;
        if (entry_value(e, c, t - prev, &v) < 0)
            v = NAN;
        fn(ctx, t, v);
        prev = t;
    }
}

struct range_ctx {
    double xmax, ymax;
    size_t n;
};

static void range_point(void *ctx, double t, double v)
{
    struct range_ctx *rc = ctx;
    if (t > rc->xmax)
        rc->xmax = t;
    if (isnan(v))
        return;
    if (v > rc->ymax)
        rc->ymax = v;
    rc->n++;
}

/* ---- axes ---- */

static double nice_step(double range, int target)
{
    if (!(range > 0))
        return 1;
    double raw = range / target, mag = pow(10, floor(log10(raw))), r = raw / mag;
    return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10) * mag;
}

/* The binary unit the byte axis is labelled in: the largest at most the axis top. */
static double byte_unit(double max, const char **suffix)
{
    static const char *const suf[] = { "B", "KB", "MB", "GB", "TB" };
    size_t i = 0;
    double k = 1;
    while (max / k >= 1024 && i + 1 < sizeof suf / sizeof *suf) {
        k *= 1024;
        i++;
    }
    *suffix = suf[i];
    return k;
}

/* Bytes tick on binary multiples, so the labels read 20MB, 40MB rather than 19.1MB. */
static double axis_step(double max, enum cmp_unit u)
{
    if (u != CU_BYTES)
        return nice_step(max, 5);
    const char *suf;
    double k = byte_unit(max, &suf);
    return nice_step(max / k, 5) * k;
}

static void tick_label(char *buf, size_t n, enum cmp_unit u, double v, double step, double max)
{
    const char *suf;
    double k;
    if (v == 0) {
        snprintf(buf, n, "0");
        return;
    }
    switch (u) {
    case CU_BYTES:
        k = byte_unit(max, &suf);
        snprintf(buf, n, "%g%s", v / k, suf);
        break;
    case CU_MS:
        if (step >= 1000)
            snprintf(buf, n, "%gs", v / 1000);
        else
            snprintf(buf, n, "%gms", v);
        break;
    default:
        if (v >= 100000)
            fmt_count(buf, n, v);
        else
            snprintf(buf, n, "%g", v);
        break;
    }
}

struct frame {
    double xmax, ymax, xstep, ystep;
    double pw, ph;           /* plot width and height */
};

static double sx(const struct frame *f, double t) { return ML + t / f->xmax * f->pw; }
static double sy(const struct frame *f, double v) { return MT + f->ph - v / f->ymax * f->ph; }

static void frame_init(struct frame *f, double xmax, double ymax, enum cmp_unit u, double height)
{
    f->pw = W - ML - MR;
    f->ph = height - MT - MB;
    f->xstep = nice_step(xmax > 0 ? xmax : 1, 8);
    f->xmax = ceil((xmax > 0 ? xmax : 1) / f->xstep - 1e-9) * f->xstep;
    f->ystep = axis_step(ymax > 0 ? ymax : 1, u);
    f->ymax = ceil((ymax > 0 ? ymax : 1) / f->ystep - 1e-9) * f->ystep;
}

static void draw_axes(FILE *o, const struct frame *f, enum cmp_unit u, const char *ylabel)
{
    char buf[48];
    fputs("<g class=\"axes\">", o);
    for (double v = 0; v <= f->ymax + f->ystep / 2; v += f->ystep) {
        double y = sy(f, v);
        tick_label(buf, sizeof buf, u, v, f->ystep, f->ymax);
        fprintf(o, "<line class=\"gridline\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                ML, ML + f->pw, y, y, ML - 5, y + 4, buf);
    }
    for (double t = 0; t <= f->xmax + f->xstep / 2; t += f->xstep) {
        double x = sx(f, t);
        fprintf(o, "<line class=\"tick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>",
                x, x, MT + f->ph, MT + f->ph + 4, x, MT + f->ph + 16, t);
    }
    fprintf(o, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", ML, ML + f->pw,
            MT + f->ph, MT + f->ph);
    fprintf(o, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", ML, ML, MT, MT + f->ph);
    fprintf(o, "<text class=\"xlabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time since start (s)</text>",
            ML + f->pw / 2, MT + f->ph + 32);
    fprintf(o, "<text class=\"ylabel\" transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\">",
            MT + f->ph / 2);
    html_puts(o, ylabel);
    fputs("</text></g>\n", o);
}

/* The end of the send window and the server events, on every time chart. */
static void draw_markers(FILE *o, const struct frame *f, const struct result_set *rs, const size_t *runs, size_t nruns)
{
    double done[64];
    size_t ndone = 0;
    for (size_t j = 0; j < nruns; j++) {
        const struct result *r = &rs->v[runs[j]];
        double d;
        if (json_path_number(r->root, "duration_s", &d) == 0 && d > 0 && d <= f->xmax) {
            size_t k = 0;
            while (k < ndone && fabs(done[k] - d) > 1e-6)
                k++;
            if (k == ndone && ndone < 64) {
                done[ndone++] = d;
                fprintf(o, "<line class=\"send-end\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\">"
                           "<title>senders stop at %gs</title></line>",
                        sx(f, d), sx(f, d), MT, MT + f->ph, d);
            }
        }
        size_t i;
        json_t *e;
        json_array_foreach(r->events, i, e) {
            double t;
            char name[300];
            if (json_path_number(e, "t", &t) < 0 || t < 0 || t > f->xmax)
                continue;
            run_name(name, sizeof name, rs, runs[j]);
            fprintf(o, "<text class=\"event-label\" x=\"%.1f\" y=\"%.1f\">", sx(f, t) + 3, MT + 9);
            html_puts(o, json_string_value(json_object_get(e, "kind")));
            fputs(" (", o);
            html_puts(o, name);
            fprintf(o, ")</text><line class=\"event\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"><title>",
                    sx(f, t), sx(f, t), MT, MT + f->ph);
            html_puts(o, name);
            fprintf(o, " at %gs: ", t);
            html_puts(o, json_string_value(json_object_get(e, "kind")));
            fputs(": ", o);
            html_puts(o, json_string_value(json_object_get(e, "text")));
            fputs("</title></line>", o);
        }
    }
    fputc('\n', o);
}

/* ---- line charts ---- */

struct path_ctx {
    FILE *o;
    const struct frame *f;
    int pen;                 /* 1 when the previous point was drawn */
};

static void path_point(void *ctx, double t, double v)
{
    struct path_ctx *pc = ctx;
    if (isnan(v)) {
        pc->pen = 0;
        return;
    }
    fprintf(pc->o, "%s%.1f %.1f", pc->pen ? " L" : " M", sx(pc->f, t), sy(pc->f, v));
    pc->pen = 1;
}

struct dot_ctx {
    FILE *o;
    const struct frame *f;
};

static void dot_point(void *ctx, double t, double v)
{
    struct dot_ctx *dc = ctx;
    if (!isnan(v))
        fprintf(dc->o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.6\"/>", sx(dc->f, t), sy(dc->f, v));
}

/* Draws chart c when some run has data for it (draw_empty = 0), or, in the second pass
 * (draw_empty = 1), a short placeholder when none has. Returns the number of series. */
static size_t line_chart(FILE *o, const struct result_set *rs, const struct chart *c, const size_t *all,
                         int draw_empty)
{
    struct range_ctx rc = { 0, 0, 0 };
    size_t *npts = xcalloc(rs->n, sizeof *npts), nseries = 0;
    for (size_t i = 0; i < rs->n; i++) {
        size_t before = rc.n;
        each_point(&rs->v[i], c, range_point, &rc);
        npts[i] = rc.n - before;
        nseries += npts[i] > 0;
    }
    if (!nseries || draw_empty) {
        if (!nseries && draw_empty) {
            fprintf(o, "<figure class=\"chart empty\" id=\"chart-%s\" data-series=\"0\">\n<figcaption>", c->id);
            html_puts(o, c->title);
            fputs("</figcaption>\n<p class=\"note\">Not recorded in these runs.</p>\n</figure>\n", o);
        }
        free(npts);
        return nseries;
    }
    struct frame f;
    frame_init(&f, rc.xmax, rc.ymax, c->unit, H);
    fprintf(o, "<figure class=\"chart\" id=\"chart-%s\" data-series=\"%zu\">\n<figcaption>", c->id, nseries);
    html_puts(o, c->title);
    fprintf(o, "</figcaption>\n<svg viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\">\n",
            W, H, W, H);
    draw_axes(o, &f, c->unit, c->ylabel);
    draw_markers(o, &f, rs, all, rs->n);
    for (size_t g = 0; g < rs->ngroups; g++) {
        for (size_t k = 0; k < rs->groups[g].n; k++) {
            size_t i = rs->groups[g].runs[k];
            char name[300];
            if (!npts[i])
                continue;
            run_name(name, sizeof name, rs, i);
            fprintf(o, "<path class=\"series\" data-label=\"");
            html_puts(o, rs->groups[g].label);
            fprintf(o, "\" data-run=\"%zu\" stroke=\"%s\"%s d=\"", k + 1, colour(g),
                    g / NPALETTE % 2 ? " stroke-dasharray=\"6 3\"" : "");
            struct path_ctx pc = { o, &f, 0 };
            each_point(&rs->v[i], c, path_point, &pc);
            fputs("\"><title>", o);
            html_puts(o, name);
            fputs(" (", o);
            html_puts(o, rs->v[i].path);
            fputs(")</title></path>\n", o);
            /* Few points (a short run): mark them, or a lone point would not show at all. */
            if (npts[i] <= 30) {
                struct dot_ctx dc = { o, &f };
                fprintf(o, "<g class=\"dots\" fill=\"%s\">", colour(g));
                each_point(&rs->v[i], c, dot_point, &dc);
                fputs("</g>\n", o);
            }
        }
    }
    fputs("</svg>\n<div class=\"legend\">", o);
    for (size_t g = 0; g < rs->ngroups; g++) {
        size_t have = 0;
        for (size_t k = 0; k < rs->groups[g].n; k++)
            have += npts[rs->groups[g].runs[k]] > 0;
        if (!have)
            continue;
        fprintf(o, "<span><i style=\"background:%s\"></i>", colour(g));
        html_puts(o, rs->groups[g].label);
        if (have > 1)
            fprintf(o, " <small>(%zu runs)</small>", have);
        fputs("</span>", o);
    }
    fputs("</div>\n</figure>\n", o);
    free(npts);
    return nseries;
}

/* ---- errors and log hits by class, one chart per label ---- */

struct classes {
    char **v;
    size_t n;
};

static size_t class_index(struct classes *c, const char *name, int add)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->v[i], name))
            return i;
    if (!add)
        return (size_t)-1;
    char **v = realloc(c->v, (c->n + 1) * sizeof *v);
    if (!v || !(v[c->n] = strdup(name)))
        abort();
    c->v = v;
    return c->n++;
}

static void classes_free(struct classes *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i]);
    free(c->v);
}

/* Union of the names found at `path` of every timeline entry of the given runs: classes
 * with a count above zero, or (for "latency") commands with an object of percentiles. */
static void collect_classes(struct classes *c, const struct result_set *rs, const size_t *runs, size_t n,
                            const char *path)
{
    for (size_t j = 0; j < n; j++) {
        size_t i;
        json_t *e;
        json_array_foreach(rs->v[runs[j]].timeline, i, e) {
            const char *k;
            json_t *v;
            json_object_foreach((json_t *)json_path_get(e, path), k, v)
                if ((json_is_number(v) && json_number_value(v) > 0) || (json_is_object(v) && !strchr(k, '/')))
                    class_index(c, k, 1);
        }
    }
}

/* The typical interval: the median gap between entries of the first run that has any. */
static double interval_of(const struct result_set *rs, const size_t *runs, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        const json_t *tl = rs->v[runs[j]].timeline;
        size_t m = json_array_size(tl), k = 0;
        double *d = xcalloc(m, sizeof *d), prev = 0, t;
        for (size_t i = 0; i < m; i++)
            if (entry_t(json_array_get(tl, i), &t) == 0) {
                if (t > prev)
                    d[k++] = t - prev;
                prev = t;
            }
        double r = 0;
        if (k) {
            for (size_t a = 1; a < k; a++)      /* insertion sort: a few hundred gaps */
                for (size_t b = a; b > 0 && d[b - 1] > d[b]; b--) {
                    double x = d[b];
                    d[b] = d[b - 1];
                    d[b - 1] = x;
                }
            r = d[k / 2];
        }
        free(d);
        if (r > 0)
            return r;
    }
    return 0;
}

/* bins[class * nbins + bin] += count / nruns for every entry of the runs. */
static void bin_classes(double *bins, size_t nbins, double iv, struct classes *cl, const struct result_set *rs,
                        const size_t *runs, size_t n, const char *path)
{
    for (size_t j = 0; j < n; j++) {
        size_t i;
        json_t *e;
        json_array_foreach(rs->v[runs[j]].timeline, i, e) {
            double t;
            if (entry_t(e, &t) < 0 || t < 0)
                continue;
            long b = (long)ceil(t / iv - 1e-9) - 1;
            if (b < 0)
                b = 0;
            if ((size_t)b >= nbins)
                continue;
            const char *k;
            json_t *v;
            json_object_foreach((json_t *)json_path_get(e, path), k, v) {
                size_t c = class_index(cl, k, 0);
                if (c != (size_t)-1 && json_is_number(v))
                    bins[c * nbins + (size_t)b] += json_number_value(v) / (double)n;
            }
        }
    }
}

static void class_chart(FILE *o, const struct result_set *rs, size_t g, const struct classes *all_err, size_t chart_no)
{
    const struct result_group *grp = &rs->groups[g];
    struct classes err = { 0 }, logs = { 0 };
    /* Colours by the class's place among all labels' classes, so pop3_lock is the
     * same colour in every label's chart. */
    collect_classes(&err, rs, grp->runs, grp->n, "errors_by_class");
    collect_classes(&logs, rs, grp->runs, grp->n, "server/log_hits");
    double iv = interval_of(rs, grp->runs, grp->n), xmax = 0;
    for (size_t j = 0; j < grp->n; j++) {
        const json_t *tl = rs->v[grp->runs[j]].timeline;
        double t;
        if (entry_t(json_array_get(tl, json_array_size(tl) - 1), &t) == 0 && t > xmax)
            xmax = t;
    }
    size_t nbins = iv > 0 ? (size_t)ceil(xmax / iv - 1e-9) : 0;
    if (nbins > 100000)
        nbins = 100000;
    if (!nbins || (!err.n && !logs.n)) {
        fprintf(o, "<figure class=\"chart classes empty\" id=\"classes-%zu\" data-label=\"", chart_no);
        html_puts(o, grp->label);
        fputs("\" data-series=\"0\" data-log-classes=\"0\">\n<figcaption>Errors and log hits by class: ", o);
        html_puts(o, grp->label);
        fputs("</figcaption>\n<p class=\"note\">No errors and no log hits.</p>\n</figure>\n", o);
        classes_free(&err);
        classes_free(&logs);
        return;
    }
    double *eb = xcalloc(err.n * nbins, sizeof *eb), *lb = xcalloc(logs.n * nbins, sizeof *lb);
    bin_classes(eb, nbins, iv, &err, rs, grp->runs, grp->n, "errors_by_class");
    bin_classes(lb, nbins, iv, &logs, rs, grp->runs, grp->n, "server/log_hits");
    double ymax = 0, lmax = 0;
    for (size_t b = 0; b < nbins; b++) {
        double s = 0;
        for (size_t c = 0; c < err.n; c++)
            s += eb[c * nbins + b];
        ymax = fmax(ymax, s);
        for (size_t c = 0; c < logs.n; c++)
            lmax = fmax(lmax, lb[c * nbins + b]);
    }
    double height = H + (logs.n ? 8 + LANE * (double)logs.n : 0);
    struct frame f;
    frame_init(&f, xmax, ymax, CU_COUNT, H);
    char ylabel[64], runs_note[64] = "";
    snprintf(ylabel, sizeof ylabel, "errors per %gs", iv);
    if (grp->n > 1)
        snprintf(runs_note, sizeof runs_note, " (mean of %zu runs)", grp->n);
    fprintf(o, "<figure class=\"chart classes\" id=\"classes-%zu\" data-label=\"", chart_no);
    html_puts(o, grp->label);
    fprintf(o, "\" data-series=\"%zu\" data-log-classes=\"%zu\">\n<figcaption>Errors and log hits by class: ",
            err.n, logs.n);
    html_puts(o, grp->label);
    fprintf(o, "%s</figcaption>\n<svg viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\">\n",
            runs_note, W, height, W, height);
    draw_axes(o, &f, CU_COUNT, ylabel);
    draw_markers(o, &f, rs, grp->runs, grp->n);
    double bw = f.pw * iv / f.xmax;
    for (size_t b = 0; b < nbins; b++) {
        double base = 0;
        for (size_t c = 0; c < err.n; c++) {
            double v = eb[c * nbins + b];
            if (v <= 0)
                continue;
            size_t ci = class_index((struct classes *)all_err, err.v[c], 0);
            fprintf(o, "<rect class=\"bar\" data-class=\"");
            html_puts(o, err.v[c]);
            fprintf(o, "\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                    sx(&f, (double)b * iv) + 0.5, sy(&f, base + v), fmax(bw - 1, 0.5), sy(&f, base) - sy(&f, base + v),
                    class_palette[ci % NCLASSPAL]);
            html_puts(o, err.v[c]);
            fprintf(o, ": %g at %g-%gs</title></rect>", round(v * 10) / 10, (double)b * iv, (double)(b + 1) * iv);
            base += v;
        }
    }
    fputc('\n', o);
    /* Log hits: one lane per class under the axis; darker tick = more hits. */
    for (size_t c = 0; c < logs.n; c++) {
        double y = H - 4 + LANE * (double)c;
        fprintf(o, "<g class=\"lane\" data-class=\"");
        html_puts(o, logs.v[c]);
        fprintf(o, "\"><line class=\"lane-base\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
                ML, ML + f.pw, y + LANE - 3, y + LANE - 3, ML - 5, y + LANE - 4);
        html_puts(o, logs.v[c]);
        fputs("</text>", o);
        for (size_t b = 0; b < nbins; b++) {
            double v = lb[c * nbins + b];
            if (v <= 0)
                continue;
            fprintf(o, "<rect class=\"hit\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                       "fill-opacity=\"%.2f\"><title>log ",
                    sx(&f, (double)b * iv) + 0.5, y + 2, fmax(bw - 1, 1.5), LANE - 5, 0.35 + 0.65 * v / lmax);
            html_puts(o, logs.v[c]);
            fprintf(o, ": %g hits at %g-%gs</title></rect>", round(v * 10) / 10, (double)b * iv,
                    (double)(b + 1) * iv);
        }
        fputs("</g>\n", o);
    }
    fputs("</svg>\n<div class=\"legend\">", o);
    for (size_t c = 0; c < err.n; c++) {
        size_t ci = class_index((struct classes *)all_err, err.v[c], 0);
        fprintf(o, "<span><i class=\"box\" style=\"background:%s\"></i>", class_palette[ci % NCLASSPAL]);
        html_puts(o, err.v[c]);
        fputs("</span>", o);
    }
    if (logs.n)
        fputs("<span><i class=\"box\" style=\"background:#333\"></i>log hits (lanes below the axis)</span>", o);
    fputs("</div>\n</figure>\n", o);
    free(eb);
    free(lb);
    classes_free(&err);
    classes_free(&logs);
}

/* ---- the page ---- */

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,\"DejaVu Sans\",sans-serif;"
    "margin:20px 28px;color:#222;background:#fff}\n"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:30px 0 10px;border-bottom:1px solid #ddd;"
    "padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}\n"
    ".note{color:#555;font-size:13px;max-width:1200px}\n"
    "table{border-collapse:collapse;font-size:13px;margin:4px 0}"
    "th,td{padding:3px 9px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}"
    "th:first-child,td.l{text-align:left}thead th{border-bottom:2px solid #ccc}\n"
    "td.wrap{white-space:normal;text-align:left;max-width:700px;word-break:break-word}\n"
    "td.best{color:#116b2a;font-weight:600}td.worst{color:#b3261e;font-weight:600}"
    ".spread{color:#888;font-weight:normal;font-size:12px}td.run,th.run{color:#666}\n"
    "tr.differs td{background:#fff8e1}\n"
    ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(664px,1fr));gap:14px}\n"
    ".grid.small{grid-template-columns:repeat(auto-fill,minmax(300px,1fr))}figure.empty p{margin:2px 0}\n"
    "figure.chart{margin:0;border:1px solid #e2e2e2;border-radius:4px;padding:8px 10px 6px}\n"
    "figcaption{font-weight:600;margin-bottom:2px}\n"
    ".legend{display:flex;flex-wrap:wrap;gap:3px 16px;font-size:12.5px;margin-top:2px}\n"
    ".legend i{display:inline-block;width:20px;height:3px;vertical-align:middle;margin-right:5px}"
    ".legend i.box{width:11px;height:11px}\n"
    "svg{display:block;max-width:100%;height:auto}svg text{font-size:11px;fill:#444}"
    "svg .xlabel,svg .ylabel{font-size:12px;fill:#222}\n"
    "svg .gridline{stroke:#ececec}svg .axis,svg .tick{stroke:#999}svg .lane-base{stroke:#ddd}\n"
    "svg .send-end{stroke:#666;stroke-dasharray:5 4}svg .event{stroke:#000;stroke-width:1.5;stroke-dasharray:2 3}"
    "svg .event-label{font-size:10.5px;fill:#000}\n"
    "path.series{fill:none;stroke-width:1.7;stroke-linejoin:round;stroke-opacity:.85}\n"
    "svg .hit{fill:#333}svg .nodata{fill:#999;font-size:14px}\n"
    ".scroll{overflow-x:auto;max-width:100%}\n"
    ".warn{background:#fff4e5;border:1px solid #f0b35a;padding:8px 12px;margin:10px 0}\n"
    "details{margin:6px 0}summary{cursor:pointer}code{font-size:12.5px}\n";

static void json_text(FILE *o, const json_t *v)
{
    if (json_is_string(v))
        html_puts(o, json_string_value(v));
    else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            if (i)
                fputs(", ", o);
            json_text(o, x);
        }
    } else if (json_is_number(v)) {
        fprintf(o, "%.10g", json_number_value(v));
    } else if (v) {
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        html_puts(o, s);
        free(s);
    }
}

/* A table cell with a value from a file, "-" when it has none. */
static void td_value(FILE *o, const json_t *v, const char *cls)
{
    fprintf(o, *cls ? "<td class=\"%s\">" : "<td%s>", cls);
    if (v)
        json_text(o, v);
    else
        fputs("-", o);
    fputs("</td>", o);
}

static void write_runs(FILE *o, const struct result_set *rs)
{
    static const char *const keys[] = { "run_id", "seed", "start_time", "duration_s", "elapsed_s", "interrupted", "version" };
    static const char *const sums[] = { "delivered", "pending", "foreign", "lost", "server_crashes" };
    fputs("<h2 id=\"runs\">Runs</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th>run</th><th>file</th>", o);
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        fprintf(o, "<th>%s</th>", keys[k]);
    for (size_t k = 0; k < sizeof sums / sizeof *sums; k++)
        fprintf(o, "<th>%s</th>", sums[k]);
    fputs("</tr></thead>\n<tbody>\n", o);
    for (size_t i = 0; i < rs->n; i++) {
        char name[300];
        run_name(name, sizeof name, rs, i);
        fputs("<tr><td class=\"l\">", o);
        html_puts(o, name);
        fputs("</td><td class=\"l\"><code>", o);
        html_puts(o, rs->v[i].path);
        fputs("</code></td>", o);
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            td_value(o, json_object_get(rs->v[i].root, keys[k]), "");
        for (size_t k = 0; k < sizeof sums / sizeof *sums; k++)
            td_value(o, json_object_get(rs->v[i].summary, sums[k]), "");
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table></div>\n", o);
}

/* Error replies and matching log lines kept by each run, per label. */
static void write_examples(FILE *o, const struct result_set *rs)
{
    fputs("<h2 id=\"examples\">Error and log examples</h2>\n", o);
    int any = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const json_t *ex = json_object_get(rs->v[i].summary, "error_examples");
        const json_t *lc = json_object_get(rs->v[i].summary, "log_classes");
        if (!json_object_size(ex) && !json_object_size(lc))
            continue;
        char name[300];
        run_name(name, sizeof name, rs, i);
        fputs("<details><summary>", o);
        html_puts(o, name);
        fputs("</summary>\n<table><thead><tr><th>kind</th><th>class</th><th>count</th><th class=\"l\">example</th>"
              "</tr></thead><tbody>\n", o);
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)ex, k, v) {
            size_t j;
            json_t *line;
            json_array_foreach(v, j, line) {
                fputs("<tr><td class=\"l\">error</td><td class=\"l\">", o);
                html_puts(o, k);
                fputs("</td><td>", o);
                json_text(o, json_path_get(rs->v[i].summary, "errors_by_class") ?
                                 json_object_get(json_object_get(rs->v[i].summary, "errors_by_class"), k) : NULL);
                fputs("</td><td class=\"wrap\"><code>", o);
                json_text(o, line);
                fputs("</code></td></tr>\n", o);
            }
        }
        json_object_foreach((json_t *)lc, k, v) {
            size_t j;
            json_t *e;
            json_t *exs = json_object_get(v, "examples");
            if (!json_array_size(exs)) {
                fputs("<tr><td class=\"l\">log</td><td class=\"l\">", o);
                html_puts(o, k);
                fputs("</td><td>", o);
                json_text(o, json_object_get(v, "count"));
                fputs("</td><td></td></tr>\n", o);
            }
            json_array_foreach(exs, j, e) {
                double t;
                fputs("<tr><td class=\"l\">log</td><td class=\"l\">", o);
                html_puts(o, k);
                fputs("</td><td>", o);
                json_text(o, json_object_get(v, "count"));
                fputs("</td><td class=\"wrap\">", o);
                if (json_path_number(e, "t", &t) == 0)
                    fprintf(o, "at %gs: ", t);
                fputs("<code>", o);
                json_text(o, json_object_get(e, "line"));
                fputs("</code></td></tr>\n", o);
            }
        }
        fputs("</tbody></table></details>\n", o);
        any = 1;
    }
    if (!any)
        fputs("<p class=\"note\">No run kept error replies or log lines.</p>\n", o);
}

static void write_events(FILE *o, const struct result_set *rs)
{
    int any = 0;
    for (size_t i = 0; i < rs->n; i++) {
        size_t j;
        json_t *e;
        char name[300];
        run_name(name, sizeof name, rs, i);
        json_array_foreach(rs->v[i].events, j, e) {
            if (!any)
                fputs("<h2 id=\"events\">Server events</h2>\n<table><thead><tr><th>run</th><th>t (s)</th>"
                      "<th class=\"l\">kind</th><th class=\"l\">text</th></tr></thead><tbody>\n", o);
            any = 1;
            fputs("<tr><td class=\"l\">", o);
            html_puts(o, name);
            fputs("</td><td>", o);
            json_text(o, json_object_get(e, "t"));
            fputs("</td><td class=\"l\">", o);
            json_text(o, json_object_get(e, "kind"));
            fputs("</td><td class=\"wrap\">", o);
            json_text(o, json_object_get(e, "text"));
            fputs("</td></tr>\n", o);
        }
    }
    if (any)
        fputs("</tbody></table>\n", o);
}

/* The value of config[section][key] in run i, or NULL. */
static const json_t *config_value(const struct result *r, const char *section, const char *key)
{
    return json_object_get(json_object_get(r->config, section), key);
}

static void write_config(FILE *o, const struct result_set *rs)
{
    char name[300];
    fputs("<h2 id=\"config\">Effective configuration</h2>\n", o);
    /* First the settings that differ between runs (what makes the columns differ),
     * then each run's full configuration. */
    int header = 0;
    json_t *seen = json_object();
    for (size_t i = 0; i < rs->n; i++) {
        const char *sec, *key;
        json_t *s, *v;
        json_object_foreach(rs->v[i].config, sec, s) {
            json_object_foreach(s, key, v) {
                char id[600];
                snprintf(id, sizeof id, "%s.%s", sec, key);
                if (json_object_get(seen, id))
                    continue;
                json_object_set_new(seen, id, json_true());
                int same = 1;
                for (size_t j = 1; j < rs->n && same; j++)
                    same = json_equal(config_value(&rs->v[0], sec, key), config_value(&rs->v[j], sec, key)) ||
                           (!config_value(&rs->v[0], sec, key) && !config_value(&rs->v[j], sec, key));
                if (same)
                    continue;
                if (!header) {
                    fputs("<h3>Settings that differ between runs</h3>\n<div class=\"scroll\"><table><thead><tr><th>setting</th>", o);
                    for (size_t j = 0; j < rs->n; j++) {
                        run_name(name, sizeof name, rs, j);
                        fputs("<th class=\"l\">", o);
                        html_puts(o, name);
                        fputs("</th>", o);
                    }
                    fputs("</tr></thead><tbody>\n", o);
                    header = 1;
                }
                fputs("<tr class=\"differs\"><th>", o);
                html_puts(o, id);
                fputs("</th>", o);
                for (size_t j = 0; j < rs->n; j++) {
                    td_value(o, config_value(&rs->v[j], sec, key), "l");
                }
                fputs("</tr>\n", o);
            }
        }
    }
    json_decref(seen);
    if (header)
        fputs("</tbody></table></div>\n", o);
    else if (rs->n > 1)
        fputs("<p class=\"note\">All runs have the same configuration.</p>\n", o);
    for (size_t i = 0; i < rs->n; i++) {
        run_name(name, sizeof name, rs, i);
        fprintf(o, "<details%s><summary>", i == 0 ? " open" : "");
        html_puts(o, name);
        fputs(": <code>", o);
        html_puts(o, rs->v[i].path);
        fputs("</code></summary>\n", o);
        if (!json_object_size(rs->v[i].config)) {
            fputs("<p class=\"note\">This file has no configuration.</p></details>\n", o);
            continue;
        }
        fputs("<table><tbody>\n", o);
        const char *sec, *key;
        json_t *s, *v;
        json_object_foreach(rs->v[i].config, sec, s) {
            fputs("<tr><th colspan=\"2\">[", o);
            html_puts(o, sec);
            fputs("]</th></tr>\n", o);
            if (!json_is_object(s)) {
                fputs("<tr><td></td><td class=\"wrap\">", o);
                json_text(o, s);
                fputs("</td></tr>\n", o);
                continue;
            }
            json_object_foreach(s, key, v) {
                fputs("<tr><td class=\"l\">", o);
                html_puts(o, key);
                fputs("</td><td class=\"wrap\"><code>", o);
                json_text(o, v);
                fputs("</code></td></tr>\n", o);
            }
        }
        fputs("</tbody></table></details>\n", o);
    }
}

static const struct chart fixed_charts[] = {
    { "rate_in", "Messages sent per second", "messages/s", "rate_in", CU_RATE, 0, 0 },
    { "rate_out", "Messages read per second", "messages/s", "rate_out", CU_RATE, 0, 0 },
    { "spool", "Spool: messages queued at the server", "messages", "server/spool", CU_COUNT, 0, 0 },
    { "store_messages", "Store: messages in the mailboxes", "messages", "server/store_messages", CU_COUNT, 0, 0 },
    { "store_bytes", "Store: size of the mailboxes", "bytes", "server/store_bytes", CU_BYTES, 0, 0 },
    { "mem", "Server memory (whole process set)", "bytes", "server/mem", CU_BYTES, 0, 0 },
    { "input", "Server I/O: read operations per second", "ops/s", "server/input", CU_RATE, 1, 0 },
    { "output", "Server I/O: write operations per second", "ops/s", "server/output", CU_RATE, 1, 0 },
    { "ibytes", "Server I/O: bytes read per second", "bytes/s", "server/ibytes", CU_BYTES, 1, 0 },
    { "obytes", "Server I/O: bytes written per second", "bytes/s", "server/obytes", CU_BYTES, 1, 0 },
    { "procs", "Server processes", "processes", "server/procs", CU_COUNT, 0, 0 },
    { "conns", "Client connections open", "connections", "conns", CU_COUNT, 0, 0 },
    { "errors", "Errors per second (all classes)", "errors/s", "errors", CU_RATE, 1, 0 },
    { "log_hits", "Server log hits per second (all classes)", "hits/s", "server/log_hits", CU_RATE, 1, 1 },
    { "delivery_p50", "Delivery latency p50 (sent to read)", "ms", "latency/delivery/p50", CU_MS, 0, 0 },
    { "delivery_p99", "Delivery latency p99 (sent to read)", "ms", "latency/delivery/p99", CU_MS, 0, 0 },
};

static void sanitize_id(char *dst, size_t n, const char *src)
{
    size_t k = 0;
    for (; *src && k + 1 < n; src++)
        dst[k++] = ((*src >= 'a' && *src <= 'z') || (*src >= '0' && *src <= '9')) ? *src
                   : (*src >= 'A' && *src <= 'Z') ? (char)(*src - 'A' + 'a') : '_';
    dst[k] = 0;
}

/* The fixed charts, then a p99 chart per command found in any timeline. */
static struct chart *chart_list(const struct result_set *rs, size_t *n)
{
    struct classes cmds = { 0 };
    size_t nfixed = sizeof fixed_charts / sizeof *fixed_charts, *all = xcalloc(rs->n, sizeof *all), m = 0;
    for (size_t i = 0; i < rs->n; i++)
        all[i] = i;
    collect_classes(&cmds, rs, all, rs->n, "latency");
    free(all);
    struct chart *c = xcalloc(nfixed + cmds.n, sizeof *c);
    memcpy(c, fixed_charts, sizeof fixed_charts);
    for (size_t i = 0; i < cmds.n; i++) {
        if (!strcmp(cmds.v[i], "delivery") || strlen(cmds.v[i]) >= 100)
            continue;       /* delivery has its own charts; a name that long is no command */
        struct chart *x = &c[nfixed + m++];
        char id[56];
        sanitize_id(id, sizeof id, cmds.v[i]);
        snprintf(x->id, sizeof x->id, "lat_%s", id);
        snprintf(x->title, sizeof x->title, "Latency of %s, p99", cmds.v[i]);
        snprintf(x->ylabel, sizeof x->ylabel, "ms");
        snprintf(x->path, sizeof x->path, "latency/%s/p99", cmds.v[i]);
        x->unit = CU_MS;
    }
    *n = nfixed + m;
    classes_free(&cmds);
    return c;
}

int report_write_html(FILE *o, const struct result_set *rs, const char *workload_warning)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>mailsoak report: ", o);
    for (size_t g = 0; g < rs->ngroups; g++) {
        if (g)
            fputs(", ", o);
        html_puts(o, rs->groups[g].label);
    }
    fprintf(o, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>mailsoak report</h1>\n", css);
    fprintf(o, "<p class=\"note\">%zu run%s of %zu label%s", rs->n, rs->n == 1 ? "" : "s", rs->ngroups,
            rs->ngroups == 1 ? "" : "s");
    const json_t *ver = json_object_get(rs->v[0].root, "version");
    if (json_is_string(ver)) {
        fputs(", written by mailsoak ", o);
        html_puts(o, json_string_value(ver));
    }
    fputs(". Workload:", o);
    const char *k;
    json_t *v;
    if (!json_object_size(rs->v[0].workload))
        fputs(" not recorded", o);
    json_object_foreach(rs->v[0].workload, k, v) {
        fputs(" <code>", o);
        html_puts(o, k);
        fputc('=', o);
        json_text(o, v);
        fputs("</code>", o);
    }
    fputs(".</p>\n", o);
    if (workload_warning) {
        fputs("<p class=\"warn\">These runs are not comparable: ", o);
        html_puts(o, workload_warning);
        fputs(" (compared anyway because of --force).</p>\n", o);
    }
    fputs("<p class=\"note\"><a href=\"#summary\">Summary</a> · <a href=\"#charts\">Over time</a> · "
          "<a href=\"#classes\">Errors by class</a> · <a href=\"#runs\">Runs</a> · "
          "<a href=\"#examples\">Examples</a> · <a href=\"#config\">Configuration</a></p>\n", o);

    fputs("<h2 id=\"summary\">Summary</h2>\n", o);
    struct cmp_table t;
    cmp_build(&t, rs);
    fputs("<div class=\"scroll\">", o);
    cmp_write(o, &t, CMP_HTML, CMP_MARK);
    fputs("</div>\n", o);
    cmp_free(&t);
    fputs("<p class=\"note\">One column per label; with repeats, the mean of the runs and in grey their range "
          "(min-max). Green: best of the row, red: worst. \"-\": not measured in these runs. "
          "I/O is operations and bytes over the whole run.</p>\n", o);

    fputs("<h2 id=\"charts\">Over time</h2>\n<p class=\"note\">x: seconds since the start of each run. "
          "One line per run, in its label's colour (repeats share it). Dashed grey line: the senders stop "
          "(drain and sweep follow); dotted black line: a server event such as a crash. Rates and I/O are per "
          "second over each interval.</p>\n<div class=\"grid\">\n", o);
    size_t nc, nfixed = sizeof fixed_charts / sizeof *fixed_charts, nempty = 0;
    struct chart *charts = chart_list(rs, &nc);
    size_t *all = xcalloc(rs->n, sizeof *all);
    for (size_t i = 0; i < rs->n; i++)
        all[i] = i;
    for (size_t c = 0; c < nfixed; c++)
        nempty += !line_chart(o, rs, &charts[c], all, 0);
    fputs("</div>\n", o);
    if (nc > nfixed) {
        fputs("<h3>Latency of each command, p99</h3>\n<div class=\"grid\">\n", o);
        for (size_t c = nfixed; c < nc; c++)
            nempty += !line_chart(o, rs, &charts[c], all, 0);
        fputs("</div>\n", o);
    }
    /* What no run measured goes last and small, so it does not push the rest down. */
    if (nempty) {
        fputs("<h3>Not recorded</h3>\n<p class=\"note\">No run has these series (a run without [server] "
              "settings has no server-side samples).</p>\n<div class=\"grid small\">\n", o);
        for (size_t c = 0; c < nc; c++)
            line_chart(o, rs, &charts[c], all, 1);
        fputs("</div>\n", o);
    }
    free(all);
    free(charts);

    fputs("<h2 id=\"classes\">Errors and log hits by class</h2>\n<p class=\"note\">Bars: client errors per "
          "interval, stacked by class (a class has the same colour in every chart). Lanes under the axis: "
          "matching server log lines by class; a darker tick means more hits.</p>\n<div class=\"grid\">\n", o);
    struct classes all_err = { 0 };
    for (size_t g = 0; g < rs->ngroups; g++)
        collect_classes(&all_err, rs, rs->groups[g].runs, rs->groups[g].n, "errors_by_class");
    for (size_t g = 0; g < rs->ngroups; g++)
        class_chart(o, rs, g, &all_err, g + 1);
    classes_free(&all_err);
    fputs("</div>\n", o);

    write_runs(o, rs);
    write_events(o, rs);
    write_examples(o, rs);
    write_config(o, rs);
    fputs("</body>\n</html>\n", o);
    return ferror(o) ? -1 : 0;
}

/* ---- timeline CSV ---- */

static void csv_num(FILE *o, const json_t *e, const char *path)
{
    double v;
    fputc(',', o);
    if (json_path_number(e, path, &v) == 0)
        fprintf(o, "%.10g", v);
}

/* One column per class; a class absent from an entry had no hits then (0, not unknown)
 * as long as the entry has the object at all. */
static void csv_classes(FILE *o, const json_t *counts, const struct classes *cl)
{
    for (size_t k = 0; k < cl->n; k++) {
        const json_t *v = json_object_get(counts, cl->v[k]);
        fputc(',', o);
        if (json_is_number(v))
            fprintf(o, "%.10g", json_number_value(v));
        else if (json_is_object(counts))
            fputc('0', o);
    }
}

int report_write_csv(FILE *o, const struct result_set *rs)
{
    static const char *const base[] = {
        "sent", "read", "errors", "rate_in", "rate_out", "conns", "server/mem", "server/spool",
        "server/store_messages", "server/store_bytes", "server/procs", "server/input", "server/output",
        "server/ibytes", "server/obytes",
    };
    struct classes lat = { 0 }, err = { 0 }, logs = { 0 };
    size_t *all = xcalloc(rs->n, sizeof *all);
    for (size_t i = 0; i < rs->n; i++)
        all[i] = i;
    collect_classes(&lat, rs, all, rs->n, "latency");
    collect_classes(&err, rs, all, rs->n, "errors_by_class");
    collect_classes(&logs, rs, all, rs->n, "server/log_hits");
    fputs("file,label,run_id,t,phase", o);
    for (size_t k = 0; k < sizeof base / sizeof *base; k++)
        fprintf(o, ",%s", strchr(base[k], '/') ? strchr(base[k], '/') + 1 : base[k]);
    char name[300];
    for (size_t k = 0; k < lat.n; k++)
        for (int p = 0; p < 2; p++) {
            snprintf(name, sizeof name, "%s %s", lat.v[k], p ? "p99" : "p50");
            fputc(',', o);
            csv_puts(o, name);
        }
    for (size_t k = 0; k < err.n; k++) {
        snprintf(name, sizeof name, "error %s", err.v[k]);
        fputc(',', o);
        csv_puts(o, name);
    }
    for (size_t k = 0; k < logs.n; k++) {
        snprintf(name, sizeof name, "log %s", logs.v[k]);
        fputc(',', o);
        csv_puts(o, name);
    }
    fputc('\n', o);
    for (size_t i = 0; i < rs->n; i++) {
        const struct result *r = &rs->v[i];
        size_t j;
        json_t *e;
        json_array_foreach(r->timeline, j, e) {
            if (!json_is_object(e))
                continue;
            csv_puts(o, r->path);
            fputc(',', o);
            csv_puts(o, r->label);
            fputc(',', o);
            csv_puts(o, json_string_value(json_object_get(r->root, "run_id")));
            csv_num(o, e, "t");
            fputc(',', o);
            csv_puts(o, json_string_value(json_object_get(e, "phase")));
            for (size_t k = 0; k < sizeof base / sizeof *base; k++)
                csv_num(o, e, base[k]);
            for (size_t k = 0; k < lat.n; k++)
                for (int p = 0; p < 2; p++) {
                    snprintf(name, sizeof name, "latency/%s/%s", lat.v[k], p ? "p99" : "p50");
                    csv_num(o, e, name);
                }
            csv_classes(o, json_object_get(e, "errors_by_class"), &err);
            csv_classes(o, json_path_get(e, "server/log_hits"), &logs);
            fputc('\n', o);
        }
    }
    free(all);
    classes_free(&lat);
    classes_free(&err);
    classes_free(&logs);
    return ferror(o) ? -1 : 0;
}

/* Writes one output atomically; on any failure the old file stays. */
static int write_out(const char *path, int (*fn)(FILE *, const struct result_set *, const char *),
                     const struct result_set *rs, const char *msg, FILE *err)
{
    struct atomic_file a;
    char why[600] = "";
    if (atomic_open(&a, path, why, sizeof why) < 0 ||
        atomic_commit(&a, path, fn(a.f, rs, msg) == 0, why, sizeof why) < 0) {
        if (why[0])
            fprintf(err, "report: %s\n", why);
        return -1;
    }
    return 0;
}

static int html_out(FILE *f, const struct result_set *rs, const char *msg)
{
    return report_write_html(f, rs, msg);
}

static int csv_out(FILE *f, const struct result_set *rs, const char *msg)
{
    (void)msg;
    return report_write_csv(f, rs);
}

static void usage(FILE *f)
{
    fputs("usage: mailsoak report -o REPORT.html [--csv TIMELINE.csv] [--force] FILE.json...\n"
          "  One self-contained HTML page: the summary table, charts over time (one line per run,\n"
          "  coloured by label), errors and log hits by class, the runs and their configuration.\n"
          "  -o, --output F  the HTML file to write (atomically)\n"
          "  --csv F         also write the timeline as CSV, one row per file per entry\n"
          "  --force         report files even when their workloads differ\n", f);
}

static int want_value(int argc, char **argv, int *i, const char **val, FILE *err)
{
    const char *a = argv[*i], *eq = strchr(a, '=');
    if (a[0] == '-' && a[1] == '-' && eq) {
        *val = eq + 1;
        return 0;
    }
    if (*i + 1 >= argc) {
        fprintf(err, "report: %s needs a file name\n", a);
        return -1;
    }
    *val = argv[++*i];
    return 0;
}

static int is_opt(const char *a, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(a, name, n) && (a[n] == 0 || (a[n] == '=' && name[1] == '-'));
}

int report_main(int argc, char **argv, FILE *out, FILE *err)
{
    const char *html = NULL, *csv = NULL;
    int force = 0, rc = 0;
    char **files = xcalloc((size_t)argc, sizeof *files);
    size_t nfiles = 0;
    char msg[2600];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            while (++i < argc)
                files[nfiles++] = argv[i];
            break;
        }
        if (is_opt(a, "-o") || is_opt(a, "--output")) {
            if (want_value(argc, argv, &i, &html, err) < 0)
                goto usage_error;
        } else if (is_opt(a, "--csv")) {
            if (want_value(argc, argv, &i, &csv, err) < 0)
                goto usage_error;
        } else if (!strcmp(a, "--force"))
            force = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(out);
            goto done;
        } else if (a[0] == '-' && a[1]) {
            fprintf(err, "report: unknown option '%s'\n", a);
            goto usage_error;
        } else
            files[nfiles++] = argv[i];
    }
    if (!nfiles || !html || !*html) {
        fprintf(err, "report: %s\n", !nfiles ? "no result files given" : "-o REPORT.html is required");
        goto usage_error;
    }
    struct result_set rs;
    if ((rc = results_open(&rs, files, nfiles, force, "report", err, msg, sizeof msg)) != 0)
        goto done;
    if (write_out(html, html_out, &rs, msg[0] ? msg : NULL, err) < 0 ||
        (csv && write_out(csv, csv_out, &rs, NULL, err) < 0))
        rc = 1;
    results_free(&rs);
    goto done;
usage_error:
    usage(err);
    rc = 2;
done:
    free(files);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    return report_main(argc, argv, stdout, stderr);
}
