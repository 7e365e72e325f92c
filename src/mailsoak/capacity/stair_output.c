/* stair_output: the writers of a staircase search (include/capacity/stair_output.h). */
#include "capacity/stair_output.h"

#include <math.h>
#include <stdlib.h>

#include "capacity/output.h"
#include "lib/escape.h"
#include "lib/version.h"

void stair_level_line(FILE *f, const struct stair_level_record *l)
{
    fprintf(f, "%3u %-9s %9.1f", l->run, stair_kind_name(l->kind), l->rate);
    if (l->read)
        fprintf(f, "  %8.1f %8.1f %9.1f %9.0f", l->offered, l->accepted, l->delivered, l->delivery_p95_ms);
    fprintf(f, "  %-7s  %s\n", level_outcome_name(l->lj.out), l->lj.why);
}

/* The interval the evidence gives: from the capacity (what was delivered at the
 * highest pass below every failure, or that pass's rate if lower) to the higher
 * of the lowest failure and the highest pass (a pass above a failure is the band
 * of chance). */
static int known(const struct stair *s, double *lo, double *hi)
{
    double p = stair_lower_bound(s), f = stair_fail_min(s);
    if (!(p > 0) || !(f > 0))
        return 0;
    *lo = fmin(p, stair_capacity(s));
    *hi = fmax(f, stair_pass_max(s));
    return 1;
}

/* What refuted a confirmation, from its last run's levels (80, 100, 120 % in order):
 * the claim too high (-1) when its 80 or 100 % level failed, too low (1) when its
 * 120 % level passed, with that level in *by; 0 when none did (a level the tester
 * limited or left open says neither). */
static int refuted(const struct stair *s, const struct stair_level **by, unsigned *share)
{
    if (s->confirmed != 0 || !s->n || s->v[s->n - 1].kind != RUN_CONFIRM)
        return 0;
    unsigned last = s->v[s->n - 1].run, i0 = s->n;
    while (i0 > 0 && s->v[i0 - 1].kind == RUN_CONFIRM && s->v[i0 - 1].run == last)
        i0--;
    for (unsigned j = 0; i0 + j < s->n && j < 3; j++) {
        *by = &s->v[i0 + j];
        *share = 80 + 20 * j;
        if (j < 2 && (*by)->out == LEVEL_FAIL)
            return -1;
        if (j == 2 && (*by)->out == LEVEL_PASS)
            return 1;
    }
    return 0;
}

static void refuted_line(FILE *f, const struct stair *s)
{
    const struct stair_level *l;
    unsigned share;
    int r = refuted(s, &l, &share);
    if (!r)
        return;
    fprintf(f, "refuted      too %s: its %u %% level %s at %.1f msg/s offered", r < 0 ? "high" : "low", share,
            r < 0 ? "failed" : "passed", l->offered > 0 ? l->offered : l->rate);
    if (l->delivered > 0)
        fprintf(f, " (%.1f delivered)", l->delivered);
    fprintf(f, "; the capacity is likely %s\n", r < 0 ? "below the claim" : "above the interval");
}

/* The claims refuted too high before the last, each claimed again below. */
static void refuted_before(FILE *f, const struct stair *s)
{
    for (unsigned i = 0; i < s->nrefuted; i++)
        fprintf(f, "claimed      %.1f msg/s first: too high, its %u %% level failed at %.1f msg/s offered; claimed "
                   "again below it\n", s->refuted[i].claim, s->refuted[i].share_pct, s->refuted[i].offered);
}

