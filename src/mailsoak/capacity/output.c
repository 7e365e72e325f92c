/* output: the writers of a capacity search (include/capacity/output.h). */
#include "capacity/output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "lib/alloc.h"
#include "lib/version.h"

static const char *const step_verdict_names[] = { "pass", "fail", "invalid" };

static double ms(uint64_t ns) { return (double)ns / 1e6; }

const struct step_record *capacity_at(const struct capacity_record *c)
{
    double cap = search_capacity(&c->s);
    for (size_t i = c->nsteps; i-- > 0;)
        if (c->steps[i].j.verdict == STEP_PASS && c->steps[i].rate == cap && c->steps[i].f)
            return &c->steps[i];
    return NULL;
}

const struct step_record *capacity_first_failure(const struct capacity_record *c)
{
    const struct step_record *best = NULL;
    double cap = search_capacity(&c->s);
    for (size_t i = 0; i < c->nsteps; i++) {
        const struct step_record *st = &c->steps[i];
        if (st->j.verdict != STEP_FAIL || st->rate <= cap)
            continue;
        if (!best || st->rate < best->rate)
            best = st;
    }
    return best;
}

/* The first failed check's name, or the invalid step's reason, in a few words. */
static const char *outcome(const struct step_record *st)
{
    if (st->j.verdict == STEP_FAIL && st->j.first_failed >= 0)
        return st->j.v[st->j.first_failed].name;
    if (st->j.verdict == STEP_INVALID)
        return st->j.fix == FIX_SENDERS ? "senders busy" : st->j.fix == FIX_READERS ? "readers behind"
             : st->j.fix == FIX_WINDOW ? "unsteady" : "tester";
    return "";
}

void capacity_step_line(FILE *f, const struct step_record *st)
{
    const struct step_figures *x = st->f;
    fprintf(f, "%4u %-12s %9.1f", st->n, st->phase, st->rate);
    if (!x) {
        fprintf(f, "  %s\n", st->j.why);
        return;
    }
    int w = step_worst_command(x, 95);
    char worst[40] = "-";
    if (w >= 0)
        snprintf(worst, sizeof worst, "%s %.0f", lat_names[w], ms(hist_percentile(&x->lat[w], 95)));
    uint64_t attempts = x->c.smtp_sessions + x->c.pop3_sessions;
    fprintf(f, " %8.1f %8.1f %9.1f %8.2f %9.0f  %-20s %6.2f  %-7s %s\n", x->offered, x->accepted, x->delivered,
            x->unread_slope, ms(hist_percentile(&x->lat[LAT_DELIVERY], 95)), worst,
            attempts ? 100.0 * (double)x->c.errors / (double)attempts : 0, step_verdict_names[st->j.verdict], outcome(st));
}

void capacity_step_header(FILE *f)
{
    fprintf(f, "%4s %-12s %9s %8s %8s %9s %8s %9s  %-20s %6s  %s\n", "step", "phase", "rate", "offered", "accepted",
            "delivered", "queue/s", "deliv p95", "worst command p95", "err %", "verdict");
    fprintf(f, "%4s %-12s %9s %8s %8s %9s %8s %9s  %-20s\n", "", "", "msg/s", "msg/s", "msg/s", "msg/s", "msg/s", "ms",
            "ms");
}

/* "known between A and B msg/s (S %): why that wide", or 0 when nothing is known. */
static int known_line(const struct search *s, char *b, size_t n)
{
    double c = search_capacity(s), lo = search_known_lo(s), hi = search_known_hi(s);
    if (!(c > 0))
        return 0;
    int noisy = s->fail_min > 0 && s->fail_min <= s->pass_max;
    int off = snprintf(b, n, "between %.1f and %.1f msg/s (%.0f %% of the capacity): ", lo, hi, 100 * (hi - lo) / c);
    if (off < 0 || (size_t)off >= n)
        return 1;
    if (noisy)
        snprintf(b + off, n - (size_t)off,
                 "steps passed up to %.1f and failed from %.1f msg/s, by chance between them (the server's own noise)",
                 s->pass_max, s->fail_min);
    else if (s->fail_min > 0)
        snprintf(b + off, n - (size_t)off, "the capacity held, the lowest rate that failed %.1f msg/s", s->fail_min);
    else
        snprintf(b + off, n - (size_t)off, "no rate failed");
    return 1;
}

static const char *confirmation_word(const struct search *s)
{
    return !s->r.confirm ? "(no confirmation asked)" : search_confirmed(s) ? "confirmed" : "NOT confirmed";
}

