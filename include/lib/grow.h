/* grow: the one way arrays grow here — double the capacity until n more items fit;
 * out of memory aborts, since a load tester cannot go on without its bookkeeping. */
#ifndef MS_GROW_H
#define MS_GROW_H

#include <stdlib.h>

static inline void *grow(void *p, size_t *cap, size_t used, size_t more, size_t elem)
{
    if (used + more <= *cap)
        return p;
    size_t c = *cap ? *cap : 16;
    while (c < used + more)
        c *= 2;
    void *q = realloc(p, c * elem);
    if (!q)
        abort();
    *cap = c;
    return q;
}

#endif
