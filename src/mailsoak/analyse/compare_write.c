/* compare_write: the classic table (analyse/compare.h) printed in each output
 * format: text, Markdown, CSV, JSON and HTML, each value in its unit's style, the
 * best and worst marked, the failed gates and the runs that died named under it. */
#include "analyse/compare_write.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/compare_summary.h"
#include "lib/alloc.h"
#include "lib/escape.h"
#include "lib/printable.h"
#include "lib/units.h"

/* Milliseconds in one style for a whole row: us below a millisecond, ms below a
 * second, else seconds (never "2m00s" beside "118.6s"). SCALE_AUTO picks by v. */
enum { SCALE_US, SCALE_MS, SCALE_S, SCALE_AUTO };

static int ms_scale_of(double ms)
{
    return ms < 1 ? SCALE_US : ms < 1000 ? SCALE_MS : SCALE_S;
}

static char *fmt_value_scaled(char *buf, size_t n, enum cmp_unit u, double v, int scale)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "-");
        return buf;
    }
    switch (u) {
    case CU_COUNT:
        /* Exact, as counts are in every table (a row's 274K beside its 54609 read as
         * two styles); a mean of repeats may be fractional: "2.5 errors" says more
         * than "2". */
        snprintf(buf, n, fabs(v) < 100 && v != round(v) ? "%.1f" : "%.0f", v);
        break;
    case CU_BYTES:
        fmt_bytes(buf, n, v);
        break;
    case CU_MS:
        if (v < 0)
            v = 0;
        switch (scale == SCALE_AUTO ? ms_scale_of(v) : scale) {
        case SCALE_US: snprintf(buf, n, "%.0fus", v * 1e3); break;
        case SCALE_MS: snprintf(buf, n, "%.1fms", v); break;
        default: snprintf(buf, n, "%.1fs", v / 1e3); break;
        }
        break;
    case CU_SEC:
        fmt_duration(buf, n, v <= 0 ? 0 : (uint64_t)llround(v * 1e9));
        break;
    case CU_RATE:
        snprintf(buf, n, "%.1f", v);
        break;
    case CU_PCT:
        /* never "100%" for a share short of it: one message unproven in 10^6 shows */
        snprintf(buf, n, v >= 100 ? "100%%" : v >= 99.99 ? "99.99%%" : "%.2f%%", v);
        break;
    }
    return buf;
}

char *cmp_fmt_value(char *buf, size_t n, enum cmp_unit u, double v)
{
    return fmt_value_scaled(buf, n, u, v, SCALE_AUTO);
}

/* The style of row r's durations: that of its largest value. */
static int row_scale(const struct cmp_table *t, size_t r)
{
    double top = 0;
    for (size_t g = 0; g < t->ngroups; g++)
        if (t->stat[r * t->ngroups + g].n)
            top = fmax(top, t->stat[r * t->ngroups + g].max);
    return ms_scale_of(top);
}

/* "16218-16528", or "" when there is no spread worth printing. */
static char *fmt_spread(char *buf, size_t n, enum cmp_unit u, const struct cmp_stat *s, int scale)
{
    char lo[32], hi[32];
    buf[0] = 0;
    if (s->n < 2)
        return buf;
    fmt_value_scaled(lo, sizeof lo, u, s->min, scale);
    fmt_value_scaled(hi, sizeof hi, u, s->max, scale);
    if (strcmp(lo, hi))
        snprintf(buf, n, "%s-%s", lo, hi);
    return buf;
}

static char *fmt_cell_scaled(char *buf, size_t n, enum cmp_unit u, const struct cmp_stat *s, int scale)
{
    char mean[32], sp[80];
    if (!s->n) {
        snprintf(buf, n, "-");
        return buf;
    }
    fmt_value_scaled(mean, sizeof mean, u, s->mean, scale);
    if (*fmt_spread(sp, sizeof sp, u, s, scale))
        snprintf(buf, n, "%s (%s)", mean, sp);
    else
        snprintf(buf, n, "%s", mean);
    return buf;
}

char *cmp_fmt_cell(char *buf, size_t n, enum cmp_unit u, const struct cmp_stat *s)
{
    return fmt_cell_scaled(buf, n, u, s, SCALE_AUTO);
}