static int longer_windows(const struct capacity_record *c)
{
    for (size_t i = 0; i < c->nsteps; i++)
        if (c->steps[i].window_s > c->window_s)
            return 1;
    return 0;
}

void capacity_table(FILE *f, const struct capacity_record *c)
{
    const struct search *s = &c->s;
    char b[400];
    fprintf(f, "\n");
    if (search_found(s)) {
        double cap = search_capacity(s);
        fprintf(f, "capacity     %.1f msg/s (%.0f msg/min), %s", cap, cap * 60, confirmation_word(s));
        const struct step_record *at = capacity_at(c);
        if (at)
            fprintf(f, " (its step offered %.1f and delivered %.1f msg/s)", at->f->offered, at->f->delivered);
        fputc('\n', f);
        if (known_line(s, b, sizeof b))
            fprintf(f, "known        %s\n", b);
    } else {
        fprintf(f, "capacity     not found%s\n", s->lo > 0 ? " (the search ended before a rate failed)" : "");
        if (s->lo > 0)
            fprintf(f, "             at least %.1f msg/s (%.0f msg/min) passed\n", s->lo, s->lo * 60);
    }
    fprintf(f, "search       %s\n", s->end[0] ? s->end : "not finished");
    if (s->round > 0) {
        fprintf(f, "confirmation of %.1f msg/s (round %d):", s->base, s->round);
        for (int i = 0; i < 3; i++)
            fprintf(f, "  %.0f %%: %s", 100 * search_confirm_share[i],
                    s->confirmed[i] < 0 ? "not run" : s->confirmed[i] ? "pass" : "fail");
        fprintf(f, "%s\n", search_confirmed(s) ? "  (as SPECmail2001 asks)" : "  (NOT as SPECmail2001 asks)");
    }
    const struct step_record *ff = capacity_first_failure(c);
    if (ff && ff->j.first_failed >= 0)
        fprintf(f, "first to fail above it: %s (at %.1f msg/s)\n",
                step_check_describe(&ff->j.v[ff->j.first_failed], b, sizeof b), ff->rate);
    for (size_t i = 0; i < c->nsteps; i++) {
        const struct step_record *st = &c->steps[i];
        if (st->j.verdict == STEP_INVALID && st->j.fix == FIX_WINDOW)
            fprintf(f, "step %u is not judged, its %.0f s window too short: %s\n", st->n, st->window_s, st->j.why);
        else if (st->j.verdict == STEP_INVALID)
            fprintf(f, "step %u is invalid, not the server's: %s\n", st->n, st->j.why);
        else if (st->f && st->ruled_out & 1u << FIX_WINDOW)
            fprintf(f, "step %u is judged on its whole %.0f s window, the longest the search runs, though its "
                    "halves disagree (%+.1f and %+.1f msg/s)\n", st->n, st->window_s, st->f->unread_half[0],
                    st->f->unread_half[1]);
        else if (st->f && st->ruled_out & 1u << FIX_SENDERS)
            fprintf(f, "step %u is the server's: more senders had no more mail accepted at %.1f msg/s (%u got "
                    "%.1f), so its arrivals waited for the server\n", st->n, st->rate, st->senders, st->f->accepted);
        else if (st->f && st->ruled_out & 1u << FIX_READERS)
            fprintf(f, "step %u is the server's: more readers read no more at %.1f msg/s (%u read %.1f), so the "
                    "mail in the mailboxes waited for the server\n", st->n, st->rate, st->readers, st->f->delivered);
    }
    fprintf(f, "steps        %zu in %.0f s, each a %.0f s ramp, a %.0f s warm-up and a %.0f s steady window%s\n\n",
            c->nsteps, c->elapsed_s, c->ramp_s, c->warmup_s, c->window_s,
            longer_windows(c) ? " (longer where run again unsteady)" : "");
    capacity_step_header(f);
    for (size_t i = 0; i < c->nsteps; i++)
        capacity_step_line(f, &c->steps[i]);
    if (c->interrupted)
        fprintf(f, "\n(interrupted: the search ended early on a signal)\n");
}

static json_t *lat_p95(const struct step_figures *x)
{
    json_t *o = json_object();
    for (unsigned k = 0; k < LAT_COUNT; k++)
        if (x->lat[k].count && (step_is_command(k) || k == LAT_DELIVERY))
            json_object_set_new(o, lat_names[k], json_real(ms(hist_percentile(&x->lat[k], 95))));
    return o;
}

