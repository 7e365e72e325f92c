/* clock: the one clock every measurement of a run is taken on, CLOCK_MONOTONIC in
 * nanoseconds: it does not jump when the wall clock is set, and every thread (the
 * workers, the collector, the controller) reads the same one, so their times can be
 * subtracted from each other. */
#ifndef MS_CLOCK_H
#define MS_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NS_PER_MS 1000000ull
#define NS_PER_S  1000000000ull

static inline uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

#endif
