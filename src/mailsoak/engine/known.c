/* known: per-mailbox sorted sets of UID keys. */
#include "engine/known.h"

#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

int known_init(struct known *k, size_t nusers)
{
    memset(k, 0, sizeof *k);
    k->nusers = nusers;
    k->box = xcalloc(nusers, sizeof *k->box);
    return 0;
}

void known_free(struct known *k)
{
    for (size_t i = 0; k->box && i < k->nusers; i++) {
        free(k->box[i].k);
        free(k->box[i].seen);
    }
    free(k->box);
    memset(k, 0, sizeof *k);
}

/* The first index whose key is >= key. */
static uint32_t lower(const struct known_box *b, uint64_t key)
{
    uint32_t lo = 0, hi = b->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (b->k[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int known_has(const struct known *k, uint32_t user, uint64_t key)
{
    if (!known_any(k, user))
        return 0;
    const struct known_box *b = &k->box[user];
    uint32_t i = lower(b, key);
    return i < b->n && b->k[i] == key;
}

int known_add(struct known *k, uint32_t user, uint64_t key)
{
    if (!k->box || user >= k->nusers)
        return 0;
    struct known_box *b = &k->box[user];
    uint32_t i = lower(b, key);
    if (i < b->n && b->k[i] == key)
        return 0;
    if (b->n == b->cap) {
        uint32_t cap = b->cap ? 2 * b->cap : 8;
        b->k = xrealloc(b->k, cap * sizeof *b->k);
        b->seen = xrealloc(b->seen, cap * sizeof *b->seen);
        b->cap = cap;
    }
    memmove(b->k + i + 1, b->k + i, (size_t)(b->n - i) * sizeof *b->k);
    memmove(b->seen + i + 1, b->seen + i, (size_t)(b->n - i) * sizeof *b->seen);
    b->k[i] = key;
    b->seen[i] = 0;
    b->n++;
    k->total++;
    return 1;
}

uint32_t *known_seen(struct known *k, uint32_t user, uint64_t key)
{
    if (!known_any(k, user))
        return NULL;
    struct known_box *b = &k->box[user];
    uint32_t i = lower(b, key);
    return i < b->n && b->k[i] == key ? &b->seen[i] : NULL;
}

void known_del(struct known *k, uint32_t user, uint64_t key)
{
    if (!known_any(k, user))
        return;
    struct known_box *b = &k->box[user];
    uint32_t i = lower(b, key);
    if (i >= b->n || b->k[i] != key)
        return;
    memmove(b->k + i, b->k + i + 1, (size_t)(b->n - i - 1) * sizeof *b->k);
    memmove(b->seen + i, b->seen + i + 1, (size_t)(b->n - i - 1) * sizeof *b->seen);
    b->n--;
    k->total--;
}
