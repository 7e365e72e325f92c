/* examples: the messages of a run that were not delivered exactly once, shown one by
 * one (lost, duplicated, corrupted, late: the first run.error_examples of each, in
 * ledger order), and for each the server's own evidence: its trail in the logs the
 * local collector followed, read a second time once the run stopped (verdict/trail.h),
 * with the crashes the run saw as evidence for a message that vanished. */
#include "run/examples.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "lib/alloc.h"
#include "settings/config.h"
#include "verdict/trail.h"

/* What the picking reads (the live run) and fills (the result). */
struct picking {
    struct run_result *res;
    const struct run *run;
};

/* Copies of what the example shows: its mailbox, its queue id. */
static void add_example(struct picking *p, int kind, uint64_t seq, const struct ledger_entry *e, uint32_t st)
{
    struct run_result *res = p->res;
    const struct run *run = p->run;
    if (res->nexamples[kind] >= LOST_EXAMPLES_MAX || res->nexamples[kind] >= res->cfg->error_examples)
        return;
    res->examples[kind][res->nexamples[kind]++] = (struct message_example){
        .seq = ledger_msg_seq(seq, e), .entry = seq, .mailbox = xstrdup(run->users.v[e->user].addr),
        .accepted_ms = e->accepted_ms,
        .read_ms = atomic_load_explicit(&run->ledger.visit_ms[e->user], memory_order_relaxed),
        .reads = st & LS_READS, .queue_id = xstrdup(ledger_qid(&run->ledger, seq)),
        .compacted = (st & LS_REVIVED) != 0,
    };
}

static void pick(void *arg, uint64_t seq, const struct ledger_entry *e)
{
    struct picking *p = arg;
    enum pending_reason why;
    uint32_t st = atomic_load_explicit(&e->state, memory_order_acquire);
    enum outcome v = ledger_entry_outcome(&p->run->ledger, e, &why);
    /* the corrupted are those whose difference a reader described: corrupted_examples() */
    int kind = v == OUTCOME_LOST ? EX_LOST : v == OUTCOME_DUPLICATED ? EX_DUPLICATED
             : v == OUTCOME_DELIVERED && (st & LS_LATE) ? EX_LATE : -1;
    if (kind >= 0)
        add_example(p, kind, seq, e, st);
}

/* The corrupted messages the readers described, in the order they did: one list,
 * each with what differed. */
static void corrupted_examples(struct picking *p)
{
    struct run_result *res = p->res;
    for (unsigned i = 0; i < res->corrupt.n && i < ERR_EXAMPLES_MAX; i++) {
        struct ledger_entry *e = ledger_get(&p->run->ledger, res->corrupt_entry[i]);
        enum pending_reason why;
        if (!e || ledger_entry_outcome(&p->run->ledger, e, &why) != OUTCOME_CORRUPTED)
            continue;
        unsigned n = res->nexamples[EX_CORRUPTED];
        add_example(p, EX_CORRUPTED, res->corrupt_entry[i], e, atomic_load_explicit(&e->state, memory_order_acquire));
        if (res->nexamples[EX_CORRUPTED] > n) {
            const char *t = strstr(res->corrupt.text[i], ": ");
            res->examples[EX_CORRUPTED][n].differs = xstrdup(t ? t + 2 : res->corrupt.text[i]);
        }
    }
}

static void line(void *ctx, size_t file, const char *text, size_t len)
{
    (void)file;
    trails_line(ctx, text, len);
}

/* The trail's copy: what the writers show of it. */
static void trail_copy(struct example_trail *to, const struct trail *tr)
{
    const char *lines[TRAIL_HEAD + TRAIL_TAIL];
    to->cause = tr->cause;
    to->cause_line = tr->cause_line ? xstrdup(tr->cause_line) : NULL;
    snprintf(to->last_queue, sizeof to->last_queue, "%s", tr->last_queue);
    snprintf(to->left, sizeof to->left, "%s", tr->left);
    to->nlines = tr->nlines;
    to->n = (unsigned)trail_lines(tr, lines, TRAIL_HEAD + TRAIL_TAIL, &to->skipped);
    for (unsigned i = 0; i < to->n; i++)
        to->lines[i] = xstrdup(lines[i]);
}

void examples_collect(struct run_result *res, const struct run *run, struct sources *src)
{
    memset(res->nexamples, 0, sizeof res->nexamples);
    const struct ledger_outcome *lo = &res->lo;
    if (lo->lost + lo->duplicated + lo->corrupted + lo->late == 0)
        return;
    struct picking p = { res, run };
    ledger_each(&run->ledger, pick, &p);
    corrupted_examples(&p);
    struct probe_summary ps;
    sources_summary(src, &ps);
    int logs = ps.has.logs;
    if (!logs) {
        probe_summary_free(&ps);
        return;
    }
    struct trails *t = trails_new();
    for (int k = 0; k < EX_KINDS; k++)
        for (unsigned i = 0; i < res->nexamples[k]; i++) {
            const struct message_example *x = &res->examples[k][i];
            char mid[80];
            snprintf(mid, sizeof mid, "%s.%llx@mailsoak.invalid", run->run_id, (unsigned long long)x->seq);
            trails_want(t, x->entry, k == EX_LOST ? OUTCOME_LOST : k == EX_DUPLICATED ? OUTCOME_DUPLICATED
                                     : k == EX_CORRUPTED ? OUTCOME_CORRUPTED : OUTCOME_DELIVERED,
                        k == EX_LATE, x->queue_id, mid);
        }
    /* a crash: a process of the server that died, or a fatal line in its logs */
    struct probe_events pe;
    sources_events(src, &pe);
    for (size_t i = 0; i < pe.n; i++)
        if (!strcmp(pe.v[i].kind, "crash") || !strcmp(pe.v[i].kind, "child_crash"))
            trails_crash(t, pe.v[i].text);
    probe_events_free(&pe);
    for (size_t i = 0; i < ps.ncls; i++)
        if (!strcmp(ps.classes[i].name, "fatal") && ps.classes[i].nex)
            trails_crash(t, ps.classes[i].ex[0].line);
    probe_summary_free(&ps);
    sources_rescan_logs(src, line, t);
    trails_done(t);
    for (int k = 0; k < EX_KINDS; k++)
        for (unsigned i = 0; i < res->nexamples[k]; i++) {
            struct message_example *x = &res->examples[k][i];
            const struct trail *tr = trails_find(t, x->entry);
            if (tr) {
                x->has_trail = 1;
                trail_copy(&x->trail, tr);
            }
        }
    trails_free(t);
}
