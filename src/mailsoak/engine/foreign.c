/* foreign: the set of known foreign messages per mailbox. Slots are claimed with a
 * compare-and-swap and never freed during the run; a mailbox's table is published
 * with a compare-and-swap too, the loser of a race freeing its own. */
#include "engine/foreign.h"

#include <stdlib.h>

#include "lib/alloc.h"

int foreign_init(struct foreign *f, size_t nusers)
{
    f->nusers = nusers;
    f->box = xcalloc(nusers, sizeof *f->box);
    return 0;
}

void foreign_free(struct foreign *f)
{
    for (size_t u = 0; f->box && u < f->nusers; u++)
        free((void *)atomic_load_explicit(&f->box[u], memory_order_relaxed));
    free((void *)f->box);
    f->box = NULL;
}

uint64_t foreign_key(const char *uid, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)uid[i]) * 0x100000001b3ull;
    return h | 1;
}

int foreign_any(const struct foreign *f, uint32_t user)
{
    return user < f->nusers && atomic_load_explicit(&f->box[user], memory_order_acquire) != NULL;
}

int foreign_has(const struct foreign *f, uint32_t user, uint64_t key)
{
    _Atomic uint64_t *t = user < f->nusers ? atomic_load_explicit(&f->box[user], memory_order_acquire) : NULL;
    for (unsigned i = 0; t && i < FOREIGN_PER_BOX; i++) {
        uint64_t v = atomic_load_explicit(&t[(key + i) % FOREIGN_PER_BOX], memory_order_relaxed);
        if (v == key)
            return 1;
        if (!v)
            return 0;
    }
    return 0;
}

int foreign_add(struct foreign *f, uint32_t user, uint64_t key)
{
    if (user >= f->nusers)
        return 1;
    _Atomic uint64_t *t = atomic_load_explicit(&f->box[user], memory_order_acquire);
    if (!t) {
        _Atomic uint64_t *mine = xcalloc(FOREIGN_PER_BOX, sizeof *mine), *none = NULL;
        if (atomic_compare_exchange_strong_explicit(&f->box[user], &none, mine, memory_order_acq_rel,
                                                    memory_order_acquire))
            t = mine;
        else {
            free((void *)mine);
            t = none;
        }
    }
    for (unsigned i = 0; i < FOREIGN_PER_BOX; i++) {
        _Atomic uint64_t *slot = &t[(key + i) % FOREIGN_PER_BOX];
        uint64_t v = 0;
        if (atomic_compare_exchange_strong_explicit(slot, &v, key, memory_order_relaxed, memory_order_relaxed))
            return 1;
        if (v == key)
            return 0;
    }
    return 1;                            /* full: not remembered, counted as seen now */
}
