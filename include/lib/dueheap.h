/* dueheap: a binary min-heap of fixed-size items that begin with a uint64_t due
 * time, for the queues that hand out work when it falls due (the deferred
 * messages of smtp.retry, the mailbox checks of pop3.poll_interval). One owner
 * thread, no lock. */
#ifndef MS_DUEHEAP_H
#define MS_DUEHEAP_H

#include <stddef.h>
#include <stdint.h>

struct dueheap {
    char *v;
    size_t n, cap, elem;             /* elem: an item's size; its first 8 bytes are its due time */
};

static inline void dueheap_init(struct dueheap *h, size_t elem)
{
    h->v = NULL;
    h->n = h->cap = 0;
    h->elem = elem;
}
void dueheap_push(struct dueheap *h, const void *item);
/* The earliest item, if due by now, copied to out and removed: 1; else 0. */
int dueheap_pop_due(struct dueheap *h, uint64_t now, void *out);
/* The earliest due time; 0 when empty. */
uint64_t dueheap_next(const struct dueheap *h);
void dueheap_free(struct dueheap *h);

#endif