static json_t *step_json(const struct step_record *st)
{
    json_t *o = json_pack("{s:I, s:s, s:f, s:I, s:I, s:i, s:s, s:s}", "step", (json_int_t)st->n, "phase", st->phase,
                          "rate", st->rate, "senders", (json_int_t)st->senders, "readers", (json_int_t)st->readers,
                          "exit_status", st->exit_status, "result", st->json, "verdict", step_verdict_names[st->j.verdict]);
    if (st->j.verdict == STEP_INVALID)
        json_object_set_new(o, "invalid", json_string(st->j.why));
    const struct step_figures *x = st->f;
    if (x) {
        uint64_t attempts = x->c.smtp_sessions + x->c.pop3_sessions;
        json_object_set_new(o, "window_s", json_real(x->window_s));
        json_object_set_new(o, "offered", json_real(x->offered));
        json_object_set_new(o, "accepted", json_real(x->accepted));
        json_object_set_new(o, "delivered", json_real(x->delivered));
        json_object_set_new(o, "queue_slope", json_real(x->unread_slope));
        json_object_set_new(o, "queue_slope_halves", json_pack("[f, f]", x->unread_half[0], x->unread_half[1]));
        json_object_set_new(o, "p95_ms", lat_p95(x));
        json_object_set_new(o, "errors", json_integer((json_int_t)x->c.errors));
        json_object_set_new(o, "error_share", json_real(attempts ? (double)x->c.errors / (double)attempts : 0));
        json_object_set_new(o, "late", json_integer((json_int_t)(x->c.late_busy + x->c.late_engine)));
        json_object_set_new(o, "left_behind", json_integer((json_int_t)x->c.left_behind));
        json_object_set_new(o, "senders_ruled_out", json_boolean(st->ruled_out & 1u << FIX_SENDERS));
        json_object_set_new(o, "readers_ruled_out", json_boolean(st->ruled_out & 1u << FIX_READERS));
        json_object_set_new(o, "window_ruled_out", json_boolean(st->ruled_out & 1u << FIX_WINDOW));
        json_object_set_new(o, "lost", json_integer((json_int_t)x->lost));
        json_object_set_new(o, "duplicated", json_integer((json_int_t)x->duplicated));
        json_object_set_new(o, "corrupted", json_integer((json_int_t)x->corrupted));
        json_object_set_new(o, "pending", json_integer((json_int_t)x->pending));
    }
    json_t *checks = json_array();
    for (unsigned i = 0; i < st->j.n; i++) {
        const struct step_check *ch = &st->j.v[i];
        json_array_append_new(checks, json_pack("{s:s, s:b, s:f, s:s, s:f, s:s}", "name", ch->name, "pass", ch->pass,
                                                "value", ch->value, "op", ch->op, "bound", ch->bound, "unit", ch->unit));
    }
    json_object_set_new(o, "checks", checks);
    return o;
}

