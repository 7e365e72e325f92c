/* ledger_csv: the run's ledger as CSV (include/result/ledger_csv.h), one line per
 * message, its trail's lines joined when it is an example. */
#include "result/ledger_csv.h"

#include <stdio.h>
#include <stdlib.h>

#include "lib/atomicfile.h"
#include "lib/escape.h"
#include "lib/units.h"
#include "verdict/trail.h"

struct csv_ctx {
    const struct run_result *r;
    const struct ledger *l;
    const struct users *u;
    FILE *f;
};

static void csv_line(void *arg, uint64_t seq, const struct ledger_entry *e)
{
    struct csv_ctx *c = arg;
    const struct run_result *r = c->r;
    enum pending_reason why = PR_COUNT;
    enum outcome v = ledger_entry_outcome(c->l, e, &why);
    const struct ledger_note *note = ledger_note_of(c->l, seq);
    const struct message_example *x = run_example_of(r, seq);
    const struct example_trail *tr = x ? &x->trail : NULL;
    /* delivered after deferrals is listed too, with its tries; a late one as an example */
    if ((v == OUTCOME_DELIVERED && !note && !tr) || v == OUTCOME_REJECTED || v == OUTCOME_NONE)
        return;
    char id[64], mid[80], acc[40] = "", size[16] = "";
    /* found again after the ledger compacted it: its size and time were not kept */
    int compacted = (atomic_load_explicit(&e->state, memory_order_relaxed) & LS_REVIVED) != 0;
    msg_ids(r, ledger_msg_seq(seq, e), id, sizeof id, mid, sizeof mid);
    if (v != OUTCOME_UNCONFIRMED && !compacted)
        run_time(r, e->accepted_ms, acc, sizeof acc);
    if (!compacted)
        snprintf(size, sizeof size, "%u", e->size);
    fprintf(c->f, "%s,%s,", id, mid);
    csv_puts(c->f, c->u->v[e->user].addr);   /* from the users file: may hold a comma */
    char reason[80] = "", d[24];
    if (v == OUTCOME_PENDING)
        snprintf(reason, sizeof reason, "%s", pending_reason_names[why]);
    else if (note && v != OUTCOME_UNCONFIRMED && v != OUTCOME_DEFERRED)
        snprintf(reason, sizeof reason, "after %u tries, %s", note->tries,
                 fmt_duration(d, sizeof d, (uint64_t)(e->accepted_ms > note->first_ms ? e->accepted_ms - note->first_ms : 0) * 1000000));
    else if (v == OUTCOME_DELIVERED)
        snprintf(reason, sizeof reason, "late");
    else if (compacted)
        snprintf(reason, sizeof reason, "compacted");
    fprintf(c->f, ",%s,%s,%s,", size, acc, outcome_names[v]);
    csv_puts(c->f, reason);
    fprintf(c->f, ",%s,", ledger_qid(c->l, seq));
    if (tr) {                        /* an example: its cause and its trail, lines joined by " | " */
        csv_puts(c->f, trail_cause_names[tr->cause]);
        fputc(',', c->f);
        char *joined = NULL;
        size_t jl = 0;
        FILE *m = open_memstream(&joined, &jl);
        for (size_t i = 0; i < tr->n; i++)
            fprintf(m, "%s%s", i ? " | " : "", tr->lines[i]);
        fclose(m);
        csv_puts(c->f, joined);
        free(joined);
    } else {
        fputc(',', c->f);
    }
    fputc('\n', c->f);
}

/* A CSV of the ledger, atomically: the header, then what line() writes of each entry. */
static int write_csv(const char *path, const char *header,
                     void (*line)(void *arg, uint64_t seq, const struct ledger_entry *e),
                     const struct run_result *r, const struct ledger *l, const struct users *u, char *err,
                     size_t errlen)
{
    struct atomic_file a;
    if (atomic_open(&a, path, err, errlen) < 0)
        return -1;
    struct csv_ctx c = { r, l, u, a.f };
    fputs(header, a.f);
    ledger_each(l, line, &c);
    int ok = !ferror(a.f);
    return atomic_commit(&a, path, ok, err, errlen);
}

int write_ledger_csv(const char *path, const struct run_result *r, const struct ledger *l, const struct users *u,
                     char *err, size_t errlen)
{
    return write_csv(path, "id,message_id,mailbox,size,accepted,outcome,reason,queue_id,cause,trail\n", csv_line, r,
                     l, u, err, errlen);
}

static const char *fill_outcome(enum outcome v)
{
    switch (v) {
    case OUTCOME_DELIVERED: return "verified";
    case OUTCOME_LOST: return "missing";
    case OUTCOME_PENDING: return "unverified";
    default: return outcome_names[v];
    }
}

static void fill_csv_line(void *arg, uint64_t seq, const struct ledger_entry *e)
{
    struct csv_ctx *c = arg;
    const struct run_result *r = c->r;
    enum pending_reason why = PR_COUNT;
    enum outcome v = ledger_entry_outcome(c->l, e, &why);
    if (v == OUTCOME_NONE)
        return;
    char id[64], mid[80], acc[40] = "";
    msg_ids(r, ledger_msg_seq(seq, e), id, sizeof id, mid, sizeof mid);
    if (v <= OUTCOME_PENDING)
        run_time(r, e->accepted_ms, acc, sizeof acc);
    fprintf(c->f, "%s,%s,", id, mid);
    csv_puts(c->f, c->u->v[e->user].addr);
    fprintf(c->f, ",%u,%s,%s\n", e->size, acc, fill_outcome(v));
}

int write_fill_csv(const char *path, const struct run_result *r, const struct ledger *l, const struct users *u,
                   char *err, size_t errlen)
{
    return write_csv(path, "id,message_id,mailbox,size,accepted,outcome\n", fill_csv_line, r, l, u, err, errlen);
}