void stair_table(FILE *f, const struct stair_record *c)
{
    const struct stair *s = &c->s;
    fprintf(f, "mailsoak capacity (staircase): %s, %s\n", c->label, c->start_time);
    fprintf(f, "method       a probe (levels doubling in one run until one falls behind), then runs of levels %.0f "
               "%% apart, %.0f s each (a retry's and the confirmation's twice) after a lead-in of a fifth of it, no "
               "drain between them; each level judged by a sequential test "
               "(Wald) of the server's queue where counted, else of the backlog, kept up, behind, or open, and ended "
               "once decided; a confirmation's level open at "
               "its end by the same growth over its whole length, behind only past its noise; the lowest failure "
               "tried again before the claim is confirmed, a rate standing as most of its trials say; its readers "
               "%s\n",
            100 * s->r.step, c->level_s,
            c->visit_owed ? "go where mail is owed (capacity.visit)" : "visit mailboxes at random (capacity.visit)");
    fprintf(f, "\nrun kind           rate   offered accepted delivered  p95 deliv  outcome\n");
    fprintf(f, "                  msg/s     msg/s    msg/s     msg/s         ms\n");
    for (size_t i = 0; i < c->nlevels; i++)
        stair_level_line(f, &c->levels[i]);
    double lo = 0, hi = 0, blo, bhi, pass = stair_capacity(s);
    fprintf(f, "\n");
    if (known(s, &lo, &hi)) {
        fprintf(f, "capacity     %.1f msg/s (%.0f msg/min): delivered by the highest level that passed below "
                   "every failure, which offered %.1f msg/s\n", pass, pass * 60, stair_lower_bound(s));
        fprintf(f, "known        between %.1f and %.1f msg/s (%.1f %% wide)\n", lo, hi, 100 * (hi - lo) / lo);
    } else if (pass > 0) {
        fprintf(f, "capacity     at least %.1f msg/s: no level failed\n", stair_lower_bound(s));
    } else if (s->at_least > 0) {
        fprintf(f, "capacity     at least %.1f msg/s: the probe at capacity.max_rate kept up; beyond it unproven\n",
                s->at_least);
    } else if (s->max_open) {
        fprintf(f, "capacity     not found: the probe at capacity.max_rate was open, neither kept up nor behind\n");
    } else if (stair_pass_max(s) > 0) {
        fprintf(f, "capacity     not found: every level that passed lay above one that failed\n");
    } else {
        fprintf(f, "capacity     not found: no level passed\n");
    }
    stair_band(s, &blo, &bhi);
    if (blo > 0)
        fprintf(f, "open         %.1f to %.1f msg/s: levels neither kept up nor behind in %.0f s (the knee's band)\n",
                blo, bhi, c->level_s);
    struct stair_dispute d[8];
    unsigned nd = stair_disputes(s, d, 8);
    for (unsigned i = 0; i < nd; i++)
        fprintf(f, "disputed     %.1f msg/s: %u level%s passed, %u failed: it stands %s\n", d[i].rate, d[i].passed,
                d[i].passed == 1 ? "" : "s", d[i].failed,
                d[i].passed > d[i].failed ? "passed (its failures outvoted)"
                : d[i].failed > d[i].passed ? "failed" : "neither (tied)");
    /* a P = 0.95 below every level fitted is the fit's guess, not a rate shown: the
     * outcomes near the knee contradict each other that widely */
    if (c->fit.ok && c->fit.p95 >= c->fit.lo)
        fprintf(f, "fit          P(pass) = 0.5 at %.1f msg/s, 0.95 at %.1f msg/s offered (logistic over every level "
                   "at the rate it offered, scale %.2f msg/s)\n", c->fit.mid, c->fit.p95, c->fit.scale);
    else if (c->fit.ok)
        fprintf(f, "fit          P(pass) = 0.5 at %.1f msg/s offered; 0.95 below every level fitted (%.1f msg/s and "
                   "up): their outcomes disagree too widely (logistic, scale %.2f msg/s)\n", c->fit.mid, c->fit.lo,
                c->fit.scale);
    refuted_before(f, s);
    if (s->confirmed >= 0)
        fprintf(f, "confirmed    %s at 80, 100 and 120 %% of %.1f msg/s\n", s->confirmed ? "yes" : "NOT", s->confirm_base);
    else if (s->r.confirm && known(s, &lo, &hi))
        fprintf(f, "confirmed    NOT: the search ended before its confirmation ran (exit 6)\n");
    refuted_line(f, s);
    fprintf(f, "end          %s%s, %zu runs in %.0f s\n", s->end, c->interrupted ? " (interrupted)" : "", c->nruns,
            c->elapsed_s);
}

