/* units: the one place that knows what "10m", "1k" and "70MB" mean. Counts are SI
 * (1k = 1000) because they are messages; byte sizes are binary (1k = 1024). */
#include "lib/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int parse_num(const char *s, double *v, const char **rest)
{
    char *end;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s) && *s != '.')
        return -1;
    errno = 0;
    *v = strtod(s, &end);
    if (errno || end == s || !isfinite(*v) || *v < 0)
        return -1;
    *rest = end;
    return 0;
}

static int only_space(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return *s == 0;
}

int parse_duration_ns(const char *s, uint64_t *out, const char **err)
{
    double v;
    const char *u;
    if (parse_num(s, &v, &u) < 0) {
        *err = "expected a duration such as 90s, 10m, 1h or 250ms";
        return -1;
    }
    static const struct { const char *suf; double mul; } units[] = {
        { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1 }, { "s", 1e9 }, { "m", 60e9 },
        { "h", 3600e9 }, { "d", 86400e9 }, { "", 1e9 },
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t n = strlen(units[i].suf);
        if (strncmp(u, units[i].suf, n) == 0 && only_space(u + n)) {
            double ns = v * units[i].mul;
            if (ns > 1e18) {
                *err = "duration too long";
                return -1;
            }
            *out = (uint64_t)llround(ns);
            return 0;
        }
    }
    *err = "unknown duration unit (use ms, s, m, h or d)";
    return -1;
}

static int scaled(const char *s, uint64_t *out, const char **err, double k, int bytes)
{
    double v;
    const char *u;
    if (parse_num(s, &v, &u) < 0) {
        *err = bytes ? "expected a size such as 1000, 64k or 1M" : "expected a number such as 100, 10k or 2M";
        return -1;
    }
    double mul = 1;
    switch (toupper((unsigned char)*u)) {
    case 'K': mul = k; u++; break;
    case 'M': mul = k * k; u++; break;
    case 'G': mul = k * k * k; u++; break;
    default: break;
    }
    if (bytes && (!strcasecmp(u, "ib") || !strcasecmp(u, "b")))
        u += strlen(u);
    if (!only_space(u)) {
        *err = bytes ? "unknown size unit (use k, M or G)" : "unknown unit (use k, M or G)";
        return -1;
    }
    v *= mul;
    if (v > 1.8e19) {
        *err = "number too large";
        return -1;
    }
    if (!bytes && v != floor(v)) {
        *err = "expected a whole number";
        return -1;
    }
    *out = (uint64_t)llround(v);
    return 0;
}

int parse_count(const char *s, uint64_t *out, const char **err) { return scaled(s, out, err, 1000, 0); }
int parse_bytes(const char *s, uint64_t *out, const char **err) { return scaled(s, out, err, 1024, 1); }

int parse_range(const char *s, struct range *out, int bytes, const char **err)
{
    char lo[64];
    const char *dash = strchr(s, '-');
    int (*one)(const char *, uint64_t *, const char **) = bytes ? parse_bytes : parse_count;
    if (!dash) {
        if (one(s, &out->lo, err) < 0)
            return -1;
        out->hi = out->lo;
        return 0;
    }
    size_t n = (size_t)(dash - s);
    if (n == 0 || n >= sizeof lo) {
        *err = "expected a range such as 1-5";
        return -1;
    }
    memcpy(lo, s, n);
    lo[n] = 0;
    if (one(lo, &out->lo, err) < 0 || one(dash + 1, &out->hi, err) < 0)
        return -1;
    if (out->lo > out->hi) {
        *err = "range is upside down (low end above high end)";
        return -1;
    }
    return 0;
}

int parse_shard(const char *s, struct shard *out, const char **err)
{
    char k[32];
    const char *slash = strchr(s, '/');
    size_t n = slash ? (size_t)(slash - s) : 0;
    if (!slash || n == 0 || n >= sizeof k) {
        *err = "expected K/N, such as 0/2 (this run is part K of N, counting from 0)";
        return -1;
    }
    memcpy(k, s, n);
    k[n] = 0;
    if (parse_count(k, &out->k, err) < 0 || parse_count(slash + 1, &out->n, err) < 0)
        return -1;
    if (out->n == 0 || out->k >= out->n) {
        *err = "K must be below N (shards count from 0: 0/2 and 1/2)";
        return -1;
    }
    return 0;
}

