/* loop: epoll wrapper, timer heap and wakeup eventfd. Level-triggered on purpose:
 * a handler may read one buffer's worth and return, and is called again if more
 * is waiting, which keeps one busy connection from starving the others. */
#include "lib/loop.h"

#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"

#define MAX_EVENTS 256

struct loop {
    int epfd;
    uint64_t now;
    struct io_handler wake;
    struct timer **heap;             /* 1-based */
    size_t nheap, capheap;
    void **graveyard;                /* freed after the current iteration */
    size_t ngrave, capgrave;
};

uint64_t loop_now(const struct loop *l) { return l->now; }
void loop_update_now(struct loop *l) { l->now = mono_ns(); }

static void wake_read(struct loop *l, struct io_handler *h, uint32_t ev)
{
    uint64_t v;
    (void)l; (void)ev;
    if (read(h->fd, &v, sizeof v) < 0) { /* EAGAIN: another read got it */ }
}

struct loop *loop_new(void)
{
    struct loop *l = xcalloc(1, sizeof *l);
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    l->wake.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    l->wake.fn = wake_read;
    if (l->epfd < 0 || l->wake.fd < 0 || loop_add(l, &l->wake, EPOLLIN) < 0) {
        loop_free(l);
        return NULL;
    }
    l->now = mono_ns();
    return l;
}

void loop_free(struct loop *l)
{
    if (!l)
        return;
    if (l->epfd >= 0) close(l->epfd);
    if (l->wake.fd >= 0) close(l->wake.fd);
    for (size_t i = 0; i < l->ngrave; i++)
        free(l->graveyard[i]);
    free(l->graveyard);
    free(l->heap);
    free(l);
}

int loop_add(struct loop *l, struct io_handler *h, uint32_t events)
{
    struct epoll_event ev = { .events = events, .data.ptr = h };
    h->events = events;
    return epoll_ctl(l->epfd, EPOLL_CTL_ADD, h->fd, &ev);
}

int loop_mod(struct loop *l, struct io_handler *h, uint32_t events)
{
    struct epoll_event ev = { .events = events, .data.ptr = h };
    if (h->events == events)
        return 0;
    h->events = events;
    return epoll_ctl(l->epfd, EPOLL_CTL_MOD, h->fd, &ev);
}

void loop_del(struct loop *l, struct io_handler *h)
{
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, h->fd, NULL);
    h->events = 0;
}

void loop_wake(struct loop *l)
{
    uint64_t one = 1;
    if (write(l->wake.fd, &one, sizeof one) < 0) { /* counter full: already awake */ }
}

/* --- timer heap --- */

static void heap_set(struct loop *l, size_t i, struct timer *t)
{
    l->heap[i] = t;
    t->idx = i;
}

static void sift_up(struct loop *l, size_t i)
{
    struct timer *t = l->heap[i];
    while (i > 1 && l->heap[i / 2]->when > t->when) {
        heap_set(l, i, l->heap[i / 2]);
        i /= 2;
    }
    heap_set(l, i, t);
}

static void sift_down(struct loop *l, size_t i)
{
    struct timer *t = l->heap[i];
    for (;;) {
        size_t c = 2 * i;
        if (c > l->nheap)
            break;
        if (c + 1 <= l->nheap && l->heap[c + 1]->when < l->heap[c]->when)
            c++;
        if (l->heap[c]->when >= t->when)
            break;
        heap_set(l, i, l->heap[c]);
        i = c;
    }
    heap_set(l, i, t);
}

void timer_cancel(struct loop *l, struct timer *t)
{
    size_t i = t->idx;
    if (!i)
        return;
    struct timer *last = l->heap[l->nheap--];
    t->idx = 0;
    if (last == t)
        return;
    heap_set(l, i, last);
    sift_up(l, i);
    sift_down(l, last->idx);
}

void timer_arm(struct loop *l, struct timer *t, uint64_t when)
{
    if (t->idx) {
        uint64_t old = t->when;
        t->when = when;
        if (when < old) sift_up(l, t->idx); else sift_down(l, t->idx);
        return;
    }
    if (l->nheap + 1 >= l->capheap) {
        size_t cap = l->capheap ? l->capheap * 2 : 64;
        struct timer **h = xrealloc(l->heap, cap * sizeof *h);
        l->heap = h;
        l->capheap = cap;
    }
    t->when = when;
    heap_set(l, ++l->nheap, t);
    sift_up(l, l->nheap);
}

void timer_arm_in(struct loop *l, struct timer *t, uint64_t after)
{
    timer_arm(l, t, l->now + after);
}

/* One iteration; clock_ns 0 reads the monotonic clock after the wait, as programs
 * do, else the caller's clock stands (loop_run_at). Inlined in both callers, so
 * loop_run_once's copy has neither the test nor the count. */
static inline __attribute__((always_inline)) int run_once(struct loop *l, uint64_t max_wait, uint64_t clock_ns)
{
    struct epoll_event evs[MAX_EVENTS];
    if (clock_ns && clock_ns > l->now)
        l->now = clock_ns;
    uint64_t wait = max_wait;
    if (l->nheap) {
        uint64_t first = l->heap[1]->when;
        wait = first <= l->now ? 0 : (first - l->now < wait ? first - l->now : wait);
    }
    /* Round up so we never wake just before a timer and spin. */
    int ms = (int)((wait + NS_PER_MS - 1) / NS_PER_MS);
    int n = epoll_wait(l->epfd, evs, MAX_EVENTS, ms);
    if (!clock_ns)
        l->now = mono_ns();
    for (int i = 0; i < n; i++) {
        struct io_handler *h = evs[i].data.ptr;
        h->fn(l, h, evs[i].events);
    }
    int ran = n > 0 ? n : 0;
    while (l->nheap && l->heap[1]->when <= l->now) {
        struct timer *t = l->heap[1];
        timer_cancel(l, t);
        t->fn(l, t);
        ran++;
    }
    for (size_t i = 0; i < l->ngrave; i++)
        free(l->graveyard[i]);
    l->ngrave = 0;
    return ran;
}

void loop_run_once(struct loop *l, uint64_t max_wait) { (void)run_once(l, max_wait, 0); }

int loop_run_at(struct loop *l, uint64_t now_ns) { return run_once(l, 0, now_ns ? now_ns : 1); }

uint64_t loop_next_timer(const struct loop *l) { return l->nheap ? l->heap[1]->when : UINT64_MAX; }

void loop_defer_free(struct loop *l, void *p)
{
    if (l->ngrave == l->capgrave) {
        size_t cap = l->capgrave ? l->capgrave * 2 : 16;
        void **g = xrealloc(l->graveyard, cap * sizeof *g);
        l->graveyard = g;
        l->capgrave = cap;
    }
    l->graveyard[l->ngrave++] = p;
}
