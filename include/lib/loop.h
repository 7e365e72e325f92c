/* loop: one epoll event loop per thread with a min-heap of timers and a cached
 * monotonic clock. Every call takes the loop it acts on; other threads reach a loop
 * only through loop_wake(). Shared by the load tester and the reference server. */
#ifndef MS_LOOP_H
#define MS_LOOP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "lib/clock.h"

struct loop;

/* Embedded in whatever owns a descriptor; epoll hands it back to fn. */
struct io_handler {
    int fd;
    uint32_t events;                 /* currently registered EPOLL* mask */
    void (*fn)(struct loop *l, struct io_handler *h, uint32_t events);
};

/* Embedded too; idx is the heap position, 0 when not armed. */
struct timer {
    uint64_t when;                   /* monotonic ns */
    size_t idx;
    void (*fn)(struct loop *l, struct timer *t);
};

struct loop *loop_new(void);
void loop_free(struct loop *l);

int loop_add(struct loop *l, struct io_handler *h, uint32_t events);
int loop_mod(struct loop *l, struct io_handler *h, uint32_t events);
void loop_del(struct loop *l, struct io_handler *h);

void timer_arm(struct loop *l, struct timer *t, uint64_t when_ns);
void timer_arm_in(struct loop *l, struct timer *t, uint64_t after_ns);
void timer_cancel(struct loop *l, struct timer *t);
static inline int timer_armed(const struct timer *t) { return t->idx != 0; }

/* Runs ready handlers and expired timers once, waiting at most max_wait_ns. */
void loop_run_once(struct loop *l, uint64_t max_wait_ns);
/* An epoll batch may still hold events for an object closed earlier in the
 * batch: objects that own a handler are freed through this, after the batch. */
void loop_defer_free(struct loop *l, void *p);
/* Callable from any thread: makes a loop_run_once in progress return early. */
void loop_wake(struct loop *l);

/* The clock as of the current loop iteration (cheap); mono_ns() (lib/clock.h) reads
 * it afresh. */
uint64_t loop_now(const struct loop *l);
void loop_update_now(struct loop *l);

/* For tests (tests/unit/session_script.h): loop_run_once on a clock the caller
 * keeps. The loop's clock is set to now_ns (never back) instead of read, nothing is
 * waited for, and it returns how many handlers and timers ran (0: nothing was
 * ready), so a test, not the machine's speed, decides when a timer is due.
 * loop_run_once compiles to what it was without it. */
int loop_run_at(struct loop *l, uint64_t now_ns);
/* When the first armed timer is due, UINT64_MAX when none is armed. */
uint64_t loop_next_timer(const struct loop *l);

#endif
