/* chart: SVG charts for the report, drawn from result timelines. Every string from a
 * result file goes through html_puts; a key a run lacks leaves a gap in its line,
 * never a zero. Repeats are drawn as one line per run in their label's colour, so
 * their spread shows. */
#include "analyse/chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "lib/alloc.h"
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

static const char *colour(size_t g)
{
    return palette[g % NPALETTE];
}

/* ---- values over time ---- */

static int entry_value(const struct result_entry *e, const struct chart *c, double dt, double *v)
{
    const struct result_value *x = NULL;
    if (c->of == CHART_LOG_HITS) {
        if (!e->log_hits.has)
            return -1;
        *v = 0;
        for (size_t k = 0; k < e->log_hits.n; k++)
            *v += e->log_hits.count[k].v;
    } else {
        if (c->of == CHART_FIG)
            x = &e->fig[c->fig];
        for (size_t k = 0; c->of == CHART_LATENCY && k < e->nlat; k++)
            if (!strcmp(e->lat[k].name, c->lat))
                x = c->p99 ? &e->lat[k].p99 : &e->lat[k].p50;
        if (!x || !x->has)
            return -1;
        *v = x->v;
    }
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
    double prev = 0, t, v;
    for (size_t i = 0; i < r->display.nentries; i++) {
        const struct result_entry *e = &r->display.entries[i];
        if (!e->object || entry_t(e, &t) < 0)
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
    /* a duration's axis is labelled in the unit its ticks are written in (tick_label) */
    if (u == CU_MS)
        ylabel = f->ystep >= 1000 ? "seconds" : "ms";
    html_puts(o, ylabel);
    fputs("</text></g>\n", o);
}

/* What the server did, as opposed to what the run noted (a queue recognised at the
 * start, a probe that stopped answering): only these are drawn across the charts;
 * the report's table of events lists them all. */
static int server_event(const struct result_event *e)
{
    return e->kind && (!strcmp(e->kind, "crash") || !strcmp(e->kind, "restart"));
}

/* The end of the send window and the server events, on every time chart. */
static void draw_markers(FILE *o, const struct frame *f, const struct result_set *rs, const size_t *runs, size_t nruns)
{
    double done[64];
    size_t ndone = 0;
    for (size_t j = 0; j < nruns; j++) {
        const struct result *r = &rs->v[runs[j]];
        const struct result_value *dur = &r->display.duration;
        double d = dur->v;
        if (dur->has && d > 0 && d <= f->xmax) {
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
        for (size_t i = 0; i < r->display.nevents; i++) {
            const struct result_event *e = &r->display.events[i];
            double t = e->t.v;
            char name[300];
            if (!e->t.has || t < 0 || t > f->xmax || !server_event(e))
                continue;
            run_name(name, sizeof name, rs, runs[j]);
            fprintf(o, "<text class=\"event-label\" x=\"%.1f\" y=\"%.1f\">", sx(f, t) + 3, MT + 9);
            html_puts(o, e->kind);
            fputs(" (", o);
            html_puts(o, name);
            fprintf(o, ")</text><line class=\"event\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"><title>",
                    sx(f, t), sx(f, t), MT, MT + f->ph);
            html_puts(o, name);
            fprintf(o, " at %gs: ", t);
            html_puts(o, e->kind);
            fputs(": ", o);
            html_puts(o, e->text);
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

size_t chart_line(FILE *o, const struct result_set *rs, const struct chart *c, const size_t *runs, size_t nruns,
                  int draw_empty)
{
    struct range_ctx rc = { 0, 0, 0 };
    size_t *npts = xcalloc(rs->n, sizeof *npts), nseries = 0;
    char *drawn = xcalloc(rs->n + 1, 1);
    for (size_t j = 0; j < nruns; j++)
        drawn[runs[j]] = 1;
    for (size_t i = 0; i < rs->n; i++) {
        size_t before = rc.n;
        if (!drawn[i])
            continue;
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
        free(drawn);
        return nseries;
    }
    struct frame f;
    frame_init(&f, rc.xmax, rc.ymax, c->unit, H);
    fprintf(o, "<figure class=\"chart\" id=\"chart-%s\" data-series=\"%zu\">\n<figcaption>", c->id, nseries);
    html_puts(o, c->title);
    fprintf(o, "</figcaption>\n<svg viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\">\n",
            W, H, W, H);
    draw_axes(o, &f, c->unit, c->ylabel);
    draw_markers(o, &f, rs, runs, nruns);
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
    free(drawn);
    return nseries;
}

/* ---- errors and log hits by class, one chart per label ---- */

/* The typical interval: the median gap between entries of the first run that has any. */
static double interval_of(const struct result_set *rs, const size_t *runs, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        const struct result_display *rd = &rs->v[runs[j]].display;
        size_t m = rd->nentries, k = 0;
        double *d = xcalloc(m + 1, sizeof *d), prev = 0, t;
        for (size_t i = 0; i < m; i++)
            if (entry_t(&rd->entries[i], &t) == 0) {
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
                        const size_t *runs, size_t n, enum class_of of)
{
    for (size_t j = 0; j < n; j++) {
        const struct result_display *d = &rs->v[runs[j]].display;
        for (size_t i = 0; i < d->nentries; i++) {
            const struct result_entry *e = &d->entries[i];
            double t;
            if (entry_t(e, &t) < 0 || t < 0)
                continue;
            long b = (long)ceil(t / iv - 1e-9) - 1;
            if (b < 0)
                b = 0;
            if ((size_t)b >= nbins)
                continue;
            const struct result_classes *counts = entry_classes(e, of);
            for (size_t k = 0; k < counts->n; k++) {
                size_t c = class_index(cl, counts->name[k].key, 0);
                if (c != (size_t)-1)
                    bins[c * nbins + (size_t)b] += counts->count[k].v / (double)n;
            }
        }
    }
}

void chart_classes(FILE *o, const struct result_set *rs, size_t g, const struct classes *all_err, size_t chart_no)
{
    const struct result_group *grp = &rs->groups[g];
    struct classes err = { 0 }, logs = { 0 };
    /* Colours by the class's place among all labels' classes, so pop3_lock is the
     * same colour in every label's chart. */
    collect_classes(&err, rs, grp->runs, grp->n, CLASS_ERRORS);
    collect_classes(&logs, rs, grp->runs, grp->n, CLASS_LOG_HITS);
    double iv = interval_of(rs, grp->runs, grp->n), xmax = 0;
    for (size_t j = 0; j < grp->n; j++) {
        const struct result_display *d = &rs->v[grp->runs[j]].display;
        double t;
        if (d->nentries && entry_t(&d->entries[d->nentries - 1], &t) == 0 && t > xmax)
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
    bin_classes(eb, nbins, iv, &err, rs, grp->runs, grp->n, CLASS_ERRORS);
    bin_classes(lb, nbins, iv, &logs, rs, grp->runs, grp->n, CLASS_LOG_HITS);
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

/* A run's kind of server (run.server_kind), "" when not recorded. */
static const char *run_kind(const struct result *r)
{
    return r->display.server_kind ? r->display.server_kind : "";
}

/* The reference server's thousands of messages a second on one linear axis with
 * Postfix + Dovecot's hundreds would flatten the latter's lines: a chart per kind. */
size_t chart_lines_by_kind(FILE *o, const struct result_set *rs, const struct chart *charts, size_t nfixed)
{
    size_t *runs = xcalloc(rs->n + 1, sizeof *runs), *series = xcalloc(nfixed + 1, sizeof *series), nempty = 0;
    const char **kinds = xcalloc(rs->n + 1, sizeof *kinds);
    size_t nkinds = 0;
    for (size_t i = 0; i < rs->n; i++) {
        size_t k = 0;
        while (k < nkinds && strcmp(kinds[k], run_kind(&rs->v[i])))
            k++;
        if (k == nkinds)
            kinds[nkinds++] = run_kind(&rs->v[i]);
    }
    for (size_t k = 0; k < nkinds; k++) {
        size_t n = 0;
        for (size_t i = 0; i < rs->n; i++)
            if (!strcmp(run_kind(&rs->v[i]), kinds[k]))
                runs[n++] = i;
        for (size_t c = 0; c < nfixed; c++) {
            struct chart one = charts[c];
            if (nkinds > 1) {
                snprintf(one.title, sizeof one.title, "%s: %s", *kinds[k] ? kinds[k] : "kind not recorded",
                         charts[c].title);
                snprintf(one.id, sizeof one.id, "%s-%zu", charts[c].id, k + 1);
            }
            series[c] += chart_line(o, rs, &one, runs, n, 0);
        }
    }
    for (size_t c = 0; c < nfixed; c++)
        nempty += !series[c];
    free(kinds);
    free(series);
    free(runs);
    return nempty;
}
