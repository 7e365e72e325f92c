/* sizes: the distribution message bodies are drawn from — uniform in a range,
 * fixed, lognormal (median and spread, clamped to the range), resampled from a
 * file of observed sizes, or a published cumulative distribution (a file of
 * 'BYTES SHARE' points, drawn between them log-linearly, clamped to the range). */
#ifndef MS_SIZES_H
#define MS_SIZES_H

#include <stddef.h>
#include <stdint.h>

#include "lib/rng.h"
#include "lib/units.h"

enum size_dist { SIZE_UNIFORM, SIZE_FIXED, SIZE_LOGNORMAL, SIZE_FILE, SIZE_CDF,
                 SIZE_LADDER };     /* engine/ladder.h: sizes by the server's SIZE, not drawn */

struct size_model {
    enum size_dist dist;
    struct range range;          /* uniform bounds; clamp for lognormal; fixed uses lo */
    double mu, sigma;            /* lognormal in log space */
    uint64_t *samples;           /* SIZE_FILE; SIZE_CDF: the points' sizes */
    double *cum;                 /* SIZE_CDF: the share of messages of at most samples[i] */
    size_t nsamples;
};

/* 0, or -1 with a reason ("file:line: ..."). spread is the geometric standard
 * deviation: about 68 % of draws fall within median/spread .. median*spread. */
int size_model_init(struct size_model *m, enum size_dist dist, struct range range, uint64_t median,
                    double spread, const char *file, char *err, size_t errlen);
uint64_t size_draw(const struct size_model *m, struct rng *r);
void size_model_free(struct size_model *m);

#endif
