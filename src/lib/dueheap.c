/* dueheap: sift up and down over items compared by their leading due time. */
#include "lib/dueheap.h"

#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

static uint64_t due_at(const struct dueheap *h, size_t i)
{
    uint64_t d;
    memcpy(&d, h->v + i * h->elem, sizeof d);
    return d;
}

static void swap(struct dueheap *h, size_t a, size_t b)
{
    char t[512];                     /* items are small; a bigger one would not compile into a queue here */
    char *x = h->v + a * h->elem, *y = h->v + b * h->elem;
    memcpy(t, x, h->elem);
    memcpy(x, y, h->elem);
    memcpy(y, t, h->elem);
}

void dueheap_push(struct dueheap *h, const void *item)
{
    if (h->elem > 512)
        abort();
    h->v = grow(h->v, &h->cap, h->n, 1, h->elem);
    size_t i = h->n++;
    memcpy(h->v + i * h->elem, item, h->elem);
    while (i > 0 && due_at(h, (i - 1) / 2) > due_at(h, i)) {
        swap(h, (i - 1) / 2, i);
        i = (i - 1) / 2;
    }
}

int dueheap_pop_due(struct dueheap *h, uint64_t now, void *out)
{
    if (!h->n || due_at(h, 0) > now)
        return 0;
    memcpy(out, h->v, h->elem);
    if (--h->n)
        memcpy(h->v, h->v + h->n * h->elem, h->elem);
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && due_at(h, l) < due_at(h, m))
            m = l;
        if (r < h->n && due_at(h, r) < due_at(h, m))
            m = r;
        if (m == i)
            break;
        swap(h, i, m);
        i = m;
    }
    return 1;
}

uint64_t dueheap_next(const struct dueheap *h)
{
    return h->n ? due_at(h, 0) : 0;
}

void dueheap_free(struct dueheap *h)
{
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}
