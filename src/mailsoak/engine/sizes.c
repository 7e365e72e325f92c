/* sizes: drawing body sizes. The lognormal draw uses Box-Muller on the run's own
 * generator, so sizes replay from the seed like everything else. */
#include "engine/sizes.h"

#include "lib/alloc.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int size_model_init(struct size_model *m, enum size_dist dist, struct range range, uint64_t median,
                    double spread, const char *file, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->dist = dist;
    m->range = range;
    if (dist == SIZE_LOGNORMAL) {
        if (median == 0 || spread < 1) {
            snprintf(err, errlen, "smtp.size_median must be > 0 and smtp.size_spread >= 1 for lognormal sizes");
            return -1;
        }
        m->mu = log((double)median);
        m->sigma = log(spread);
    }
    if (dist != SIZE_FILE)
        return 0;
    FILE *f = file && *file ? fopen(file, "r") : NULL;
    if (!f) {
        snprintf(err, errlen, "smtp.size_file: %s: %s", file && *file ? file : "(not set)",
                 file && *file ? strerror(errno) : "needed for size_dist = file");
        return -1;
    }
    char line[128];
    int lineno = 0;
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line, *end;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            continue;
        unsigned long long v = strtoull(p, &end, 10);
        while (isspace((unsigned char)*end))
            end++;
        if (end == p || *end) {
            snprintf(err, errlen, "%s:%d: expected a size in bytes", file, lineno);
            fclose(f);
            size_model_free(m);
            return -1;
        }
        m->samples = grow(m->samples, &cap, m->nsamples, 1, sizeof *m->samples);
        m->samples[m->nsamples++] = v;
    }
    fclose(f);
    if (!m->nsamples) {
        snprintf(err, errlen, "%s: no sizes in file", file);
        return -1;
    }
    return 0;
}

static double normal(struct rng *r)
{
    double u1 = rng_unit(r), u2 = rng_unit(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

uint64_t size_draw(const struct size_model *m, struct rng *r)
{
    switch (m->dist) {
    case SIZE_FIXED:
        return m->range.lo;
    case SIZE_LOGNORMAL: {
        double v = exp(m->mu + m->sigma * normal(r));
        if (v < (double)m->range.lo)
            return m->range.lo;
        if (v > (double)m->range.hi)
            return m->range.hi;
        return (uint64_t)llround(v);
    }
    case SIZE_FILE:
        return m->samples[rng_next(r) % m->nsamples];
    case SIZE_UNIFORM:
    default:
        return rng_range(r, m->range.lo, m->range.hi);
    }
}

void size_model_free(struct size_model *m)
{
    free(m->samples);
    m->samples = NULL;
    m->nsamples = 0;
}
