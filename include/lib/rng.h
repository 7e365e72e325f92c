/* rng: small, fast, seedable generators (splitmix64 to seed, xoshiro256** to draw).
 * Every random choice of a run derives from the run's seed, so a run replays. */
#ifndef MS_RNG_H
#define MS_RNG_H

#include <stdint.h>

struct rng { uint64_t s[4]; };

static inline uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void rng_seed(struct rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static inline uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5, res = ((x << 7) | (x >> 57)) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return res;
}

/* Uniform in [lo, hi]; the tiny modulo bias is irrelevant for load shapes. */
static inline uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi)
{
    return hi <= lo ? lo : lo + rng_next(r) % (hi - lo + 1);
}

static inline double rng_unit(struct rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

#endif
