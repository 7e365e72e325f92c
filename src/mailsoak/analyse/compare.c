/* compare: builds the classic table from result files (mean and min-max of repeats,
 * best/worst marks); compare_write.c prints it in each output format. A key a run
 * lacks is "not measured": it is left out of the mean and printed as "-", never as 0. */
#include "analyse/compare.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/compare_summary.h"
#include "lib/escape.h"
#include "lib/alloc.h"
#include "lib/printable.h"
#include "lib/units.h"

const struct cmp_row cmp_rows[] = {
    { "sent", "sent", RF_SENT, CU_COUNT, +1, 0, 0, 0 },
    { "read", "read", RF_READ, CU_COUNT, +1, 0, 0, 0 },
    { "spool", "spool", RF_SPOOL, CU_COUNT, -1, 0, 0, 0 },
    { "mem", "mem", RF_MEM, CU_BYTES, -1, 0, 0, 0 },
    { "input", "input", RF_INPUT, CU_COUNT, -1, 0, 0, 0 },
    { "output", "output", RF_OUTPUT, CU_COUNT, -1, 0, 0, 0 },
    { "ibytes", "ibytes", RF_IBYTES, CU_BYTES, -1, 0, 0, 0 },
    { "obytes", "obytes", RF_OBYTES, CU_BYTES, -1, 0, 0, 0 },
    { "errors", "errors", RF_ERRORS, CU_COUNT, -1, 0, 0, 0 },
    { "lost", "lost", RF_LOST, CU_COUNT, -1, 0, 0, 0 },
    /* Unread mail the run could not call lost, and why (issue 12's reasons). */
    { "pending", "pending", RF_PENDING, CU_COUNT, -1, 0, 0, 0 },
    { "pending queued", "pending_queued", RF_PENDING_QUEUED, CU_COUNT, -1, 1, 0, 0 },
    { "pending peeked", "pending_peeked", RF_PENDING_PEEKED, CU_COUNT, -1, 1, 0, 0 },
    { "pending unswept", "pending_unswept", RF_PENDING_UNSWEPT, CU_COUNT, -1, 1, 0, 0 },
    { "pending unsettled", "pending_unsettled", RF_PENDING_UNSETTLED, CU_COUNT, -1, 1, 0, 0 },
    { "duplicated", "duplicated", RF_DUPLICATED, CU_COUNT, -1, 0, 0, 0 },
    { "corrupted", "corrupted", RF_CORRUPTED, CU_COUNT, -1, 0, 0, 0 },
    /* The verdict (verdict/verdict.h): what share of the accepted mail was proven
     * delivered exactly once, and how many gates failed (named under the table). */
    { "proven", "/verdict/proven_share", RF_PROVEN_SHARE, CU_PCT, +1, 2, 0, 100 },
    { "gates failed", "/verdict/gates/failed", RF_GATES_FAILED, CU_COUNT, -1, 2, 0, 0 },
    { "log hits", "log_hits", RF_LOG_HITS, CU_COUNT, -1, 0, 0, 0 },
    /* Which part of the server spends the CPU, memory and I/O, and its database's own
     * counters (probe/db.h): rows only where some run measured them. */
    { "cpu", "cpu", RF_CPU, CU_SEC, -1, 2, 0, 0 },
    { "mta cpu", "parts/mta/cpu", RF_MTA_CPU, CU_SEC, -1, 2, 0, 0 },
    { "pop3 cpu", "parts/pop3/cpu", RF_POP3_CPU, CU_SEC, -1, 2, 0, 0 },
    { "db cpu", "parts/db/cpu", RF_DB_CPU, CU_SEC, -1, 2, 0, 0 },
    { "db mem", "parts/db/mem_pss", RF_DB_MEM, CU_BYTES, -1, 2, 0, 0 },
    { "db obytes", "parts/db/obytes", RF_DB_OBYTES, CU_BYTES, -1, 2, 0, 0 },
    { "db disk write", "parts/db/disk_write_bytes", RF_DB_DISK_WRITE, CU_BYTES, -1, 2, 0, 0 },
    { "db waits", "db/lock_waits", RF_DB_WAITS, CU_COUNT, -1, 2, 0, 0 },
    { "db deadlocks", "db/deadlocks", RF_DB_DEADLOCKS, CU_COUNT, -1, 2, 0, 0 },
    { "db errors", "db/errors", RF_DB_ERRORS, CU_COUNT, -1, 2, 0, 0 },
    { "db conns", "db/conns_peak", RF_DB_CONNS, CU_COUNT, -1, 2, 0, 0 },
    { "delivery p50", "latency/delivery/p50", RF_DELIVERY_P50, CU_MS, -1, 0, 0, 0 },
    { "delivery p99", "latency/delivery/p99", RF_DELIVERY_P99, CU_MS, -1, 0, 0, 0 },
    { "msg/s in", "rate_in", RF_RATE_IN, CU_RATE, +1, 0, 0, 0 },
    { "msg/s out", "rate_out", RF_RATE_OUT, CU_RATE, +1, 0, 0, 0 },
    /* What the server spent per accepted message, so that backends that moved
     * different amounts of mail compare by what each message cost them. */
    { "cpu/msg", "cpu", RF_CPU, CU_MS, -1, 2, 1, 1000 },
    { "input/msg", "input", RF_INPUT, CU_RATE, -1, 2, 1, 1 },
    { "output/msg", "output", RF_OUTPUT, CU_RATE, -1, 2, 1, 1 },
    { "ibytes/msg", "ibytes", RF_IBYTES, CU_BYTES, -1, 2, 1, 1 },
    { "obytes/msg", "obytes", RF_OBYTES, CU_BYTES, -1, 2, 1, 1 },
    { NULL, NULL, 0, 0, 0, 0, 0, 0 },
};