/* A column of the printed table: a label's mean, or one of its runs (--runs). */
struct col {
    size_t g;
    size_t k;        /* run index within the group */
    int is_run;
};

static struct col *columns(const struct cmp_table *t, unsigned flags, size_t *nc)
{
    struct col *c = xcalloc(t->ngroups + t->rs->n, sizeof *c);
    size_t n = 0;
    for (size_t g = 0; g < t->ngroups; g++) {
        c[n++] = (struct col){ g, 0, 0 };
        /* A lone run's column would repeat the label's column. */
        if ((flags & CMP_RUNS) && cmp_nruns(t, g) > 1)
            for (size_t k = 0; k < cmp_nruns(t, g); k++)
                c[n++] = (struct col){ g, k, 1 };
    }
    *nc = n;
    return c;
}

static void col_name(char *buf, size_t n, const struct cmp_table *t, const struct col *c)
{
    if (c->is_run)
        snprintf(buf, n, "%s#%zu", t->label[c->g], c->k + 1);
    else
        snprintf(buf, n, "%s", t->label[c->g]);
}

/* The text of a cell, and its mark (+1/-1/0; run columns are never marked). */
static int cell(char *buf, size_t n, const struct cmp_table *t, size_t r, const struct col *c)
{
    size_t ng = t->ngroups;
    if (!c->is_run) {
        fmt_cell_scaled(buf, n, t->rows[r].unit, &t->stat[r * ng + c->g], row_scale(t, r));
        return t->mark[r * ng + c->g];
    }
    double v;
    if (cmp_run_value(t, r, t->rs->groups[c->g].runs[c->k], &v) < 0)
        snprintf(buf, n, "-");
    else
        fmt_value_scaled(buf, n, t->rows[r].unit, v, row_scale(t, r));
    return 0;
}

/* Under the table, each run's failed gates with what it measured, the run named as
 * in --runs (label#K) when its label has repeats: the row "gates failed" counts them. */
static void write_failed_gates(FILE *f, const struct cmp_table *t, int markdown)
{
    const struct result_set *rs = t->rs;
    int any = 0;
    for (size_t g = 0; g < rs->ngroups; g++)
        for (size_t k = 0; k < rs->groups[g].n; k++) {
            const struct result_verdict *v = &rs->v[rs->groups[g].runs[k]].display.verdict;
            for (size_t i = 0; i < v->ngates; i++) {
                const char *text = v->gates[i].text;
                if (v->gates[i].pass != 0 || !text)
                    continue;
                char name[300], *safe = printable_dup(text, strlen(text));
                col_name(name, sizeof name, t, &(struct col){ g, k, rs->groups[g].n > 1 });
                if (!any++)
                    fputs(markdown ? "\nGates failed:\n\n" : "gates failed:\n", f);
                if (markdown) {
                    fputs("- ", f);
                    md_puts(f, name);
                    fputs(": ", f);
                    md_puts(f, safe);
                    fputc('\n', f);
                } else
                    fprintf(f, "  %s: %s\n", name, safe);
                free(safe);
            }
        }
}

static int any_mark(const struct cmp_table *t)
{
    for (size_t i = 0; i < t->nrows * t->ngroups; i++)
        if (t->mark[i])
            return 1;
    return 0;
}

/* Under the table, each run that wrote no result and why: its column stays, counting
 * only the runs that did ("1 of 2"), empty when none did. */
static void write_died(FILE *f, const struct cmp_table *t, int markdown)
{
    if (!t->nmissing)
        return;
    fputs(markdown ? "\nRuns without a result (their columns count only the runs that wrote one):\n\n"
                   : "runs without a result (their columns count only the runs that wrote one):\n", f);
    for (size_t i = 0; i < t->nmissing; i++) {
        if (markdown) {
            fputs("- ", f);
            md_puts(f, t->missing[i].label);
            fputs(": ", f);
            md_puts(f, t->missing[i].why);
            fputc('\n', f);
        } else
            fprintf(f, "  %s: %s\n", t->missing[i].label, t->missing[i].why);
    }
}

