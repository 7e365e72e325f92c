/* compare_summary: the answer under compare's table (include/analyse/compare_summary.h):
 * per kind of server, which columns held up, the best of each question's row and its
 * margin, and whether the repeats allow saying so. It reads the built table and the
 * runs' verdicts; it measures nothing. */
#include "analyse/compare_summary.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analyse/compare_write.h"
#include "lib/alloc.h"

/* The rows that answer "which is best", in the order they are asked. */
static const char *const questions[] = { "msg/s out", "delivery p99", "cpu/msg" };
#define NQ (sizeof questions / sizeof *questions)

/* Appends to a line's text, cutting what does not fit. */
static void say(struct cmp_answer *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct cmp_answer *a, const char *fmt, ...)
{
    size_t len = strlen(a->text);
    if (len + 1 >= sizeof a->text)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->text + len, sizeof a->text - len, fmt, ap);
    va_end(ap);
}

static size_t runs_of(const struct cmp_table *t, size_t g)
{
    return g < t->rs->ngroups ? t->rs->groups[g].n : 0;
}

/* Why column g did not hold up, in "; "-less phrases; "" when it did. */
struct held {
    size_t died, lost, slow, gates, runs;
};

static struct held held_of(const struct cmp_table *t, size_t g)
{
    struct held h = { .died = t->died[g], .runs = runs_of(t, g) };
    /* a run held up: it delivered every message exactly once, kept up, passed its gates */
    for (size_t k = 0; k < h.runs; k++) {
        const struct result *r = &t->rs->v[t->rs->groups[g].runs[k]];
        double bad = 0;
        static const enum result_fig fates[] = { RF_LOST, RF_DUPLICATED, RF_CORRUPTED };
        for (size_t i = 0; i < 3; i++)
            if (r->display.fig[fates[i]].has && r->display.fig[fates[i]].v > 0)
                bad += r->display.fig[fates[i]].v;
        h.lost += bad > 0;
        if (r->display.verdict.kept_up == 0)
            h.slow++;
        if (r->display.gates_failed > 0)
            h.gates++;
    }
    return h;
}

static int holds(const struct held *h)
{
    return h->runs && !h->died && !h->lost && !h->slow && !h->gates;
}

static void why_not(struct cmp_answer *a, const struct held *h)
{
    size_t all = h->runs + h->died;
    const char *sep = "";
    if (h->died) {
        say(a, "%zu of %zu runs without a result", h->died, all);
        sep = ", ";
    }
    if (h->lost) {
        say(a, "%slost, duplicated or corrupted mail in %zu of %zu", sep, h->lost, all);
        sep = ", ";
    }
    if (h->slow) {
        say(a, "%sdid not keep up in %zu of %zu", sep, h->slow, all);
        sep = ", ";
    }
    if (h->gates)
        say(a, "%sfailed gates in %zu of %zu", sep, h->gates, all);
}

static size_t row_index(const struct cmp_table *t, const char *name)
{
    for (size_t r = 0; r < t->nrows; r++)
        if (!strcmp(t->rows[r].name, name))
            return r;
    return t->nrows;
}

static const struct cmp_stat *stat_of(const struct cmp_table *t, size_t r, size_t g)
{
    return &t->stat[r * t->ngroups + g];
}

/* Whether column g is in the set: of kind, and (when only_holders) held up. */
static int member(const struct cmp_table *t, size_t g, const char *kind, const int *held)
{
    return !strcmp(t->kind[g], kind) && (!held || held[g]);
}

/* The best and the next column of row r among the set, by mean; 0 when fewer than two
 * have a value. */
static int best_two(const struct cmp_table *t, size_t r, const char *kind, const int *held, size_t *best,
                    size_t *next)
{
    int better = t->rows[r].better, have = 0;
    for (size_t g = 0; g < t->ngroups; g++) {
        if (!member(t, g, kind, held) || !stat_of(t, r, g)->n)
            continue;
        double m = stat_of(t, r, g)->mean * better;
        if (!have || m > stat_of(t, r, *best)->mean * better) {
            if (have)
                *next = *best;
            *best = g;
        } else if (have == 1 || m > stat_of(t, r, *next)->mean * better) {
            *next = g;
        }
        have++;
    }
    return have >= 2;
}

/* Whether g's range is clear of every other member's, on the better side. */
static int clear_of_all(const struct cmp_table *t, size_t r, size_t g, const char *kind, const int *held)
{
    for (size_t h = 0; h < t->ngroups; h++)
        if (h != g && member(t, h, kind, held) && stat_of(t, r, h)->n &&
            !cmp_clearly_better(stat_of(t, r, g), stat_of(t, r, h), t->rows[r].better))
            return 0;
    return 1;
}

/* Whether every member with a value in row r has two runs or more. */
static int repeated(const struct cmp_table *t, size_t r, const char *kind, const int *held)
{
    for (size_t g = 0; g < t->ngroups; g++)
        if (member(t, g, kind, held) && stat_of(t, r, g)->n && stat_of(t, r, g)->n < 2)
            return 0;
    return 1;
}

