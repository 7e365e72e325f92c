/* reconcile: the server's queue against the ledger (include/verdict/reconcile.h). */
#include "verdict/reconcile.h"

#include <string.h>
#include <strings.h>

#include "engine/msg.h"
#include "engine/shared.h"
#include "probe/spool.h"

static int addr_in(const char *addr, const struct queue_msg *qm)
{
    for (size_t i = 0; i < qm->nrcpts; i++)
        if (!strcasecmp(addr, qm->rcpts[i]))
            return 1;
    return 0;
}

void reconcile_queued(void *ctx, const struct queue_msg *qm)
{
    struct reconcile *rc = ctx;
    const struct users *u = rc->users;
    char run_id[MSG_RUNID_LEN + 1];
    uint64_t seq;
    unsigned nrcpt;
    if (!qm->id || msg_parse_id(qm->id, qm->idlen, run_id, &seq, &nrcpt) < 0 || strcmp(run_id, rc->run_id))
        return;
    size_t mapped = 0;
    for (unsigned i = 0; qm->rcpts_known && i < nrcpt; i++) {
        const struct ledger_entry *e = ledger_get(rc->l, seq + i);
        mapped += e && e->user < u->n && ledger_msg_seq(seq + i, e) == seq && addr_in(u->v[e->user].addr, qm);
    }
    if (!qm->rcpts_known || mapped < qm->nrcpts) {
        rc->owed += ledger_mark_queued(rc->l, seq, nrcpt);
        return;
    }
    for (unsigned i = 0; i < nrcpt; i++) {
        const struct ledger_entry *e = ledger_get(rc->l, seq + i);
        if (e && e->user < u->n && addr_in(u->v[e->user].addr, qm))
            rc->owed += ledger_mark_queued_rcpt(rc->l, seq, i) > 0;
    }
}

int reconcile_queue(struct spool *q, struct run *r, int fresh)
{
    if (!q)
        return RECONCILE_NO_QUEUE;
    struct reconcile rc = { &r->ledger, &r->users, r->run_id, 0 };
    struct queue_totals t = { 0 };
    if (fresh)
        ledger_queued_clear(&r->ledger);
    spool_scan(q, reconcile_queued, &rc, &t);
    return t.unreadable ? RECONCILE_UNREADABLE : (int)rc.owed;
}