int parse_rate_stages(const char *s, struct rate_stages *out, const char **err)
{
    struct rate_stages st = { 0 };
    while (*s == ' ' || *s == '\t')
        s++;
    while (*s) {
        char word[64];
        size_t n = strcspn(s, ",");
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
            n--;
        const char *at = memchr(s, '@', n);
        if (!at || n >= sizeof word || at == s) {
            *err = "expected stages DURATION@RATE separated by commas, such as 30s@50, 60s@150 (msg/s)";
            return -1;
        }
        if (st.n >= RATE_STAGES_MAX) {
            *err = "at most 32 stages";
            return -1;
        }
        memcpy(word, s, n);
        word[n] = 0;
        word[at - s] = 0;
        if (parse_duration_ns(word, &st.dur_ns[st.n], err) < 0 || parse_double(word + (at - s) + 1, &st.rate[st.n], err) < 0)
            return -1;
        if (st.dur_ns[st.n] == 0 || !(st.rate[st.n] >= 0) || st.rate[st.n] > 1e7) {
            *err = "a stage lasts more than 0 s at a rate from 0 to 10000000 msg/s";
            return -1;
        }
        st.n++;
        s += strcspn(s, ",");
        if (*s == ',')
            s++;
        while (*s == ' ' || *s == '\t')
            s++;
    }
    *out = st;
    return 0;
}

char *fmt_rate_stages(char *buf, size_t n, const struct rate_stages *st)
{
    size_t used = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < st->n && used < n; i++) {
        char d[32];
        if (st->dur_ns[i] % 1000000000ull == 0)
            snprintf(d, sizeof d, "%llus", (unsigned long long)(st->dur_ns[i] / 1000000000ull));
        else
            snprintf(d, sizeof d, "%llums", (unsigned long long)(st->dur_ns[i] / 1000000ull));
        used += (size_t)snprintf(buf + used, n - used, "%s%s@%g", i ? ", " : "", d, st->rate[i]);
    }
    return buf;
}

uint64_t rate_stages_total_ns(const struct rate_stages *st)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < st->n; i++)
        t += st->dur_ns[i];
    return t;
}

int rate_stages_at(const struct rate_stages *st, uint64_t ns)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < st->n; i++) {
        t += st->dur_ns[i];
        if (ns < t)
            return (int)i;
    }
    return -1;
}

int parse_bool(const char *s, int *out, const char **err)
{
    static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(s, yes[i])) { *out = 1; return 0; }
        if (!strcasecmp(s, no[i])) { *out = 0; return 0; }
    }
    *err = "expected yes or no";
    return -1;
}

int parse_double(const char *s, double *out, const char **err)
{
    const char *rest;
    if (parse_num(s, out, &rest) < 0 || !only_space(rest)) {
        *err = "expected a non-negative number";
        return -1;
    }
    return 0;
}

static char *fmt_scaled(char *buf, size_t n, double v, double k, double limit, const char *const *suf)
{
    int i = 0;
    /* Switch unit only when the number gets long, as the classic table does
     * (16488, 5000K; 70MB). */
    while (fabs(v) >= limit && suf[i + 1]) {
        v /= k;
        i++;
    }
    /* One decimal below 100 of a unit, unless it would print as 100.0 or x.0. */
    if (i == 0 || fabs(v) >= 99.95 || fabs(v - round(v)) < 0.05)
        snprintf(buf, n, "%.0f%s", v, suf[i]);
    else
        snprintf(buf, n, "%.1f%s", v, suf[i]);
    return buf;
}

char *fmt_count(char *buf, size_t n, double v)
{
    static const char *const suf[] = { "", "K", "M", "G", "T", NULL };
    return fmt_scaled(buf, n, v, 1000, 100000, suf);
}

char *fmt_bytes(char *buf, size_t n, double v)
{
    static const char *const suf[] = { "B", "KB", "MB", "GB", "TB", NULL };
    return fmt_scaled(buf, n, v, 1024, 10000, suf);
}

char *fmt_share(char *buf, size_t n, double pct)
{
    if (pct <= 0 || pct >= 100 || (pct >= 0.05 && pct < 99.95))
        snprintf(buf, n, "%.1f", pct);
    else if (pct < 0.01)                /* would read 0.0 or 100.0: two decimals, bounded */
        snprintf(buf, n, "<0.01");
    else
        snprintf(buf, n, "%.2f", fmin(pct, 99.99));
    return buf;
}

char *fmt_duration(char *buf, size_t n, uint64_t ns)
{
    if (ns < 1000000)
        snprintf(buf, n, "%.0fus", ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, n, "%.1fms", ns / 1e6);
    else if (ns < 120000000000ull)
        snprintf(buf, n, "%.1fs", ns / 1e9);
    else
        snprintf(buf, n, "%um%02us", (unsigned)(ns / 60000000000ull), (unsigned)(ns / 1000000000ull % 60));
    return buf;
}