/* The answer, last in text and Markdown (what a reader takes away). */
static void write_summary(FILE *f, const struct cmp_table *t, int markdown)
{
    struct cmp_answer *v;
    size_t n = cmp_summary(t, &v);
    for (size_t i = 0; i < n; i++) {
        if (!i || strcmp(v[i].kind, v[i - 1].kind)) {
            if (markdown)
                fputs(t->kinds > 1 ? "\n**Summary, " : "\n**Summary**", f);
            else
                fputs(t->kinds > 1 ? "summary, " : "summary", f);
            if (t->kinds > 1) {
                if (markdown)
                    md_puts(f, *v[i].kind ? v[i].kind : "kind not recorded");
                else
                    fputs(*v[i].kind ? v[i].kind : "kind not recorded", f);
                fputs(markdown ? "**" : "", f);
            }
            fputs(markdown ? "\n\n" : ":\n", f);
        }
        if (markdown) {
            fprintf(f, "- %s: ", v[i].question);
            md_puts(f, v[i].text);
            fputc('\n', f);
        } else
            fprintf(f, "  %-13s %s\n", v[i].question, v[i].text);
    }
    free(v);
}

static void write_summary_html(FILE *f, const struct cmp_table *t)
{
    struct cmp_answer *v;
    size_t n = cmp_summary(t, &v);
    for (size_t i = 0; i < n; i++) {
        if (!i || strcmp(v[i].kind, v[i - 1].kind)) {
            if (i)
                fputs("</ul>\n", f);
            fputs("<ul class=\"answer\">", f);
            if (t->kinds > 1) {
                fputs("<strong>", f);
                html_puts(f, *v[i].kind ? v[i].kind : "kind not recorded");
                fputs("</strong>", f);
            }
            fputc('\n', f);
        }
        fprintf(f, "<li%s><strong>%s</strong>: ", strcmp(v[i].question, "answer") ? "" : " class=\"answer\"", v[i].question);
        html_puts(f, v[i].text);
        fputs("</li>\n", f);
    }
    if (n)
        fputs("</ul>\n", f);
    free(v);
}

static void write_died_html(FILE *f, const struct cmp_table *t)
{
    if (!t->nmissing)
        return;
    fputs("<p class=\"died\">Runs without a result (their columns count only the runs that wrote one):</p>\n<ul class=\"died\">\n", f);
    for (size_t i = 0; i < t->nmissing; i++) {
        fputs("<li>", f);
        html_puts(f, t->missing[i].label);
        fputs(": ", f);
        html_puts(f, t->missing[i].why);
        fputs("</li>\n", f);
    }
    fputs("</ul>\n", f);
}

static void write_text(FILE *f, const struct cmp_table *t, const struct col *cols, size_t nc, unsigned flags)
{
    size_t nr = t->nrows + 2, w0 = 0;          /* header, runs, metrics */
    char **g = xcalloc(nr * (nc + 1), sizeof *g);
    size_t *w = xcalloc(nc + 1, sizeof *w);
    char buf[256];
    for (size_t r = 0; r < nr; r++) {
        for (size_t c = 0; c <= nc; c++) {
            const struct col *cc = c ? &cols[c - 1] : NULL;
            int m = 0;
            if (r == 0 && c == 0)
                buf[0] = 0;
            else if (r == 0)
                col_name(buf, sizeof buf - 1, t, cc);
            else if (c == 0)
                snprintf(buf, sizeof buf, "%s", r == 1 ? "runs" : t->rows[r - 2].name);
            else if (r == 1) {
                buf[0] = 0;
                if (!cc->is_run)
                    cmp_runs_cell(buf, sizeof buf, t, cc->g);
            } else
                m = cell(buf, sizeof buf - 1, t, r - 2, cc);
            /* Every mean cell gets a mark slot, so the numbers stay right-aligned. */
            if (c > 0 && (flags & CMP_MARK) && !cc->is_run)
                strcat(buf, m > 0 ? "*" : m < 0 ? "!" : " ");
            g[r * (nc + 1) + c] = xstrdup(buf);
            size_t len = strlen(buf);
            if (len > w[c])
                w[c] = len;
        }
    }
    w0 = w[0];
    for (size_t r = 0; r < nr; r++) {
        char *line = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&line, &len);
        if (!m)
            abort();
        fprintf(m, "%-*s", (int)w0, g[r * (nc + 1)]);
        for (size_t c = 1; c <= nc; c++)
            fprintf(m, "  %*s", (int)w[c], g[r * (nc + 1) + c]);
        fclose(m);
        while (len && line[len - 1] == ' ')   /* the empty mark slot of the last column */
            line[--len] = 0;
        fprintf(f, "%s\n", line);
        free(line);
    }
    if ((flags & CMP_MARK) && !any_mark(t) && !cmp_repeated(t))
        fputs("(nothing marked: a column with one run cannot tell noise from a difference; --repeat 2 or more)\n", f);
    else if (flags & CMP_MARK)
        fprintf(f, "(* best, ! worst of each row, where its range over the repeats is clear of every other column's%s%s)\n",
                t->kinds > 1 ? "; among columns of the same run.server_kind only" : "",
                cmp_repeated(t) ? "" : "; none among columns where one has a single run");
    write_failed_gates(f, t, 0);
    write_died(f, t, 0);
    write_summary(f, t, 0);
    for (size_t i = 0; i < nr * (nc + 1); i++)
        free(g[i]);
    free(g);
    free(w);
}

