/* ladder_result: what each rung of the size ladder became, from the ledger (every
 * message's outcome, told to its rung by its body's size) and the senders' counts
 * (bodies sent, refusals and the first refusal's words). A rung whose accepted
 * messages were lost or corrupted is a failure: the server took what it did not
 * deliver intact. */
#include "run/ladder_result.h"

#include <stdatomic.h>
#include <stdio.h>

#include "engine/shared.h"
#include "settings/config.h"

struct tallying {
    struct ladder_result *lr;
    const struct ledger *l;
};

static void tally(void *arg, uint64_t seq, const struct ledger_entry *e)
{
    struct tallying *t = arg;
    struct ladder_result *lr = t->lr;
    uint64_t rungs[LADDER_RUNGS_MAX];
    (void)seq;
    for (unsigned i = 0; i < lr->n; i++)
        rungs[i] = lr->v[i].size;
    int k = ladder_rung_of(rungs, lr->n, e->size);
    if (k < 0)
        return;
    struct ladder_rung_result *x = &lr->v[k];
    enum pending_reason why;
    switch (ledger_entry_outcome(t->l, e, &why)) {
    case OUTCOME_DELIVERED: x->accepted++; x->delivered++; break;
    case OUTCOME_DUPLICATED: x->accepted++; x->duplicated++; break;
    case OUTCOME_CORRUPTED: x->accepted++; x->corrupted++; break;
    case OUTCOME_LOST: x->accepted++; x->lost++; break;
    case OUTCOME_PENDING: x->accepted++; x->pending++; break;
    default: break;
    }
}

void ladder_result(struct run_result *res, const struct run *r)
{
    struct ladder_result *lr = &res->ladder;
    uint64_t limit = atomic_load(&r->ladder_limit), rungs[LADDER_RUNGS_MAX];
    lr->on = 1;
    lr->advertised = limit ? limit - 1 : 0;
    lr->n = ladder_rungs(lr->advertised, res->cfg->ladder_max, rungs);
    for (unsigned i = 0; i < lr->n; i++) {
        struct ladder_rung_result *x = &lr->v[i];
        const struct ladder_seen *ls = &r->ladder_seen[i];
        x->size = rungs[i];
        x->tried = atomic_load(&ls->tried);
        x->refused = atomic_load(&ls->refused);
        snprintf(x->reply, sizeof x->reply, "%s", atomic_load(&ls->said) == 2 ? ls->reply : "");
    }
    struct tallying t = { lr, &r->ledger };
    ledger_each(&r->ledger, tally, &t);
    lr->largest = -1;
    for (unsigned i = 0; i < lr->n; i++) {
        const struct ladder_rung_result *x = &lr->v[i];
        if (x->tried && x->delivered == x->tried)
            lr->largest = (int)i;
        lr->failures += x->lost + x->corrupted > 0;
    }
}
