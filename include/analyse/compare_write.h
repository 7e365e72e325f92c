/* compare_write: the classic table of compare.h printed (compare_write.c). */
#ifndef MS_COMPARE_WRITE_H
#define MS_COMPARE_WRITE_H

#include <stdio.h>

#include "analyse/compare.h"

/* Returns 0, or -1 when the stream failed. */
int cmp_write(FILE *f, const struct cmp_table *t, enum cmp_format fmt, unsigned flags);
/* The value as the table prints it: 16488, 5000000, 70MB, 1.5s, 27.5. In a table a
 * row's durations share the style of its largest (us, ms or s). */
char *cmp_fmt_value(char *buf, size_t n, enum cmp_unit u, double v);
/* A cell: "-", "16488" or, with spread, "16488 (16218-16528)". */
char *cmp_fmt_cell(char *buf, size_t n, enum cmp_unit u, const struct cmp_stat *s);

#endif