json_t *stair_json(const struct stair_record *c)
{
    const struct stair *s = &c->s;
    double lo = 0, hi = 0, blo, bhi, pass = stair_capacity(s), fail = stair_fail_min(s), top = stair_pass_max(s);
    int found = known(s, &lo, &hi);
    stair_band(s, &blo, &bhi);
    json_t *root = json_pack("{s:s, s:i, s:s, s:s, s:s, s:f, s:b}", "format", CAPACITY_FORMAT, "format_version",
                             CAPACITY_FORMAT_VERSION, "version", mailsoak_version, "label", c->label, "start_time",
                             c->start_time, "elapsed_s", c->elapsed_s, "interrupted", c->interrupted);
    json_object_set_new(root, "method",
                        json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:i, s:b, s:s}", "name",
                                  "staircase", "source",
                                  "levels judged by Wald's sequential test of the server's queue where counted, else of the "
                                  "backlog (batch means); a probe seeds "
                                  "the bracket (FD.io CSIT MLRsearch); pass probability fitted (PLRsearch); SPECmail2001's "
                                  "QoS gates and 80/100/120 % confirmation",
                                  "level_s", c->level_s, "step", s->r.step, "start", s->r.start, "max_rate",
                                  s->r.max_rate, "precision", s->r.precision, "growth_share", c->dr.share, "alpha",
                                  c->dr.alpha, "beta", c->dr.beta, "batch", c->dr.batch, "min_batches",
                                  c->dr.min_batches, "confirm", s->r.confirm, "readers_visit",
                                  c->visit_owed ? "owed" : "random"));
    json_object_set_new(root, "capacity_msg_s", pass > 0 && found ? json_real(pass) : json_null());
    json_object_set_new(root, "capacity_msg_min", pass > 0 && found ? json_real(pass * 60) : json_null());
    json_object_set_new(root, "known_between", found ? json_pack("[f, f]", lo, hi) : json_null());
    json_object_set_new(root, "highest_pass", top > 0 ? json_real(top) : json_null());
    json_object_set_new(root, "lower_bound", stair_lower_bound(s) > 0 ? json_real(stair_lower_bound(s)) : json_null());
    json_object_set_new(root, "at_least_msg_s", s->at_least > 0 ? json_real(s->at_least) : json_null());
    json_object_set_new(root, "lowest_fail", fail > 0 ? json_real(fail) : json_null());
    json_object_set_new(root, "open_band", blo > 0 ? json_pack("[f, f]", blo, bhi) : json_null());
    struct stair_dispute d[STAIR_HISTORY_MAX];
    unsigned nd = stair_disputes(s, d, STAIR_HISTORY_MAX);
    json_t *disputed = json_array();
    for (unsigned i = 0; i < nd; i++)
        json_array_append_new(disputed, json_pack("{s:f, s:i, s:i}", "rate", d[i].rate, "passed", (int)d[i].passed,
                                                  "failed", (int)d[i].failed));
    json_object_set_new(root, "disputed", disputed);
    json_object_set_new(root, "fit", c->fit.ok ? json_pack("{s:f, s:f, s:f}", "p50_msg_s", c->fit.mid, "p95_msg_s",
                                                           c->fit.p95, "scale_msg_s", c->fit.scale)
                                               : json_null());
    json_object_set_new(root, "probe_delivered_msg_s", s->mrr > 0 ? json_real(s->mrr) : json_null());
    json_object_set_new(root, "confirmed", json_boolean(s->confirmed == 1));
    json_object_set_new(root, "confirm_base", s->confirmed >= 0 ? json_real(s->confirm_base) : json_null());
    const struct stair_level *by;
    unsigned share;
    int too = refuted(s, &by, &share);
    json_object_set_new(root, "refuted", too ? json_pack("{s:s, s:i, s:f}", "claim", too < 0 ? "too high" : "too low",
                                                         "share_pct", (int)share, "offered_msg_s",
                                                         by->offered > 0 ? by->offered : by->rate)
                                           : json_null());
    json_t *before = json_array();
    for (unsigned i = 0; i < s->nrefuted; i++)
        json_array_append_new(before, json_pack("{s:f, s:i, s:f}", "claim_msg_s", s->refuted[i].claim, "share_pct",
                                                (int)s->refuted[i].share_pct, "offered_msg_s", s->refuted[i].offered));
    json_object_set_new(root, "claims_refuted", before);
    json_object_set_new(root, "end", json_string(s->end));
    json_t *runs = json_array();
    for (size_t i = 0; i < c->nruns; i++) {
        const struct stair_run_record *r = &c->runs[i];
        json_array_append_new(runs, json_pack("{s:i, s:s, s:f, s:f, s:i, s:i, s:i, s:s}", "n", r->n, "kind",
                                              stair_kind_name(r->kind), "level_s", r->level_s, "lead_s", r->lead_s,
                                              "senders", r->senders,
                                              "readers", r->readers, "exit_status", r->exit_status, "result", r->json));
    }
    json_object_set_new(root, "runs", runs);
    json_t *levels = json_array();
    for (size_t i = 0; i < c->nlevels; i++) {
        const struct stair_level_record *l = &c->levels[i];
        json_t *e = json_pack("{s:i, s:s, s:f, s:f, s:f, s:s, s:s}", "run", l->run, "kind", stair_kind_name(l->kind),
                              "rate", l->rate, "t0", l->t0, "t1", l->t1, "verdict", level_outcome_name(l->lj.out), "why",
                              l->lj.why);
        if (l->read) {
            json_object_set_new(e, "offered", json_real(l->offered));
            json_object_set_new(e, "accepted", json_real(l->accepted));
            json_object_set_new(e, "delivered", json_real(l->delivered));
            json_object_set_new(e, "read", json_real(l->read_rate));
            json_object_set_new(e, "delivery_p95_ms", json_real(l->delivery_p95_ms));
            json_object_set_new(e, "ledger", json_pack("{s:s, s:I, s:I, s:I, s:I}", "of",
                                                       l->own_ledger ? "level" : "run", "lost", (json_int_t)l->lost,
                                                       "duplicated", (json_int_t)l->duplicated, "corrupted",
                                                       (json_int_t)l->corrupted, "pending", (json_int_t)l->pending));
            json_object_set_new(e, "kept_up",
                                l->lj.fixed
                                    ? json_pack("{s:s, s:s, s:f, s:f, s:f, s:f}", "test", "growth_z", "decision",
                                                drift_decision_name(l->lj.kept.d), "decided_s", l->lj.kept.at_s,
                                                "growth", l->lj.kept.value, "bound", l->lj.kept.bound, "z",
                                                l->lj.kept.z)
                                    : json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f}", "test", "sprt", "decision",
                                                drift_decision_name(l->lj.kept.d), "decided_s", l->lj.kept.at_s,
                                                "growth", l->lj.kept.value, "midpoint", l->lj.kept.bound, "llr",
                                                l->lj.kept.llr, "llr_lo", l->lj.kept.llr_lo, "llr_hi",
                                                l->lj.kept.llr_hi));
        }
        json_array_append_new(levels, e);
    }
    json_object_set_new(root, "levels", levels);
    return root;
}