const char *const cmp_unit_names[] = { "count", "bytes", "ms", "msg/s", "s", "%" };

/* A run's value of a row: its figure, per accepted message when the row says so
 * (not measured when nothing was accepted), times its scale. */
static int row_value(const struct cmp_row *row, const struct result *res, double *v)
{
    const struct result_value *f = &res->display.fig[row->fig], *sent = &res->display.fig[RF_SENT];
    if (!f->has)
        return -1;
    *v = f->v;
    if (row->per_msg) {
        if (!sent->has || !(sent->v > 0))
            return -1;
        *v /= sent->v;
    }
    *v *= row->scale ? row->scale : 1;
    return 0;
}

int cmp_run_value(const struct cmp_table *t, size_t row, size_t run, double *v)
{
    return row_value(&t->rows[row], &t->rs->v[run], v);
}

/* Runs of column g that wrote a result: none for a label whose runs all died. */
size_t cmp_nruns(const struct cmp_table *t, size_t g)
{
    return g < t->rs->ngroups ? t->rs->groups[g].n : 0;
}

/* The runs row: "2", or "1 of 2" when some runs died. */
char *cmp_runs_cell(char *buf, size_t n, const struct cmp_table *t, size_t g)
{
    if (t->died[g])
        snprintf(buf, n, "%zu of %zu", cmp_nruns(t, g), cmp_nruns(t, g) + t->died[g]);
    else
        snprintf(buf, n, "%zu", cmp_nruns(t, g));
    return buf;
}

static const char *kind_of(const struct result_set *rs, size_t g)
{
    if (g >= rs->ngroups)
        return "";
    const char *k = rs->v[rs->groups[g].runs[0]].display.server_kind;
    return k ? k : "";
}

/* Whether column a's range lies wholly on the better side of column b's: the
 * difference exceeds the spread of both columns' repeats. */
static int clearly_better(const struct cmp_stat *a, const struct cmp_stat *b, int better)
{
    return better > 0 ? a->min > b->max : a->max < b->min;
}

/* Marks the best and the worst column of row r among the columns of one kind: the
 * best only when its range is clear of every other's, the worst likewise; nothing
 * when a column has a single run, whose spread is unknown (one repeat cannot tell
 * noise from a difference). */
static void mark_row(struct cmp_table *t, size_t r, const char *kind)
{
    size_t ng = t->ngroups, have = 0, best = 0, worst = 0;
    int better = t->rows[r].better;
    for (size_t g = 0; g < ng; g++) {
        const struct cmp_stat *s = &t->stat[r * ng + g];
        if (!s->n || strcmp(t->kind[g], kind))
            continue;
        if (s->n < 2)
            return;
        if (!have || s->mean * better > t->stat[r * ng + best].mean * better)
            best = g;
        if (!have || s->mean * better < t->stat[r * ng + worst].mean * better)
            worst = g;
        have++;
    }
    if (have < 2)
        return;
    int best_clear = 1, worst_clear = 1;
    for (size_t g = 0; g < ng; g++) {
        const struct cmp_stat *s = &t->stat[r * ng + g];
        if (!s->n || strcmp(t->kind[g], kind))
            continue;
        if (g != best && !clearly_better(&t->stat[r * ng + best], s, better))
            best_clear = 0;
        if (g != worst && !clearly_better(s, &t->stat[r * ng + worst], better))
            worst_clear = 0;
    }
    /* a column some of whose runs died is never the best */
    if (best_clear && !t->died[best])
        t->mark[r * ng + best] = 1;
    if (worst_clear)
        t->mark[r * ng + worst] = -1;
}

/* A detail row (a reason of pending) earns its place when some run has it nonzero;
 * a row of detail 2 when some run has it at all. */
static int wanted(const struct cmp_row *row, const struct result_set *rs)
{
    double v;
    if (!row->detail)
        return 1;
    for (size_t i = 0; i < rs->n; i++)
        if (row_value(row, &rs->v[i], &v) == 0 && (v != 0 || row->detail == 2))
            return 1;
    return 0;
}

int cmp_clearly_better(const struct cmp_stat *a, const struct cmp_stat *b, int better)
{
    return a->n >= 2 && b->n >= 2 && clearly_better(a, b, better);
}

