/* prom: writes the Prometheus text exposition format (version 0.0.4) into a
 * growing buffer: metric families with HELP and TYPE, samples with escaped label
 * values, and histograms from cumulative bucket counts. It knows nothing of what
 * the figures mean; `promtool check metrics` is the judge of what it writes. */
#ifndef MS_PROM_H
#define MS_PROM_H

#include <stddef.h>
#include <stdint.h>

#define PROM_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct prom {
    char *buf;
    size_t len, cap;
};

/* "# HELP name help" and "# TYPE name type" (counter, gauge, histogram). */
void prom_family(struct prom *p, const char *name, const char *type, const char *help);
/* One sample, "name{k="v",...} value"; then label pairs, key and value, ended by
 * NULL. A value is escaped; bytes that are not printable ASCII become '?', so a
 * server's control bytes never reach a dashboard. */
void prom_u64(struct prom *p, const char *name, uint64_t v, ...) __attribute__((sentinel));
void prom_double(struct prom *p, const char *name, double v, ...) __attribute__((sentinel));
/* A histogram's samples (after its prom_family): name_bucket for each upper bound
 * le[i] with cum[i] observations at most le[i] (non-decreasing), then le="+Inf",
 * name_sum and name_count. One optional label pair (key NULL for none). */
void prom_histogram(struct prom *p, const char *name, const char *key, const char *val, const double *le,
                    const uint64_t *cum, size_t n, double sum, uint64_t count);
/* The text (NUL-terminated) and its length; the caller frees it; p is empty after. */
char *prom_take(struct prom *p, size_t *len);
void prom_free(struct prom *p);

#endif
