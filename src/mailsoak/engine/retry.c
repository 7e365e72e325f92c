/* retry: the deferred messages' queue and the back-off rule. */
#include "engine/retry.h"

uint64_t retry_backoff(uint64_t min_ns, uint64_t max_ns, uint32_t tries)
{
    uint64_t d = min_ns;
    for (uint32_t i = 1; i < tries && d < max_ns; i++)
        d = d > UINT64_MAX / 2 ? UINT64_MAX : d * 2;
    return d < max_ns ? d : max_ns;
}

int retryq_push(struct retryq *q, const struct retry_item *it)
{
    if (q->h.n >= RETRY_MAX_ITEMS)
        return -1;
    if (!q->h.elem)
        dueheap_init(&q->h, sizeof *it);
    dueheap_push(&q->h, it);
    return 0;
}

int retryq_pop_due(struct retryq *q, uint64_t now, struct retry_item *out)
{
    return dueheap_pop_due(&q->h, now, out);
}

void retryq_free(struct retryq *q)
{
    dueheap_free(&q->h);
}
