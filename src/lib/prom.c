/* prom: the Prometheus text exposition format (see prom.h). Numbers are written so
 * that a counter up to 2^64 stays exact (integers) and a fraction round-trips
 * closely enough for a dashboard (%.15g). */
#include "lib/prom.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

static void put(struct prom *p, const char *s, size_t n)
{
    p->buf = grow(p->buf, &p->cap, p->len, n + 1, 1);
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = 0;
}

static void puts_(struct prom *p, const char *s)
{
    put(p, s, strlen(s));
}

static void putf(struct prom *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct prom *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    p->buf = grow(p->buf, &p->cap, p->len, (size_t)n + 1, 1);
    va_start(ap, fmt);
    vsnprintf(p->buf + p->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    p->len += (size_t)n;
}

/* HELP text escapes backslash and newline; a label value also the double quote. */
static void escaped(struct prom *p, const char *s, int label)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '\\' || (label && ch == '"')) {
            char e[2] = { '\\', (char)ch };
            put(p, e, 2);
        } else if (ch == '\n') {
            put(p, "\\n", 2);
        } else {
            char c = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
            put(p, &c, 1);
        }
    }
}

void prom_family(struct prom *p, const char *name, const char *type, const char *help)
{
    putf(p, "# HELP %s ", name);
    escaped(p, help, 0);
    putf(p, "\n# TYPE %s %s\n", name, type);
}

static void labels(struct prom *p, va_list ap, const char *le)
{
    const char *k = va_arg(ap, const char *);
    if (!k && !le)
        return;
    put(p, "{", 1);
    int first = 1;
    for (; k; k = va_arg(ap, const char *)) {
        const char *v = va_arg(ap, const char *);
        putf(p, "%s%s=\"", first ? "" : ",", k);
        escaped(p, v ? v : "", 1);
        put(p, "\"", 1);
        first = 0;
    }
    if (le)
        putf(p, "%sle=\"%s\"", first ? "" : ",", le);
    put(p, "}", 1);
}

static void value_double(struct prom *p, double v)
{
    if (isnan(v))
        puts_(p, " NaN\n");
    else if (isinf(v))
        puts_(p, v > 0 ? " +Inf\n" : " -Inf\n");
    else
        putf(p, " %.15g\n", v);
}

void prom_u64(struct prom *p, const char *name, uint64_t v, ...)
{
    va_list ap;
    va_start(ap, v);
    puts_(p, name);
    labels(p, ap, NULL);
    va_end(ap);
    putf(p, " %llu\n", (unsigned long long)v);
}

void prom_double(struct prom *p, const char *name, double v, ...)
{
    va_list ap;
    va_start(ap, v);
    puts_(p, name);
    labels(p, ap, NULL);
    va_end(ap);
    value_double(p, v);
}

/* A va_list cannot be built by hand, so one sample with an optional label pair
 * and an le goes through this variadic helper. */
static void bucket(struct prom *p, const char *name, const char *le, uint64_t v, ...)
{
    va_list ap;
    va_start(ap, v);
    putf(p, "%s_bucket", name);
    labels(p, ap, le);
    va_end(ap);
    putf(p, " %llu\n", (unsigned long long)v);
}

void prom_histogram(struct prom *p, const char *name, const char *key, const char *val, const double *le,
                    const uint64_t *cum, size_t n, double sum, uint64_t count)
{
    char b[32], sname[128], cname[128];
    for (size_t i = 0; i < n; i++) {
        snprintf(b, sizeof b, "%.15g", le[i]);
        bucket(p, name, b, cum[i], key, val, NULL);
    }
    bucket(p, name, "+Inf", count, key, val, NULL);
    snprintf(sname, sizeof sname, "%s_sum", name);
    snprintf(cname, sizeof cname, "%s_count", name);
    prom_double(p, sname, sum, key, val, NULL);
    prom_u64(p, cname, count, key, val, NULL);
}

char *prom_take(struct prom *p, size_t *len)
{
    if (!p->buf)
        put(p, "", 0);
    char *s = p->buf;
    *len = p->len;
    memset(p, 0, sizeof *p);
    return s;
}

void prom_free(struct prom *p)
{
    free(p->buf);
    memset(p, 0, sizeof *p);
}
