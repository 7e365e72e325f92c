/* units: parse and print the human units used in configs and tables
 * ("90s", "10m", "1k", "0-1000", "45M", "70MB"). */
#ifndef MS_UNITS_H
#define MS_UNITS_H

#include <stddef.h>
#include <stdint.h>

struct range { uint64_t lo, hi; };
/* Part k of n (0 <= k < n): a run of a sharded load owns the users whose index mod n is k. */
struct shard { uint64_t k, n; };
/* A load profile: stages of a duration each at a rate (msg/s), one after another. */
#define RATE_STAGES_MAX 32
struct rate_stages {
    unsigned n;                      /* 0: no profile */
    uint64_t dur_ns[RATE_STAGES_MAX];
    double rate[RATE_STAGES_MAX];
};

/* All return 0 on success, -1 with a reason in err. */
int parse_duration_ns(const char *s, uint64_t *out, const char **err);  /* 90s 10m 1h 250ms; bare = s */
int parse_count(const char *s, uint64_t *out, const char **err);        /* 1k = 1000, 2M */
int parse_bytes(const char *s, uint64_t *out, const char **err);        /* 1k = 1024, 1M, 1KiB */
int parse_range(const char *s, struct range *out, int bytes, const char **err); /* 0-1000 or 5 */
int parse_shard(const char *s, struct shard *out, const char **err);    /* K/N, 0 <= K < N */
int parse_bool(const char *s, int *out, const char **err);
int parse_double(const char *s, double *out, const char **err);
/* "30s@50, 60s@150, 120s@50": DURATION@RATE stages; "" is none */
int parse_rate_stages(const char *s, struct rate_stages *out, const char **err);
char *fmt_rate_stages(char *buf, size_t n, const struct rate_stages *st);
uint64_t rate_stages_total_ns(const struct rate_stages *st);
/* The stage that holds the time ns since the start, or -1 past the last (or none). */
int rate_stages_at(const struct rate_stages *st, uint64_t ns);

/* Compact human forms for tables: 16488, 120M, 5000K (counts, SI) and 70MB (bytes). */
char *fmt_count(char *buf, size_t n, double v);
char *fmt_bytes(char *buf, size_t n, double v);
char *fmt_duration(char *buf, size_t n, uint64_t ns);
/* A share in per cent with one decimal (no sign): one strictly between 0 and 100 never
 * prints as 0.0 or 100.0, so one message in a million unproven still shows. */
char *fmt_share(char *buf, size_t n, double pct);

#endif