/* --- the HTML page: the knee (offered against delivered, each level by its
 * outcome), the interval and the open band shaded, the fitted pass probability --- */

#define SW 640
#define SH 300
#define SL 60
#define SR 20
#define ST 20
#define SB 40

static double sx(double lo, double hi, double v) { return SL + (v - lo) / (hi - lo) * (SW - SL - SR); }
static double sy(double lo, double hi, double v) { return SH - SB - (v - lo) / (hi - lo) * (SH - ST - SB); }

static void frame(FILE *f, double xlo, double xhi, double ylo, double yhi, const char *xl, const char *yl)
{
    fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/>", SL, SH - SB, SW - SR, SH - SB);
    fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/>", SL, ST, SL, SH - SB);
    for (int i = 0; i <= 4; i++) {
        double xv = xlo + (xhi - xlo) * i / 4, yv = ylo + (yhi - ylo) * i / 4;
        fprintf(f, "<text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%.3g</text>", sx(xlo, xhi, xv),
                SH - SB + 15, xv);
        fprintf(f, "<text x='%d' y='%.1f' font-size='11' text-anchor='end'>%.3g</text>", SL - 4,
                sy(ylo, yhi, yv) + 4, yv);
    }
    fprintf(f, "<text x='%d' y='%d' font-size='12' text-anchor='middle'>%s</text>", (SW + SL) / 2, SH - 5, xl);
    fprintf(f, "<text x='14' y='%d' font-size='12' transform='rotate(-90 14 %d)' text-anchor='middle'>%s</text>",
            SH / 2, SH / 2, yl);
}

/* The interval (light) and the open band (darker) as vertical bands. */
static void bands(FILE *f, const struct stair_record *c, double xlo, double xhi)
{
    double lo, hi, blo, bhi;
    if (known(&c->s, &lo, &hi))
        fprintf(f, "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='#e8f0ff'><title>known between %.1f and %.1f "
                   "msg/s</title></rect>", sx(xlo, xhi, lo), ST, sx(xlo, xhi, hi) - sx(xlo, xhi, lo), SH - ST - SB, lo, hi);
    stair_band(&c->s, &blo, &bhi);
    if (blo > 0)
        fprintf(f, "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='#fde8c8' opacity='0.8'><title>open from %.1f "
                   "to %.1f msg/s</title></rect>", sx(xlo, xhi, blo) - 2, ST, sx(xlo, xhi, bhi) - sx(xlo, xhi, blo) + 4,
                SH - ST - SB, blo, bhi);
}