static void write_markdown(FILE *f, const struct cmp_table *t, const struct col *cols, size_t nc, unsigned flags)
{
    char buf[256];
    fputs("| |", f);
    for (size_t c = 0; c < nc; c++) {
        col_name(buf, sizeof buf, t, &cols[c]);
        fputc(' ', f);
        md_puts(f, buf);
        fputs(" |", f);
    }
    fputs("\n|---|", f);
    for (size_t c = 0; c < nc; c++)
        fputs("---:|", f);
    fputs("\n| runs |", f);
    for (size_t c = 0; c < nc; c++) {
        if (cols[c].is_run)
            fputs(" |", f);
        else
            fprintf(f, " %s |", cmp_runs_cell(buf, sizeof buf, t, cols[c].g));
    }
    fputc('\n', f);
    for (size_t r = 0; r < t->nrows; r++) {
        fprintf(f, "| %s |", t->rows[r].name);
        for (size_t c = 0; c < nc; c++) {
            int m = cell(buf, sizeof buf, t, r, &cols[c]);
            const char *em = (flags & CMP_MARK) && m ? (m > 0 ? "**" : "_") : "";
            fprintf(f, " %s%s%s |", em, buf, em);
        }
        fputc('\n', f);
    }
    if ((flags & CMP_MARK) && !any_mark(t) && !cmp_repeated(t))
        fputs("\nNothing marked: a column with one run cannot tell noise from a difference (--repeat 2 or more).\n", f);
    else if (flags & CMP_MARK)
        fprintf(f, "\n**bold**: best of the row; _italic_: worst; each only where its range over the repeats is clear "
                   "of every other column's%s.\n", t->kinds > 1 ? ", among columns of the same run.server_kind" : "");
    write_failed_gates(f, t, 1);
    write_died(f, t, 1);
    write_summary(f, t, 1);
}

static void csv_number(FILE *f, double v)
{
    fprintf(f, ",%.10g", v);
}

static void marked_labels(FILE *f, const struct cmp_table *t, size_t r, int want)
{
    char buf[1024];
    size_t pos = 0;
    buf[0] = 0;
    for (size_t g = 0; g < t->ngroups; g++)
        if (t->mark[r * t->ngroups + g] == want && pos < sizeof buf)
            pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "%s%s", pos ? ";" : "", t->label[g]);
    fputc(',', f);
    csv_puts(f, buf);
}

