/* fault: deciding when a configured fault strikes. Decisions draw from seeded
 * per-connection (or per-store) generators and count occurrences per fault, so the
 * same seed and the same traffic give the same faults. */
#include "server/fault.h"
#include "server/config.h"

#include <fnmatch.h>
#include <math.h>

#include "lib/rng.h"

void srv_rng_seed(struct srv_rng *r, uint64_t seed, uint64_t stream)
{
    r->s = seed * 0x9e3779b97f4a7c15ull ^ (stream + 1) * 0xd1b54a32d192ed03ull;
    srv_rng_next(r);
}

uint64_t srv_rng_next(struct srv_rng *r)
{
    return splitmix64(&r->s);
}

double srv_rng_unit(struct srv_rng *r)
{
    return (double)(srv_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t srv_dist_draw(const struct srv_dist *d, struct srv_rng *r)
{
    switch (d->kind) {
    case SD_FIXED:
        return d->lo;
    case SD_UNIFORM:
        return d->lo + (uint64_t)(srv_rng_unit(r) * (double)(d->hi - d->lo + 1));
    case SD_EXP: {
        double v = -log(1.0 - srv_rng_unit(r)) * (double)d->lo;
        return v > (double)d->hi ? d->hi : (uint64_t)v;
    }
    }
    return d->lo;
}

/* allow = 0 counts the event and draws, but cannot strike (another fault of the
 * stage already did), so each fault's strikes are exactly what it applied. */
static int rule_eval(const struct srv_rule *rule, uint64_t *seen, uint64_t *fired,
                     struct srv_rng *r, int allow)
{
    uint64_t n = ++*seen;
    /* Draw even when capped or too early, so one rule's cap does not shift the
     * random stream of everything decided after it. */
    double u = rule->odds > 0 ? srv_rng_unit(r) : 1.0;
    if (!allow || n <= rule->after || (rule->max && *fired >= rule->max))
        return 0;
    int hit = (rule->every && (n - rule->after) % rule->every == 0) || u < rule->odds;
    if (hit)
        ++*fired;
    return hit;
}

int srv_rule_strikes(const struct srv_rule *rule, uint64_t *seen, uint64_t *fired, struct srv_rng *r)
{
    return rule_eval(rule, seen, fired, r, 1);
}

const struct srv_cmd_fault *srv_fault_pick(const struct srv_faults *f, struct srv_fault_state *st,
                                           enum srv_stage stage, struct srv_rng *r)
{
    const struct srv_cmd_fault *hit = NULL;
    for (size_t i = 0; i < f->ncmd; i++) {
        const struct srv_cmd_fault *c = &f->cmd[i];
        if (c->stage != stage)
            continue;
        struct srv_rule rule = { .odds = c->odds, .every = c->every, .max = c->max, .after = c->after };
        if (rule_eval(&rule, &st->seen[i], &st->fired[i], r, !hit))
            hit = c;
    }
    return hit;
}

int srv_lock_window(const struct srv_store_faults *f, uint64_t t)
{
    if (!f->lock_period || t < f->lock_offset)
        return 0;
    return (t - f->lock_offset) % f->lock_period < f->lock_len;
}

int srv_addr_matches(const struct strlist *globs, const char *addr)
{
    for (size_t i = 0; i < globs->n; i++)
        if (!fnmatch(globs->v[i], addr, FNM_CASEFOLD))
            return 1;
    return 0;
}