int cmp_repeated(const struct cmp_table *t)
{
    for (size_t g = 0; g < t->rs->ngroups; g++)
        if (t->rs->groups[g].n < 2)
            return 0;
    return 1;
}

int cmp_missing_parse(struct cmp_missing *m, char *s)
{
    char *eq = strchr(s, '=');
    if (!eq || eq == s || !eq[1])
        return -1;
    *eq = 0;
    m->label = s;
    m->why = eq + 1;
    return 0;
}

int cmp_missing_list(struct cmp_missing **out, struct strlist *words, const char *cmd, FILE *err)
{
    struct cmp_missing *m = xcalloc(words->n + 1, sizeof *m);
    for (size_t i = 0; i < words->n; i++)
        if (cmp_missing_parse(&m[i], words->v[i]) < 0) {
            char *safe = printable_dup(words->v[i], strlen(words->v[i]));
            fprintf(err, "%s: --missing wants LABEL=WHY (a run of LABEL that wrote no result, and why), not '%s'\n",
                    cmd, safe);
            free(safe);
            free(m);
            *out = NULL;
            return -1;
        }
    *out = m;
    return 0;
}

/* The columns: rs's groups, then each label of missing that has no group, in the
 * order given; each column's count of missing runs. */
static void add_missing(struct cmp_table *t, const struct cmp_missing *missing, size_t nmissing)
{
    const struct result_set *rs = t->rs;
    t->label = xcalloc(rs->ngroups + nmissing + 1, sizeof *t->label);
    t->died = xcalloc(rs->ngroups + nmissing + 1, sizeof *t->died);
    for (size_t g = 0; g < rs->ngroups; g++)
        t->label[g] = rs->groups[g].label;
    t->ngroups = rs->ngroups;
    /* printable copies: the reasons may quote a run's log, which quotes a server */
    struct cmp_missing *m = xcalloc(nmissing + 1, sizeof *m);
    for (size_t i = 0; i < nmissing; i++) {
        m[i].label = printable_dup(missing[i].label, strlen(missing[i].label));
        m[i].why = printable_dup(missing[i].why, strlen(missing[i].why));
    }
    t->missing = m;
    t->nmissing = nmissing;
    missing = m;
    for (size_t i = 0; i < nmissing; i++) {
        size_t g = 0;
        while (g < t->ngroups && strcmp(t->label[g], missing[i].label))
            g++;
        if (g == t->ngroups)
            t->label[t->ngroups++] = missing[i].label;
        t->died[g]++;
    }
}

void cmp_build(struct cmp_table *t, const struct result_set *rs, const struct cmp_missing *missing,
               size_t nmissing)
{
    size_t all = 0;
    memset(t, 0, sizeof *t);
    t->rs = rs;
    add_missing(t, missing, nmissing);
    size_t ng = t->ngroups;
    while (cmp_rows[all].name)
        all++;
    struct cmp_row *rows = xcalloc(all, sizeof *rows);
    for (size_t r = 0; r < all; r++)
        if (wanted(&cmp_rows[r], rs))
            rows[t->nrows++] = cmp_rows[r];
    t->rows = rows;
    t->stat = xcalloc(t->nrows * ng, sizeof *t->stat);
    t->mark = xcalloc(t->nrows * ng, sizeof *t->mark);
    t->kind = xcalloc(ng ? ng : 1, sizeof *t->kind);
    for (size_t g = 0; g < ng; g++) {
        t->kind[g] = kind_of(rs, g);
        size_t h = 0;
        while (h < g && strcmp(t->kind[h], t->kind[g]))
            h++;
        t->kinds += h == g && g < rs->ngroups;   /* a column with no result has no kind */
    }
    /* ...but with one kind in all, it is surely of that kind */
    for (size_t g = rs->ngroups; g < ng && t->kinds == 1; g++)
        t->kind[g] = t->kind[0];
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t g = 0; g < ng; g++) {
            struct cmp_stat *s = &t->stat[r * ng + g];
            double sum = 0, v;
            for (size_t k = 0; k < cmp_nruns(t, g); k++) {
                if (cmp_run_value(t, r, rs->groups[g].runs[k], &v) < 0)
                    continue;
                s->min = s->n ? fmin(s->min, v) : v;
                s->max = s->n ? fmax(s->max, v) : v;
                sum += v;
                s->n++;
            }
            if (s->n)
                s->mean = sum / (double)s->n;
        }
        /* each kind of server apart: its first column stands for the kind */
        for (size_t g = 0; g < ng; g++) {
            size_t h = 0;
            while (h < g && strcmp(t->kind[h], t->kind[g]))
                h++;
            if (h == g)
                mark_row(t, r, t->kind[g]);
        }
    }
}

void cmp_free(struct cmp_table *t)
{
    free((void *)t->rows);
    free(t->stat);
    free(t->mark);
    free(t->kind);
    free(t->label);
    free(t->died);
    for (size_t i = 0; i < t->nmissing; i++) {
        free((void *)t->missing[i].label);
        free((void *)t->missing[i].why);
    }
    free((void *)t->missing);
    memset(t, 0, sizeof *t);
}