/* Machine-readable: plain numbers in the row's unit, empty where not measured. */
static void write_csv(FILE *f, const struct cmp_table *t, const struct col *cols, size_t nc, unsigned flags)
{
    size_t ng = t->ngroups;
    char buf[300];
    fputs("metric,unit,better", f);
    for (size_t c = 0; c < nc; c++) {
        col_name(buf, sizeof buf, t, &cols[c]);
        fputc(',', f);
        csv_puts(f, buf);
        if (!cols[c].is_run) {
            const char *suf[] = { " min", " max", " n" };
            for (size_t i = 0; i < 3; i++) {
                snprintf(buf, sizeof buf, "%s%s", t->label[cols[c].g], suf[i]);
                fputc(',', f);
                csv_puts(f, buf);
            }
        }
    }
    if (flags & CMP_MARK)
        fputs(",best,worst", f);
    fputc('\n', f);
    for (size_t r = 0; r < t->nrows; r++) {
        fprintf(f, "%s,%s,%s", t->rows[r].name, cmp_unit_names[t->rows[r].unit],
                t->rows[r].better > 0 ? "more" : "less");
        for (size_t c = 0; c < nc; c++) {
            if (cols[c].is_run) {
                double v;
                if (cmp_run_value(t, r, t->rs->groups[cols[c].g].runs[cols[c].k], &v) < 0)
                    fputc(',', f);
                else
                    csv_number(f, v);
                continue;
            }
            const struct cmp_stat *s = &t->stat[r * ng + cols[c].g];
            if (!s->n)
                fputs(",,,", f);
            else {
                csv_number(f, s->mean);
                csv_number(f, s->min);
                csv_number(f, s->max);
            }
            fprintf(f, ",%zu", s->n);
        }
        if (flags & CMP_MARK) {
            marked_labels(f, t, r, 1);
            marked_labels(f, t, r, -1);
        }
        fputc('\n', f);
    }
}

static json_t *jnum(double v)
{
    if (v == round(v) && fabs(v) < 9007199254740992.0)
        return json_integer((json_int_t)v);
    return json_real(v);
}

static int write_json(FILE *f, const struct cmp_table *t, unsigned flags)
{
    const struct result_set *rs = t->rs;
    size_t ng = t->ngroups;
    json_t *root = json_object(), *jcols = json_array(), *jrows = json_array();
    json_object_set_new(root, "format", json_string("mailsoak-compare"));
    json_object_set_new(root, "format_version", json_integer(1));
    for (size_t g = 0; g < ng; g++) {
        json_t *c = json_object(), *files = json_array(), *ids = json_array(), *died = json_array();
        for (size_t k = 0; k < cmp_nruns(t, g); k++) {
            const struct result *r = &rs->v[rs->groups[g].runs[k]];
            const char *id = r->run_id;
            json_array_append_new(files, json_string(r->path));
            /* printable like the label: jansson would leave DEL and C1 controls raw */
            char *safe = id ? printable_dup(id, strlen(id)) : NULL;
            json_array_append_new(ids, safe ? json_string(safe) : json_null());
            free(safe);
        }
        for (size_t i = 0; i < t->nmissing; i++)
            if (!strcmp(t->missing[i].label, t->label[g]))
                json_array_append_new(died, json_string(t->missing[i].why));
        json_object_set_new(c, "label", json_string(t->label[g]));
        json_object_set_new(c, "files", files);
        json_object_set_new(c, "run_ids", ids);
        json_object_set_new(c, "without_result", died);
        json_array_append_new(jcols, c);
    }
    for (size_t r = 0; r < t->nrows; r++) {
        json_t *row = json_object(), *vals = json_array(), *best = json_array(), *worst = json_array();
        json_object_set_new(row, "metric", json_string(t->rows[r].name));
        json_object_set_new(row, "key", json_string(t->rows[r].key));
        json_object_set_new(row, "unit", json_string(cmp_unit_names[t->rows[r].unit]));
        json_object_set_new(row, "better", json_string(t->rows[r].better > 0 ? "more" : "less"));
        for (size_t g = 0; g < ng; g++) {
            const struct cmp_stat *s = &t->stat[r * ng + g];
            json_t *v = json_object();
            json_object_set_new(v, "mean", s->n ? jnum(s->mean) : json_null());
            json_object_set_new(v, "min", s->n ? jnum(s->min) : json_null());
            json_object_set_new(v, "max", s->n ? jnum(s->max) : json_null());
            json_object_set_new(v, "n", json_integer((json_int_t)s->n));
            if (flags & CMP_RUNS) {
                json_t *runs = json_array();
                for (size_t k = 0; k < cmp_nruns(t, g); k++) {
                    double x;
                    json_array_append_new(runs, cmp_run_value(t, r, rs->groups[g].runs[k], &x) < 0
                                                    ? json_null() : jnum(x));
                }
                json_object_set_new(v, "runs", runs);
            }
            json_array_append_new(vals, v);
            if (t->mark[r * ng + g])
                json_array_append_new(t->mark[r * ng + g] > 0 ? best : worst, json_string(t->label[g]));
        }
        json_object_set_new(row, "values", vals);
        if (flags & CMP_MARK) {
            json_object_set_new(row, "best", best);
            json_object_set_new(row, "worst", worst);
        } else {
            json_decref(best);
            json_decref(worst);
        }
        json_array_append_new(jrows, row);
    }
    json_object_set_new(root, "columns", jcols);
    json_object_set_new(root, "rows", jrows);
    struct cmp_answer *ans;
    size_t na = cmp_summary(t, &ans);
    json_t *jsum = json_array();
    for (size_t i = 0; i < na; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(ans[i].kind));
        json_object_set_new(o, "question", json_string(ans[i].question));
        json_object_set_new(o, "answer", json_string(ans[i].text));
        json_array_append_new(jsum, o);
    }
    free(ans);
    json_object_set_new(root, "summary", jsum);
    int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', f);
    json_decref(root);
    return rc;
}