json_t *capacity_json(const struct capacity_record *c)
{
    const struct search *s = &c->s;
    int found = search_found(s);
    json_t *root = json_pack("{s:s, s:i, s:s, s:s, s:s, s:f, s:b}", "format", CAPACITY_FORMAT, "format_version",
                             CAPACITY_FORMAT_VERSION, "version", mailsoak_version, "label", c->label, "start_time",
                             c->start_time, "elapsed_s", c->elapsed_s, "interrupted", c->interrupted);
    json_object_set_new(root, "method",
                        json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:s}", "source",
                                  "SPECmail2001 (open-loop Poisson arrivals, QoS gates, 80/100/120 % confirmation), "
                                  "with lost = duplicated = corrupted = 0 and a steady backlog",
                                  "ramp_s", c->ramp_s, "warmup_s", c->warmup_s, "window_s", c->window_s, "start", s->r.start, "factor",
                                  s->r.factor, "max_rate", s->r.max_rate, "precision", s->r.precision, "queue_growth",
                                  c->rules.queue_growth, "p95_bound_ms", 5000.0, "confirm",
                                  s->r.confirm, "readers_visit", c->visit_owed ? "owed" : "random"));
    double cap = search_capacity(s);
    json_object_set_new(root, "capacity_msg_s", found ? json_real(cap) : json_null());
    json_object_set_new(root, "capacity_msg_min", found ? json_real(cap * 60) : json_null());
    json_object_set_new(root, "known_between",
                        found ? json_pack("[f, f]", search_known_lo(s), search_known_hi(s)) : json_null());
    json_object_set_new(root, "spread", found ? json_real((search_known_hi(s) - search_known_lo(s)) / cap) : json_null());
    json_object_set_new(root, "highest_pass", s->pass_max > 0 ? json_real(s->pass_max) : json_null());
    json_object_set_new(root, "lowest_fail", s->fail_min > 0 ? json_real(s->fail_min) : json_null());
    const struct step_record *at = capacity_at(c);
    json_object_set_new(root, "capacity_offered_msg_s", found && at ? json_real(at->f->offered) : json_null());
    json_object_set_new(root, "capacity_delivered_msg_s", found && at ? json_real(at->f->delivered) : json_null());
    json_object_set_new(root, "passes_at", s->lo > 0 ? json_real(s->lo) : json_null());
    json_object_set_new(root, "fails_at", s->hi > 0 ? json_real(s->hi) : json_null());
    json_object_set_new(root, "end", json_string(s->end));
    json_t *conf = json_object();
    for (int i = 0; i < 3; i++) {
        char k[8];
        snprintf(k, sizeof k, "%.0f", 100 * search_confirm_share[i]);
        json_object_set_new(conf, k, s->confirmed[i] < 0 ? json_null() : json_boolean(s->confirmed[i]));
    }
    json_object_set_new(root, "confirmation", conf);
    json_object_set_new(root, "confirm_round", json_integer(s->round));
    json_object_set_new(root, "confirm_base", s->round ? json_real(s->base) : json_null());
    json_object_set_new(root, "confirmed", json_boolean(search_confirmed(s)));
    const struct step_record *ff = capacity_first_failure(c);
    if (ff && ff->j.first_failed >= 0) {
        const struct step_check *ch = &ff->j.v[ff->j.first_failed];
        json_object_set_new(root, "first_failed",
                            json_pack("{s:s, s:f, s:f, s:s, s:s, s:f}", "name", ch->name, "value", ch->value, "bound",
                                      ch->bound, "op", ch->op, "unit", ch->unit, "rate", ff->rate));
    } else {
        json_object_set_new(root, "first_failed", json_null());
    }
    json_t *steps = json_array();
    for (size_t i = 0; i < c->nsteps; i++)
        json_array_append_new(steps, step_json(&c->steps[i]));
    json_object_set_new(root, "steps", steps);
    return root;
}

/* --- the HTML page: two charts against the offered rate, then the table --- */

struct axis {
    double lo, hi;
};

static double nice_top(double v)
{
    if (!(v > 0))
        return 1;
    double p = pow(10, floor(log10(v)));
    static const double m[] = { 1, 2, 2.5, 5, 10 };
    for (unsigned i = 0; i < 5; i++)
        if (v <= m[i] * p)
            return m[i] * p;
    return 10 * p;
}

#define W 640
#define H 300
#define ML 60
#define MR 20
#define MT 20
#define MB 40

static double px(const struct axis *a, double v) { return ML + (v - a->lo) / (a->hi - a->lo) * (W - ML - MR); }
static double py(const struct axis *a, double v) { return H - MB - (v - a->lo) / (a->hi - a->lo) * (H - MT - MB); }

