/* retry: a worker's queue of deferred messages, as an MTA keeps one. A message
 * (or the recipients of it) that got a 4xx waits here until its back-off ends
 * (doubling from smtp.retry_min up to smtp.retry_max, as Postfix's
 * minimal_backoff_time and maximal_backoff_time), then a sender of the same
 * worker takes it before any new message. One owner thread, no lock: a heap by
 * due time (lib/dueheap.h), bounded by RETRY_MAX_ITEMS. */
#ifndef MS_ENGINE_RETRY_H
#define MS_ENGINE_RETRY_H

#include <stddef.h>
#include <stdint.h>

#include "lib/dueheap.h"
#include "settings/config.h"

/* Past this many deferred messages a worker gives the next ones up (counted). */
#define RETRY_MAX_ITEMS 100000

struct retry_item {
    uint64_t due;                    /* monotonic ns: not before */
    uint64_t first;                  /* monotonic ns: the first attempt began */
    uint32_t tries;                  /* attempts made so far */
    uint8_t token;                   /* holds a unit of the messages = N budget */
    uint8_t n;                       /* recipients */
    uint32_t users[MAX_RCPTS];
};

struct retryq {
    struct dueheap h;                /* of struct retry_item; zeroed = empty */
};

/* The wait after `tries` attempts: min << (tries - 1), at most max. */
uint64_t retry_backoff(uint64_t min_ns, uint64_t max_ns, uint32_t tries);
/* 0, or -1 when the queue is full (the item is not kept). */
int retryq_push(struct retryq *q, const struct retry_item *it);
/* The earliest item if it is due by now (removed into *out): 1, else 0. */
int retryq_pop_due(struct retryq *q, uint64_t now, struct retry_item *out);
/* When the earliest item is due; 0 when the queue is empty. */
static inline uint64_t retryq_next_due(const struct retryq *q) { return dueheap_next(&q->h); }
static inline size_t retryq_len(const struct retryq *q) { return q->h.n; }
void retryq_free(struct retryq *q);

#endif