void stair_html(FILE *f, const struct stair_record *c)
{
    double xmax = 0;
    for (size_t i = 0; i < c->nlevels; i++)
        xmax = fmax(xmax, fmax(c->levels[i].rate, c->levels[i].read ? c->levels[i].offered : 0));
    double xhi = xmax > 0 ? xmax * 1.05 : 1, xlo = 0;
    fputs("<!doctype html>\n<html><head><meta charset='utf-8'><title>mailsoak capacity: ", f);
    html_puts(f, c->label);
    fputs("</title><style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
          "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}th{background:#f4f4f4}"
          "td.l,th.l{text-align:left}.pass{color:#2a2}.fail{color:#c22}.open{color:#c80}.invalid{color:#888}"
          "</style></head><body>\n<h1>Capacity (staircase): ", f);
    html_puts(f, c->label);
    fputs("</h1>\n<pre>", f);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (m) {
        stair_table(m, c);
        fclose(m);
        html_puts(f, buf);
        free(buf);
    }
    fputs("</pre>\n<h2>Offered against delivered rate, each level by its outcome</h2>\n", f);
    fprintf(f, "<svg width='%d' height='%d' role='img'>", SW, SH);
    bands(f, c, xlo, xhi);
    frame(f, xlo, xhi, 0, xhi, "offered (msg/s)", "delivered (msg/s)");
    fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#bbb' stroke-dasharray='4'/>", sx(xlo, xhi, 0),
            sy(0, xhi, 0), sx(xlo, xhi, xhi), sy(0, xhi, xhi));
    for (size_t i = 0; i < c->nlevels; i++) {
        const struct stair_level_record *l = &c->levels[i];
        if (!l->read)
            continue;
        const char *col = l->lj.out == LEVEL_PASS ? "#2a2" : l->lj.out == LEVEL_FAIL ? "#c22"
                        : l->lj.out == LEVEL_OPEN ? "#c80" : "#999";
        fprintf(f, "<circle cx='%.1f' cy='%.1f' r='4' fill='%s'><title>run %u, %.1f msg/s: %s</title></circle>",
                sx(xlo, xhi, l->offered), sy(0, xhi, l->delivered), col, l->run, l->rate, level_outcome_name(l->lj.out));
    }
    fputs("</svg>\n<p>Green passed (kept up, every gate held), red failed, orange open (neither bound of the "
          "sequential test in the level's time); the light band is the interval the levels give, the orange one the "
          "open levels' span.</p>\n", f);
    if (c->fit.ok) {
        fputs("<h2>Pass probability fitted over every level</h2>\n", f);
        fprintf(f, "<svg width='%d' height='%d' role='img'>", SW, SH);
        bands(f, c, xlo, xhi);
        frame(f, xlo, xhi, 0, 1, "offered (msg/s)", "P(pass)");
        fputs("<polyline fill='none' stroke='#1f77b4' stroke-width='1.5' points='", f);
        for (int k = 0; k <= 200; k++) {
            double x = xlo + (xhi - xlo) * k / 200, p = 1 / (1 + exp((x - c->fit.mid) / c->fit.scale));
            fprintf(f, "%.1f,%.1f ", sx(xlo, xhi, x), sy(0, 1, p));
        }
        fputs("'/>", f);
        for (size_t i = 0; i < c->nlevels; i++) {
            const struct stair_level_record *l = &c->levels[i];
            if (l->kind == RUN_PROBE || l->lj.out == LEVEL_INVALID)
                continue;
            double v = l->lj.out == LEVEL_PASS ? 1 : l->lj.out == LEVEL_FAIL ? 0 : 0.5;
            fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='#333'/>", sx(xlo, xhi, l->read ? l->offered : l->rate),
                    sy(0, 1, v));
        }
        if (c->fit.p95 >= c->fit.lo)
            fprintf(f, "</svg>\n<p>P(pass) = 0.5 at %.1f msg/s, 0.95 at %.1f msg/s.</p>\n", c->fit.mid, c->fit.p95);
        else
            fprintf(f, "</svg>\n<p>P(pass) = 0.5 at %.1f msg/s; 0.95 below every level fitted (%.1f msg/s and up): "
                       "their outcomes disagree too widely.</p>\n", c->fit.mid, c->fit.lo);
    }
    fputs("</body></html>\n", f);
}

void stair_record_free(struct stair_record *c)
{
    free(c->runs);
    free(c->levels);
    c->runs = NULL;
    c->levels = NULL;
}