static const char *const colours[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd" };

static void axes(FILE *f, const struct axis *x, const struct axis *y, const char *xl, const char *yl)
{
    fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/>", ML, H - MB, W - MR, H - MB);
    fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/>", ML, MT, ML, H - MB);
    for (int i = 0; i <= 4; i++) {
        double xv = x->lo + (x->hi - x->lo) * i / 4, yv = y->lo + (y->hi - y->lo) * i / 4;
        fprintf(f, "<text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%g</text>", px(x, xv), H - MB + 15, xv);
        fprintf(f, "<text x='%d' y='%.1f' font-size='11' text-anchor='end'>%g</text>", ML - 4, py(y, yv) + 4, yv);
        fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#eee'/>", ML + 1, py(y, yv), W - MR, py(y, yv));
    }
    fprintf(f, "<text x='%d' y='%d' font-size='12' text-anchor='middle'>", (W + ML) / 2, H - 5);
    html_puts(f, xl);
    fprintf(f, "</text><text x='14' y='%d' font-size='12' transform='rotate(-90 14 %d)' text-anchor='middle'>",
            H / 2, H / 2);
    html_puts(f, yl);
    fputs("</text>", f);
}

/* A step's value in series which: accepted, delivered (msg/s), delivery's p95, the
 * worst command's p95 (s). */
static double series_value(const struct step_figures *s, int which)
{
    int w = step_worst_command(s, 95);
    switch (which) {
    case 0: return s->accepted;
    case 1: return s->delivered;
    case 2: return ms(hist_percentile(&s->lat[LAT_DELIVERY], 95)) / 1000;
    default: return w >= 0 ? ms(hist_percentile(&s->lat[w], 95)) / 1000 : 0;
    }
}

/* One series: a point per step with figures (hollow when the step failed, grey when
 * invalid), joined in the order of the offered rate. */
static void series(FILE *f, const struct capacity_record *c, const struct axis *x, const struct axis *y, int which,
                   const char *colour, const char *name, int idx)
{
    unsigned *order = xcalloc(c->nsteps ? c->nsteps : 1, sizeof *order), n = 0;
    for (size_t i = 0; i < c->nsteps; i++)
        if (c->steps[i].f)
            order[n++] = i;
    for (unsigned a = 1; a < n; a++)         /* insertion sort by offered rate */
        for (unsigned b = a; b > 0 && c->steps[order[b]].f->offered < c->steps[order[b - 1]].f->offered; b--) {
            unsigned t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='1.5' points='", colour);
    for (size_t i = 0; i < n; i++) {
        const struct step_figures *s = c->steps[order[i]].f;
        double v = series_value(s, which);
        fprintf(f, "%.1f,%.1f ", px(x, s->offered), py(y, v > y->hi ? y->hi : v));
    }
    fputs("'/>", f);
    for (size_t i = 0; i < n; i++) {
        const struct step_record *st = &c->steps[order[i]];
        const struct step_figures *s = st->f;
        double v = series_value(s, which);
        const char *fill = st->j.verdict == STEP_PASS ? colour : "white";
        const char *stroke = st->j.verdict == STEP_INVALID ? "#999" : colour;
        fprintf(f, "<circle cx='%.1f' cy='%.1f' r='4' fill='%s' stroke='%s'><title>step %u, %.1f msg/s: %s</title></circle>",
                px(x, s->offered), py(y, v > y->hi ? y->hi : v), fill, stroke, st->n, st->rate,
                step_verdict_names[st->j.verdict]);
    }
    fprintf(f, "<rect x='%d' y='%d' width='10' height='3' fill='%s'/><text x='%d' y='%d' font-size='11'>", ML + 10,
            MT + 4 + 14 * idx, colour, ML + 24, MT + 9 + 14 * idx);
    html_puts(f, name);
    fputs("</text>", f);
    free(order);
}

void capacity_html(FILE *f, const struct capacity_record *c)
{
    const struct search *s = &c->s;
    double xmax = 0, ymax = 0, lmax = 0;
    for (size_t i = 0; i < c->nsteps; i++) {
        const struct step_figures *x = c->steps[i].f;
        if (!x)
            continue;
        xmax = fmax(xmax, x->offered);
        ymax = fmax(ymax, fmax(x->accepted, x->delivered));
        lmax = fmax(lmax, ms(hist_percentile(&x->lat[LAT_DELIVERY], 95)) / 1000);
        int w = step_worst_command(x, 95);
        if (w >= 0)
            lmax = fmax(lmax, ms(hist_percentile(&x->lat[w], 95)) / 1000);
    }
    struct axis ax = { 0, nice_top(xmax) }, ay = { 0, nice_top(fmax(ymax, xmax)) }, al = { 0, nice_top(lmax) };
    /* a search without run.label is named by the page alone, never "Capacity: capacity" */
    const char *name = c->label && *c->label && strcmp(c->label, "capacity") ? c->label : NULL;
    fputs("<!doctype html>\n<html><head><meta charset='utf-8'><title>mailsoak capacity", f);
    if (name) {
        fputs(": ", f);
        html_puts(f, name);
    }
    /* the verdict's reason wraps: on one line it ran off the page */
    fputs("</title><style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
          "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}th{background:#f4f4f4}"
          "td.l,th.l{text-align:left;white-space:nowrap}td.why{white-space:normal;min-width:18em;max-width:40em}"
          ".pass{color:#2a2}.fail{color:#c22}.invalid{color:#888}</style></head><body>\n", f);
    fputs("<h1>Capacity", f);
    if (name) {
        fputs(": ", f);
        html_puts(f, name);
    }
    fputs("</h1>\n<p>", f);
    char kb[400];
    if (search_found(s)) {
        fprintf(f, "<b>%.1f msg/s</b> (%.0f msg/min), ", search_capacity(s), search_capacity(s) * 60);
        html_puts(f, confirmation_word(s));
        if (known_line(s, kb, sizeof kb)) {
            fputs("; known ", f);
            html_puts(f, kb);
        }
    } else {
        fputs("<b>not found</b>", f);
    }
    fputs(". ", f);
    html_puts(f, s->end);
    const struct step_record *ff = capacity_first_failure(c);
    if (ff && ff->j.first_failed >= 0) {
        char b[240];
        fprintf(f, ". First to fail above it, at %.1f msg/s: ", ff->rate);
        html_puts(f, step_check_describe(&ff->j.v[ff->j.first_failed], b, sizeof b));
    }
    fprintf(f, ".</p>\n<p>Method: SPECmail2001's (open-loop Poisson arrivals; each step a %.0f s ramp, a %.0f s warm-up "
               "at its rate, then a %.0f s steady window, run again up to %d times as long where the backlog swung within it, judged on the gates: every command class's p95 within 5 s, delivery's p95 within 60 s, "
               "errors under 1 %%, and the run's own [gate] settings), with nothing lost, duplicated or corrupted and "
               "the backlog steady (growing by at most %.0f %% of the accepted rate).</p>\n", c->ramp_s, c->warmup_s, c->window_s,
            CAPACITY_WINDOW_MAX,
            100 * c->rules.queue_growth);
    fprintf(f, "<h2>Offered against accepted and delivered rate</h2>\n<svg width='%d' height='%d' role='img'>", W, H);
    axes(f, &ax, &ay, "offered (msg/s)", "msg/s");
    fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#bbb' stroke-dasharray='4'/>", px(&ax, 0),
            py(&ay, 0), px(&ax, fmin(ax.hi, ay.hi)), py(&ay, fmin(ax.hi, ay.hi)));
    series(f, c, &ax, &ay, 0, colours[0], "accepted", 0);
    series(f, c, &ax, &ay, 1, colours[1], "delivered (read)", 1);
    fprintf(f, "</svg>\n<h2>Offered rate against latency (p95)</h2>\n<svg width='%d' height='%d' role='img'>", W, H);
    axes(f, &ax, &al, "offered (msg/s)", "p95 (s)");
    series(f, c, &ax, &al, 2, colours[2], "delivery p95", 0);
    series(f, c, &ax, &al, 3, colours[3], "worst command p95", 1);
    fputs("</svg>\n<p>Filled points passed, hollow ones failed, grey ones were invalid (the tester limited them).</p>\n",
          f);
    fputs("<h2>Steps</h2>\n<table><tr><th>step</th><th class='l'>phase</th><th>rate</th><th>offered</th>"
          "<th>accepted</th><th>delivered</th><th>queue/s</th><th>delivery p95 (ms)</th><th class='l'>worst command "
          "p95 (ms)</th><th>errors %</th><th class='l'>verdict</th></tr>\n", f);
    for (size_t i = 0; i < c->nsteps; i++) {
        const struct step_record *st = &c->steps[i];
        const struct step_figures *x = st->f;
        fprintf(f, "<tr><td>%u</td><td class='l'>", st->n);
        html_puts(f, st->phase);
        fprintf(f, "</td><td>%.1f</td>", st->rate);
        if (x) {
            int w = step_worst_command(x, 95);
            uint64_t att = x->c.smtp_sessions + x->c.pop3_sessions;
            fprintf(f, "<td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%.2f</td><td>%.0f</td><td class='l'>%s %.0f</td>"
                       "<td>%.2f</td>", x->offered, x->accepted, x->delivered, x->unread_slope,
                    ms(hist_percentile(&x->lat[LAT_DELIVERY], 95)), w >= 0 ? lat_names[w] : "-",
                    w >= 0 ? ms(hist_percentile(&x->lat[w], 95)) : 0,
                    att ? 100.0 * (double)x->c.errors / (double)att : 0);
        } else {
            fputs("<td colspan='7'></td>", f);
        }
        fprintf(f, "<td class='l why %s'>%s ", step_verdict_names[st->j.verdict], step_verdict_names[st->j.verdict]);
        char b[240];
        if (st->j.verdict == STEP_FAIL && st->j.first_failed >= 0)
            html_puts(f, step_check_describe(&st->j.v[st->j.first_failed], b, sizeof b));
        else if (st->j.verdict == STEP_INVALID)
            html_puts(f, st->j.why);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n</body></html>\n", f);
}

void capacity_record_free(struct capacity_record *c)
{
    for (size_t i = 0; i < c->nsteps; i++)
        free(c->steps[i].f);
    free(c->steps);
    c->steps = NULL;
    c->nsteps = c->cap = 0;
}