static void write_html(FILE *f, const struct cmp_table *t, const struct col *cols, size_t nc)
{
    char buf[256], sp[80];
    size_t ng = t->ngroups;
    write_summary_html(f, t);
    fputs("<table class=\"summary\">\n<thead><tr><th></th>", f);
    for (size_t c = 0; c < nc; c++) {
        col_name(buf, sizeof buf, t, &cols[c]);
        fprintf(f, "<th%s>", cols[c].is_run ? " class=\"run\"" : "");
        html_puts(f, buf);
        fputs("</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n<tr><th>runs</th>", f);
    for (size_t c = 0; c < nc; c++)
        if (cols[c].is_run)
            fputs("<td class=\"run\"></td>", f);
        else
            fprintf(f, "<td%s>%s</td>", t->died[cols[c].g] ? " class=\"died\"" : "",
                    cmp_runs_cell(buf, sizeof buf, t, cols[c].g));
    fputs("</tr>\n", f);
    for (size_t r = 0; r < t->nrows; r++) {
        fprintf(f, "<tr><th>%s</th>", t->rows[r].name);
        for (size_t c = 0; c < nc; c++) {
            if (cols[c].is_run) {
                cell(buf, sizeof buf, t, r, &cols[c]);
                fprintf(f, "<td class=\"run\">%s</td>", buf);
                continue;
            }
            const struct cmp_stat *s = &t->stat[r * ng + cols[c].g];
            int m = t->mark[r * ng + cols[c].g];
            fprintf(f, "<td%s>%s", m > 0 ? " class=\"best\"" : m < 0 ? " class=\"worst\"" : "",
                    s->n ? fmt_value_scaled(buf, sizeof buf, t->rows[r].unit, s->mean, row_scale(t, r)) : "-");
            if (s->n && *fmt_spread(sp, sizeof sp, t->rows[r].unit, s, row_scale(t, r)))
                fprintf(f, " <span class=\"spread\">%s</span>", sp);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n", f);
    write_died_html(f, t);
}

int cmp_write(FILE *f, const struct cmp_table *t, enum cmp_format fmt, unsigned flags)
{
    size_t nc;
    struct col *cols = columns(t, flags, &nc);
    int rc = 0;
    switch (fmt) {
    case CMP_TEXT: write_text(f, t, cols, nc, flags); break;
    case CMP_MARKDOWN: write_markdown(f, t, cols, nc, flags); break;
    case CMP_CSV: write_csv(f, t, cols, nc, flags); break;
    case CMP_JSON: rc = write_json(f, t, flags); break;
    case CMP_HTML: write_html(f, t, cols, nc); break;
    }
    free(cols);
    return rc < 0 || ferror(f) ? -1 : 0;
}
