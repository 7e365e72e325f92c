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
    if (dist != SIZE_FILE && dist != SIZE_CDF)
        return 0;
    FILE *f = file && *file ? fopen(file, "r") : NULL;
    if (!f) {
        snprintf(err, errlen, "smtp.size_file: %s: %s", file && *file ? file : "(not set)",
                 file && *file ? strerror(errno) : "needed for size_dist = file or cdf");
        return -1;
    }
    char line[128];
    int lineno = 0;
    size_t cap = 0, ccap = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line, *end;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            continue;
        unsigned long long v = strtoull(p, &end, 10);
        double c = 0;
        int bad = end == p;
        if (!bad && dist == SIZE_CDF) {
            char *e2;
            c = strtod(end, &e2);
            /* ascending in both, shares within 0-1 */
            bad = e2 == end || !(c >= 0 && c <= 1) ||
                  (m->nsamples && (v <= m->samples[m->nsamples - 1] || c < m->cum[m->nsamples - 1]));
            end = e2;
        }
        while (isspace((unsigned char)*end))
            end++;
        if (bad || *end) {
            snprintf(err, errlen, "%s:%d: expected %s", file, lineno,
                     dist == SIZE_CDF ? "'BYTES SHARE', both ascending, SHARE within 0-1" : "a size in bytes");
            fclose(f);
            size_model_free(m);
            return -1;
        }
        m->samples = grow(m->samples, &cap, m->nsamples, 1, sizeof *m->samples);
        if (dist == SIZE_CDF) {
            m->cum = grow(m->cum, &ccap, m->nsamples, 1, sizeof *m->cum);
            m->cum[m->nsamples] = c;
        }
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
    case SIZE_CDF: {
        /* below the first point: uniform from the range's low end to it; between two
         * points: log-linear (sizes spread by orders of magnitude); above the last:
         * the last */
        double u = rng_unit(r) * m->cum[m->nsamples - 1], v;
        size_t i = 0;
        while (i < m->nsamples && u >= m->cum[i])
            i++;
        if (i == m->nsamples) {
            v = (double)m->samples[m->nsamples - 1];
        } else if (i == 0) {
            double lo = (double)m->range.lo < (double)m->samples[0] ? (double)m->range.lo : 0;
            v = lo + (m->cum[0] > 0 ? u / m->cum[0] : 0) * ((double)m->samples[0] - lo);
        } else {
            double f = m->cum[i] > m->cum[i - 1] ? (u - m->cum[i - 1]) / (m->cum[i] - m->cum[i - 1]) : 0;
            double a = log((double)(m->samples[i - 1] ? m->samples[i - 1] : 1)), b = log((double)m->samples[i]);
            v = exp(a + f * (b - a));
        }
        if (v < (double)m->range.lo)
            return m->range.lo;
        if (v > (double)m->range.hi)
            return m->range.hi;
        return (uint64_t)llround(v);
    }
    case SIZE_UNIFORM:
    default:
        return rng_range(r, m->range.lo, m->range.hi);
    }
}

void size_model_free(struct size_model *m)
{
    free(m->samples);
    free(m->cum);
    m->samples = NULL;
    m->cum = NULL;
    m->nsamples = 0;
}