static void row_line(struct cmp_answer *a, const struct cmp_table *t, size_t r, size_t best, size_t next,
                     const char *kind)
{
    const struct cmp_row *row = &t->rows[r];
    const struct cmp_stat *b = stat_of(t, r, best), *n = stat_of(t, r, next);
    char vb[64], vn[64];
    cmp_fmt_value(vb, sizeof vb, row->unit, b->mean);
    cmp_fmt_value(vn, sizeof vn, row->unit, n->mean);
    say(a, "%s %s", t->label[best], vb);
    if (n->mean != 0 && b->mean != n->mean) {
        /* a margin under 10 % keeps a decimal: "0 % below" would say there is none */
        double pct = 100 * fabs(b->mean - n->mean) / fabs(n->mean);
        say(a, pct < 10 ? ", %.1f %% %s %s %s" : ", %.0f %% %s %s %s", pct, b->mean > n->mean ? "above" : "below",
            t->label[next], vn);
    }
    else
        say(a, ", as %s %s", t->label[next], vn);
    if (!repeated(t, r, kind, NULL))
        say(a, "; one repeat: cannot tell noise from difference");
    else if (clear_of_all(t, r, best, kind, NULL))
        say(a, "; beyond the spread of the repeats");
    else
        say(a, "; within the spread of the repeats: cannot tell");
}

static struct cmp_answer *next_line(struct cmp_answer **v, size_t *n, size_t *cap, const char *kind,
                                    const char *question)
{
    *v = grow(*v, cap, *n, 1, sizeof **v);
    struct cmp_answer *a = &(*v)[(*n)++];
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->question = question;
    return a;
}

/* The lines of one kind of server. */
static void summarise_kind(const struct cmp_table *t, const char *kind, struct cmp_answer **v, size_t *n,
                           size_t *cap)
{
    int *held = xcalloc(t->ngroups + 1, sizeof *held);
    size_t members = 0, holders = 0, slow = 0, ran = 0, winner = 0, winners = 0;
    for (size_t g = 0; g < t->ngroups; g++) {
        if (!member(t, g, kind, NULL))
            continue;
        struct held h = held_of(t, g);
        held[g] = holds(&h);
        members++;
        holders += held[g];
        ran += h.runs > 0;
        slow += h.slow > 0;
    }
    if (!members) {
        free(held);
        return;
    }
    struct cmp_answer *a = next_line(v, n, cap, kind, "holds up");
    const char *sep = "";
    for (size_t g = 0; g < t->ngroups; g++)
        if (member(t, g, kind, held)) {
            say(a, "%s%s", sep, t->label[g]);
            sep = ", ";
        }
    if (!holders)
        say(a, "none");
    sep = "; not: ";
    for (size_t g = 0; g < t->ngroups; g++)
        if (member(t, g, kind, NULL) && !held[g]) {
            struct held h = held_of(t, g);
            say(a, "%s%s (", sep, t->label[g]);
            why_not(a, &h);
            say(a, ")");
            sep = ", ";
        }
    if (ran && slow == ran)
        say(a, "; none kept up: the server's queue grew, so the rates measure the MTA, not the store "
               "(compare at a rate that holds: --rate, as each run's remedy says)");

    /* Each question's row among every column of the kind. */
    size_t *wins = xcalloc(t->ngroups + 1, sizeof *wins), *losses = xcalloc(t->ngroups + 1, sizeof *losses);
    for (size_t q = 0; q < NQ; q++) {
        size_t r = row_index(t, questions[q]), best = 0, next = 0;
        if (r == t->nrows || !best_two(t, r, kind, NULL, &best, &next))
            continue;
        row_line(next_line(v, n, cap, kind, questions[q]), t, r, best, next, kind);
        /* the answer weighs only the columns that held up */
        for (size_t g = 0; g < t->ngroups; g++)
            if (member(t, g, kind, held) && stat_of(t, r, g)->n) {
                if (clear_of_all(t, r, g, kind, held))
                    wins[g]++;
                for (size_t h = 0; h < t->ngroups; h++)
                    if (h != g && member(t, h, kind, held) && stat_of(t, r, h)->n &&
                        cmp_clearly_better(stat_of(t, r, h), stat_of(t, r, g), t->rows[r].better)) {
                        losses[g]++;
                        break;
                    }
            }
    }

    a = next_line(v, n, cap, kind, "answer");
    for (size_t g = 0; g < t->ngroups; g++)
        if (member(t, g, kind, held) && wins[g] && !losses[g]) {
            winner = g;
            winners++;
        }
    if (members < 2) {
        for (size_t g = 0; g < t->ngroups; g++)
            if (member(t, g, kind, NULL))
                say(a, "%s %s (nothing to compare it with)", t->label[g], holders ? "held up" : "did not hold up");
    }
    else if (!holders)
        say(a, "none held up");
    else if (holders == 1) {
        for (size_t g = 0; g < t->ngroups; g++)
            if (member(t, g, kind, held))
                say(a, "%s holds up best: the only one that held up", t->label[g]);
    } else if (winners == 1) {
        say(a, "%s holds up best: beyond the spread of the repeats in", t->label[winner]);
        sep = " ";
        for (size_t q = 0; q < NQ; q++) {
            size_t r = row_index(t, questions[q]);
            if (r < t->nrows && stat_of(t, r, winner)->n && clear_of_all(t, r, winner, kind, held)) {
                say(a, "%s%s", sep, questions[q]);
                sep = ", ";
            }
        }
    } else {
        int rep = 1;
        for (size_t g = 0; g < t->ngroups; g++)
            if (member(t, g, kind, held) && runs_of(t, g) < 2)
                rep = 0;
        say(a, "the runs cannot tell which of those that held up is best: %s",
            rep ? "their differences lie within the spread of the repeats (more repeats, or longer runs)"
                : "one repeat cannot tell noise from difference (--repeat 2 or more)");
    }
    free(wins);
    free(losses);
    free(held);
}

size_t cmp_summary(const struct cmp_table *t, struct cmp_answer **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    for (size_t g = 0; g < t->ngroups; g++) {
        size_t h = 0;
        while (h < g && strcmp(t->kind[h], t->kind[g]))
            h++;
        if (h == g)
            summarise_kind(t, t->kind[g], out, &n, &cap);
    }
    return n;
}
