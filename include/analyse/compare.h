/* compare: the classic side-by-side table, one column per label (runs with the same
 * label are repeats: mean and min-max), rows in the classic order, then what the
 * server spent per accepted message (its CPU time, read and write calls and bytes).
 * Best and worst are marked only where the columns' ranges over their repeats do not
 * overlap (the difference exceeds the spread), and only among columns of the same
 * kind of server (run.server_kind: the reference server apart from Postfix +
 * Dovecot). Each run's verdict has its rows too (the share proven, the gates failed,
 * named under the table), so that a column that moved the most mail but failed its
 * gates is never read as the best. A run that wrote no result (it died) keeps its
 * column, empty and marked with why, so that a comparison never loses a column in
 * silence. The table is built once and printed as text, Markdown, CSV, JSON, or
 * HTML (for the report). */
#ifndef MS_COMPARE_H
#define MS_COMPARE_H

#include <stdio.h>

#include "analyse/results.h"
#include "lib/opts.h"

enum cmp_unit { CU_COUNT, CU_BYTES, CU_MS, CU_RATE, CU_SEC, CU_PCT };
enum cmp_format { CMP_TEXT, CMP_MARKDOWN, CMP_CSV, CMP_JSON, CMP_HTML };

#define CMP_RUNS 1u      /* each run as its own column too */
#define CMP_MARK 2u      /* mark the best and the worst column of each row (see above) */

struct cmp_row {
    const char *name;    /* as printed */
    const char *key;     /* the figure's key in the file, as the JSON output names it */
    enum result_fig fig; /* the figure (result/display.h) */
    enum cmp_unit unit;
    int better;          /* +1 more is better, -1 less is better */
    int detail;          /* 1: shown only when some run has a value other than 0;
                            2: only when some run has the figure (the server's parts, its database) */
    int per_msg;         /* divided by the accepted messages (summary "sent") */
    double scale;        /* multiplied by this (1 when 0): seconds per message as ms, a share as % */
};

struct cmp_stat {
    size_t n;            /* runs that have the key; 0 prints "-" */
    double mean, min, max;
};

/* A run that wrote no result: its label and why ("killed by SIGBUS"). */
struct cmp_missing {
    const char *label;
    const char *why;
};

struct cmp_table {
    const struct result_set *rs;
    size_t ngroups;          /* the columns: rs's groups, then each label that has only
                                missing runs */
    const char **label;      /* [group] */
    size_t *died;            /* [group]: its runs that wrote no result */
    const struct cmp_missing *missing;   /* borrowed */
    size_t nmissing;
    const struct cmp_row *rows;      /* cmp_rows less the details no run has */
    size_t nrows;
    struct cmp_stat *stat;   /* [row * ngroups + group] */
    signed char *mark;       /* same index: +1 best, -1 worst, 0 neither */
    const char **kind;       /* [group]: its run.server_kind ("" unknown: one kind) */
    int kinds;               /* how many different kinds the columns are */
};

extern const struct cmp_row cmp_rows[];

/* Whether a's range over its repeats lies wholly on the better side of b's; never
 * when either has fewer than two runs (its spread is unknown). */
int cmp_clearly_better(const struct cmp_stat *a, const struct cmp_stat *b, int better);
/* Whether every column with a result has at least two runs. */
int cmp_repeated(const struct cmp_table *t);
/* missing (nmissing of them, may be NULL) are borrowed until cmp_free. */
void cmp_build(struct cmp_table *t, const struct result_set *rs, const struct cmp_missing *missing,
               size_t nmissing);
/* "LABEL=WHY" (compare's and report's --missing) into m, borrowing from s; -1 when
 * there is no '=' or either side is empty. */
int cmp_missing_parse(struct cmp_missing *m, char *s);
/* Each word of a --missing list parsed (the words are cut in place and borrowed);
 * 0 with *out to free, or -1 with "CMD: --missing wants LABEL=WHY ..." on err. */
int cmp_missing_list(struct cmp_missing **out, struct strlist *words, const char *cmd, FILE *err);
void cmp_free(struct cmp_table *t);
/* What the writers (compare_write.c) read of the table: a unit's name, run's
 * value of a row (-1: not measured), column g's runs that wrote a result, and the
 * runs cell ("2", or "1 of 2" when some died). */
extern const char *const cmp_unit_names[];
int cmp_run_value(const struct cmp_table *t, size_t row, size_t run, double *v);
size_t cmp_nruns(const struct cmp_table *t, size_t g);
char *cmp_runs_cell(char *buf, size_t n, const struct cmp_table *t, size_t g);

#endif
