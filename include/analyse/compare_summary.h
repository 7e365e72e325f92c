/* compare_summary: the answer under compare's table, a line per question, for each
 * kind of server apart: which columns held up (every run wrote a result, lost nothing,
 * kept up, passed its gates); for throughput, delivery latency and the server's CPU a
 * message, which column is best, by what margin over the next, and whether the
 * repeats allow saying so (beyond the spread of every other column, within it, or one
 * repeat: cannot tell noise from difference); then the answer: the column that held
 * up and is best beyond the spread somewhere and worse nowhere, or that the runs
 * cannot tell. */
#ifndef MS_COMPARE_SUMMARY_H
#define MS_COMPARE_SUMMARY_H

#include <stddef.h>

#include "analyse/compare.h"

struct cmp_answer {
    const char *kind;        /* the run.server_kind ("" when unknown), borrowed */
    const char *question;    /* "holds up", "msg/s out", ..., "answer" */
    char text[768];          /* printable: labels are */
};

/* The lines of t's summary into *out (freed by the caller); their count. */
size_t cmp_summary(const struct cmp_table *t, struct cmp_answer **out);

#endif
