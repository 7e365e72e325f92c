/* ladder: the rungs of the size ladder, and which rung a message was. */
#include "engine/ladder.h"

unsigned ladder_rungs(uint64_t limit, uint64_t max, uint64_t out[LADDER_RUNGS_MAX])
{
    unsigned n = 0;
    uint64_t top = limit ? limit : max;
    uint64_t s = LADDER_BASE;
    for (; s <= top && n < LADDER_RUNGS_MAX - 2; s *= 2)
        out[n++] = s;
    if (limit) {
        uint64_t below = n ? out[n - 1] : 0;
        if (limit - below >= LADDER_SLACK && s - limit >= LADDER_SLACK)
            out[n++] = limit;            /* RFC 1870: a message of exactly SIZE is to be taken */
        out[n++] = s;                    /* and one past it */
    } else if (!n) {
        out[n++] = s;
    }
    return n;
}

int ladder_rung_of(const uint64_t *rungs, unsigned n, uint64_t body)
{
    for (unsigned i = 0; i < n; i++)
        if (rungs[i] >= body)
            return rungs[i] - body <= LADDER_SLACK ? (int)i : -1;
    return -1;
}
