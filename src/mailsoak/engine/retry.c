/* retry: the deferred messages' heap and the back-off rule. */
#include "engine/retry.h"

#include <stdlib.h>

#include "lib/alloc.h"

uint64_t retry_backoff(uint64_t min_ns, uint64_t max_ns, uint32_t tries)
{
    uint64_t d = min_ns;
    for (uint32_t i = 1; i < tries && d < max_ns; i++)
        d = d > UINT64_MAX / 2 ? UINT64_MAX : d * 2;
    return d < max_ns ? d : max_ns;
}

static void swap(struct retry_item *a, struct retry_item *b)
{
    struct retry_item t = *a;
    *a = *b;
    *b = t;
}

int retryq_push(struct retryq *q, const struct retry_item *it)
{
    if (q->n >= RETRY_MAX_ITEMS)
        return -1;
    q->v = grow(q->v, &q->cap, q->n, 1, sizeof *q->v);
    size_t i = q->n++;
    q->v[i] = *it;
    while (i > 0 && q->v[(i - 1) / 2].due > q->v[i].due) {
        swap(&q->v[(i - 1) / 2], &q->v[i]);
        i = (i - 1) / 2;
    }
    return 0;
}

int retryq_pop_due(struct retryq *q, uint64_t now, struct retry_item *out)
{
    if (!q->n || q->v[0].due > now)
        return 0;
    *out = q->v[0];
    q->v[0] = q->v[--q->n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->n && q->v[l].due < q->v[m].due)
            m = l;
        if (r < q->n && q->v[r].due < q->v[m].due)
            m = r;
        if (m == i)
            break;
        swap(&q->v[i], &q->v[m]);
        i = m;
    }
    return 1;
}

void retryq_free(struct retryq *q)
{
    free(q->v);
    q->v = NULL;
    q->n = q->cap = 0;
}
