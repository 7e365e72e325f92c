/* run_table: a run's result (result/run_result.h) as the table printed at its end
 * (the classic backend comparison's shape, one row per metric): the fill, the
 * counts, the server's rows, errors, latencies, the tester's notes, the size
 * ladder, the verdict, then the messages shown one by one. A writer only. */
#include "result/run_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/units.h"
#include "result/probe_output.h"
#include "result/verdict_output.h"
#include "settings/config.h"
#include "verdict/judge.h"

static double ms(uint64_t ns) { return (double)ns / 1e6; }
static void row(FILE *f, const char *name, const char *value)
{
    fprintf(f, "%-12s %12s\n", name, value);
}

/* Counts exact, as the server's rows are: one style in the column (not 274K above
 * 54609). */
static void row_count(FILE *f, const char *name, double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.0f", v);
    row(f, name, b);
}

/* Whether delivery latency measured the readers rather than the server
 * (judge_readers_bound), from the last interval of the send phase. Sets the unread
 * count and the queue (-1: not measured). */
static int readers_bound(const struct run_result *r, uint64_t *unread, long long *queued)
{
    const struct config *cfg = r->cfg;
    if (!r->send_end.has || !cfg->readers)
        return 0;
    *unread = r->send_end.unread;
    *queued = r->send_end.queued;
    return judge_readers_bound(*unread, *queued, cfg->readers, cfg->max_per_session);
}

void fill_table(FILE *f, const struct fill_summary *fs)
{
    char a[16], b[16], c[16];
    if (fs->from)                    /* an earlier run's, left where it is */
        fprintf(f, "fill (of run %s, from %s): ", fs->run_id, fs->from);
    fprintf(f, "fill: %s messages in %s mailboxes (%s) in %.1f s, %.0f/s: accepted %llu, verified %llu",
            fmt_count(a, sizeof a, (double)fs->planned), fmt_count(b, sizeof b, (double)fs->mailboxes),
            fmt_bytes(c, sizeof c, (double)fs->bytes), fs->elapsed_s,
            fs->elapsed_s > 0 ? (double)fs->accepted / fs->elapsed_s : 0, (unsigned long long)fs->accepted,
            (unsigned long long)fs->verified);
    if (fs->duplicated || fs->missing || fs->unverified)
        fprintf(f, ", duplicated %llu, missing %llu, unverified %llu", (unsigned long long)fs->duplicated,
                (unsigned long long)fs->missing, (unsigned long long)fs->unverified);
    if (fs->deferrals)
        fprintf(f, " (%llu deferrals retried)", (unsigned long long)fs->deferrals);
    fprintf(f, "%s\n", fs->verified == fs->planned && fs->accepted == fs->planned
                           ? ": the store holds them exactly"
                           : fs->settled ? "" : " (the server did not settle: what is not verified is unproven)");
}

/* At most this many of a trail's lines in the table (the JSON has them all). */
#define TABLE_TRAIL_LINES 8

static void table_examples(FILE *f, const struct run_result *r, int kind)
{
    if (kind == EX_LATE)
        fprintf(f, "\nlate messages (first %u): delivered intact, first read by the sweep; their trails are in the "
                   "JSON\n", r->nexamples[kind]);
    else
        fprintf(f, "\n%s messages (first %u)\n", example_kind_names[kind], r->nexamples[kind]);
    for (unsigned i = 0; i < r->nexamples[kind]; i++) {
        const struct message_example *x = &r->examples[kind][i];
        char id[64], mid[80];
        msg_ids(r, x->seq, id, sizeof id, mid, sizeof mid);
        fprintf(f, "  %s %s%s%s for %s: ", id, mid, x->queue_id[0] ? " queued as " : "", x->queue_id,
                x->mailbox);
        if (x->compacted)
            fprintf(f, "delivered once, its entry compacted, then found again");
        else
            fprintf(f, "accepted at %.1f s", x->accepted_ms / 1e3);
        if (kind == EX_LOST)
            fprintf(f, ", not in its mailbox read in full at %.1f s\n", x->read_ms / 1e3);
        else
            fprintf(f, ", read %u time%s\n", x->reads, x->reads == 1 ? "" : "s");
        if (x->differs)
            fprintf(f, "    differs: %s\n", x->differs);
        const struct example_trail *tr = &x->trail;
        if (!x->has_trail || kind == EX_LATE)
            continue;
        if (tr->cause)
            fprintf(f, "    cause: %s%s%s\n", trail_cause_names[tr->cause], tr->cause_line ? ": " : "",
                    tr->cause_line ? tr->cause_line : "");
        if (tr->last_queue[0])
            fprintf(f, "    last seen in the %s queue%s\n", tr->last_queue,
                    !strcmp(tr->left, "deleted") ? ", then deleted from it"
                    : !strcmp(tr->left, "left") ? ", which it then left" : "");
        size_t n = tr->n < TABLE_TRAIL_LINES ? tr->n : TABLE_TRAIL_LINES;
        for (size_t j = 0; j < n; j++)
            fprintf(f, "    | %s\n", tr->lines[j]);
        if (tr->nlines > n)
            fprintf(f, "    | ... %llu more line%s in the JSON's trail\n", (unsigned long long)(tr->nlines - n),
                    tr->nlines - n == 1 ? "" : "s");
    }
}

static void table_ladder(FILE *f, const struct ladder_result *lr)
{
    if (lr->advertised)
        fprintf(f, "\nsize ladder: the server advertised SIZE %llu\n", (unsigned long long)lr->advertised);
    else
        fprintf(f, "\nsize ladder: the server advertised no SIZE limit\n");
    fprintf(f, "  %10s %6s %8s %9s %10s %5s %8s %8s  %s\n", "size", "tried", "refused", "accepted", "delivered",
            "lost", "corrupt", "pending", "reply to the refused");
    for (unsigned i = 0; i < lr->n; i++) {
        const struct ladder_rung_result *x = &lr->v[i];
        fprintf(f, "  %10llu %6llu %8llu %9llu %10llu %5llu %8llu %8llu  %s\n", (unsigned long long)x->size,
                (unsigned long long)x->tried, (unsigned long long)x->refused, (unsigned long long)x->accepted,
                (unsigned long long)x->delivered, (unsigned long long)x->lost, (unsigned long long)x->corrupted,
                (unsigned long long)x->pending, x->reply);
    }
    if (lr->largest >= 0)
        fprintf(f, "largest size delivered intact: %llu bytes\n", (unsigned long long)lr->v[lr->largest].size);
    else
        fprintf(f, "no size was delivered intact\n");
    for (unsigned i = 0; i < lr->n; i++) {
        const struct ladder_rung_result *x = &lr->v[i];
        if (x->lost + x->corrupted)
            fprintf(f, "FAILURE: the server accepted %llu message%s of %llu bytes and did not deliver %llu of them "
                       "intact (%llu lost, %llu corrupted)\n",
                    (unsigned long long)x->accepted, x->accepted == 1 ? "" : "s", (unsigned long long)x->size,
                    (unsigned long long)(x->lost + x->corrupted), (unsigned long long)x->lost,
                    (unsigned long long)x->corrupted);
    }
}

/* The table's rows: the counts, the server's rows, the outcomes and why mail is
 * pending, the clients' logins, smtp.retry's, the rates and the delivery's p50/p99. */
static void table_rows(FILE *f, const struct run_result *r)
{
    const struct ledger_outcome *lo = &r->lo;
    char b[64];
    fprintf(f, "%-12s %12s\n", "", run_label(r->cfg));
    row_count(f, "sent", (double)r->c.sent);
    row_count(f, "read", (double)r->c.read);
    /* the server's rows, in the classic comparison's order */
    char name[32], value[32];
    for (int i = 0, rc; (rc = probe_table_row(&r->server.total, i, name, sizeof name, value, sizeof value)); i++)
        if (rc > 0)
            row(f, name, value);
    row_count(f, "errors", (double)r->c.errors);
    row_count(f, "delivered", (double)lo->delivered);
    row_count(f, "lost", (double)lo->lost);
    row_count(f, "duplicated", (double)lo->duplicated);
    row_count(f, "corrupted", (double)lo->corrupted);
    row_count(f, "pending", (double)lo->pending);
    for (unsigned k = 0; k < PR_COUNT; k++)    /* why they are not lost */
        if (lo->pending_by[k]) {
            char why[24];
            snprintf(why, sizeof why, "  %s", pending_reason_names[k]);
            row_count(f, why, (double)lo->pending_by[k]);
        }
    if (r->c.corrupt_unattributed)   /* retrievals that match no message of this mailbox */
        row_count(f, "unattributed", (double)r->c.corrupt_unattributed);
    if (lo->unconfirmed)
        row_count(f, "unconfirmed", (double)lo->unconfirmed);
    if (lo->late)                    /* of delivered: read only by the sweep */
        row_count(f, "late", (double)lo->late);
    if (r->c.foreign)
        row_count(f, "foreign", (double)r->c.foreign);
    struct poll_view pv;
    if (poll_view(r, &pv)) {         /* the clients' logins against the profile's rate */
        snprintf(b, sizeof b, "%.2f", pv.achieved);
        row(f, "logins/s", b);
        snprintf(b, sizeof b, "%.2f", pv.target);
        row(f, "  profile", b);
        if (r->c.polls_late)
            row_count(f, "  late polls", (double)r->c.polls_late);
    }
    if (r->c.fill_unlisted)          /* filled, met by the readers, left */
        row_count(f, "fill unlisted", (double)r->c.fill_unlisted);
    if (r->cfg->smtp_retry) {        /* as an MTA's queue: deferred, sent again, delivered or given up */
        row_count(f, "deferrals", (double)r->c.deferrals);
        row_count(f, "retried", (double)lo->retried);
        if (lo->retried) {
            char d[24];
            snprintf(b, sizeof b, "%u, %s", lo->retried_max_tries,
                     fmt_duration(d, sizeof d, (uint64_t)lo->retried_max_ms * 1000000));
            row(f, "  most tries", b);
        }
        row_count(f, "bounced", (double)r->c.bounced);
        if (r->c.retry_expired + r->c.retry_dropped)
            row_count(f, "given up", (double)(r->c.retry_expired + r->c.retry_dropped));
        if (r->retry_left)
            row_count(f, "still deferred", (double)r->retry_left);
    }
    snprintf(b, sizeof b, "%.1f", r->duration_s > 0 ? (double)r->c.sent / r->duration_s : 0);
    row(f, "msg/s in", b);
    snprintf(b, sizeof b, "%.1f", r->elapsed_s > 0 ? (double)r->c.read / r->elapsed_s : 0);
    row(f, "msg/s out", b);
    if (r->lat[LAT_DELIVERY].count) {
        row(f, "deliv p50", fmt_duration(b, sizeof b, hist_percentile(&r->lat[LAT_DELIVERY], 50)));
        row(f, "deliv p99", fmt_duration(b, sizeof b, hist_percentile(&r->lat[LAT_DELIVERY], 99)));
    }
}

/* Errors by class, and IMAP's push latency. */
static void table_errors_push(FILE *f, const struct run_result *r)
{
    char b[64];
    if (r->nerr) {
        fprintf(f, "\nerrors by class\n");
        for (unsigned i = 0; i < r->nerr; i++)
            fprintf(f, "  %-28s %8llu  %s\n", r->err[i].name, (unsigned long long)r->err[i].count,
                    r->ex[i].n ? r->ex[i].text[0] : "");
    }
    if (r->imap_users[IMAP_IDLE]) {
        /* push latency, split: the server's (to the EXISTS) and what a user sees */
        fprintf(f, "\npush to %zu idle IMAP clients    count      p50      p95      p99    p99.9\n",
                r->imap_users[IMAP_IDLE]);
        static const enum lat push[] = { LAT_PUSH_EXISTS, LAT_PUSH_FETCHED };
        static const char *const what[] = { "accepted to EXISTS", "accepted to fetched" };
        for (int k = 0; k < 2; k++) {
            const struct hist *h = &r->lat[push[k]];
            fprintf(f, "  %-28s %8llu", what[k], (unsigned long long)h->count);
            for (int q = 0; q < 4; q++) {
                static const double pct[] = { 50, 95, 99, 99.9 };
                fprintf(f, " %8s", h->count ? fmt_duration(b, sizeof b, hist_percentile(h, pct[q])) : "-");
            }
            fputc('\n', f);
        }
        fprintf(f, "  %llu fetched by a client busy when its EXISTS came, or before its sender saw the acceptance "
                   "(the tester's delay, not timed as a push); "
                   "%llu that no EXISTS announced (found when IDLE was renewed)\n",
                (unsigned long long)r->c.push_busy, (unsigned long long)r->c.push_missed);
    }
}

/* Several server hosts: each one's rows, side by side. */
static void table_by_source(FILE *f, const struct run_result *r)
{
    char name[32], value[32];
    size_t nsrc = r->server.n;
    if (nsrc > 1) {                  /* several server hosts: each one's rows, side by side */
        fprintf(f, "\nserver side by source\n%-12s", "");
        for (size_t k = 0; k < nsrc; k++)
            fprintf(f, " %12.12s", r->server.v[k].label);
        fputc('\n', f);
        const struct run_source *each = r->server.v;
        /* A row shows when some source has it (a part, a database). */
        for (int i = 0, more = 1; more; i++) {
            int shown = 0;
            more = 0;
            for (size_t k = 0; k < nsrc; k++) {
                int rc = probe_table_row(&each[k].summary, i, name, sizeof name, value, sizeof value);
                more |= rc != 0;
                shown |= rc > 0;
            }
            if (!shown)
                continue;
            char label[32] = "";
            for (size_t k = 0; k < nsrc && !*label; k++)
                if (probe_table_row(&each[k].summary, i, label, sizeof label, value, sizeof value) <= 0)
                    *label = 0;
            fprintf(f, "%-12s", label);
            for (size_t k = 0; k < nsrc; k++)
                fprintf(f, " %12s", probe_table_row(&each[k].summary, i, name, sizeof name, value, sizeof value) > 0 ? value : "-");
            fputc('\n', f);
        }
    }
}

static void table_latency(FILE *f, const struct run_result *r)
{
    fprintf(f, "\nlatency (ms)        count      p50      p90      p99    p99.9      max\n");
    for (unsigned k = 0; k < LAT_COUNT; k++) {
        const struct hist *h = &r->lat[k];
        if (!h->count)
            continue;
        /* a pipelined MAIL, RCPT and DATA are written at once and timed as one group */
        int group = r->c.smtp_pipelined && (k == LAT_SMTP_MAIL || k == LAT_SMTP_RCPT || k == LAT_SMTP_DATA);
        char lname[32];
        snprintf(lname, sizeof lname, "%s%s", lat_names[k], group ? "*" : "");
        fprintf(f, "  %-14s %9llu %8.2f %8.2f %8.2f %8.2f %8.2f\n", lname, (unsigned long long)h->count,
                ms(hist_percentile(h, 50)), ms(hist_percentile(h, 90)), ms(hist_percentile(h, 99)),
                ms(hist_percentile(h, 99.9)), ms(h->max));
    }
    if (r->c.smtp_pipelined)
        fprintf(f, "  * one pipelined group (MAIL, RCPT and DATA in one write): timed together, from that write\n");
    if (r->c.imap_rounds < r->c.imap_commands)
        fprintf(f, "  IMAP: %llu commands in %llu round trips (imap.pipelining; a pipelined command is timed from the "
                   "answer before it)\n", (unsigned long long)r->c.imap_commands, (unsigned long long)r->c.imap_rounds);
}

/* What the figures measured besides the server: the readers, the tester. */
static void table_notes(FILE *f, const struct run_result *r)
{
    char b[64];
    struct poll_view pv;
    uint64_t unread;
    long long queued;
    if (r->lat[LAT_DELIVERY].count && readers_bound(r, &unread, &queued))
        fprintf(f, "\n(deliv p50 and p99 %s the readers rather than the server: when the senders stopped, %llu "
                   "messages waited unread, more than the %llu readers take in a round of %llu each, %s; add "
                   "pop3.readers to measure the server's delivery)\n",
                queued < 0 ? "may measure" : "measure", (unsigned long long)unread,
                (unsigned long long)r->cfg->readers, (unsigned long long)r->cfg->max_per_session,
                queued < 0 ? "and the server's queue was not measured ([server] spool_dir), so where they waited "
                             "is not known"
                           : "while the server's queue held under a tenth of them");
    if (r->verdict.tester_limited) {
        const struct config *cfg = r->cfg;
        uint64_t due = r->c.arrivals + r->arrivals_owed;
        fprintf(f, "\ntester-limited: of %llu arrivals due at %.1f msg/s, the tester held back %llu: ",
                (unsigned long long)due, cfg->rate,
                (unsigned long long)(r->c.late_busy + r->c.late_engine + r->arrivals_held));
        fprintf(f, "%llu started over %s late with all %llu senders busy (raise smtp.senders), "
                   "%llu late on a late engine (more run.workers, or a quieter machine), %llu never started.\n"
                   "These figures understate what the server was offered; they are not the server's.\n",
                (unsigned long long)r->c.late_busy, fmt_duration(b, sizeof b, cfg->late_after),
                (unsigned long long)cfg->senders, (unsigned long long)r->c.late_engine,
                (unsigned long long)r->arrivals_held);
    }
    if (poll_view(r, &pv) && pv.tester_limited)
        fprintf(f, "\n(readers limited: %llu of %llu checks began over a second late, every reader busy; "
                   "the login rate is the tester's, not the profile's: add readers)\n",
                (unsigned long long)r->c.polls_late, (unsigned long long)r->c.polls);
}

void run_result_table(FILE *f, const struct run_result *r)
{
    if (r->fill.on)
        fill_table(f, &r->fill);
    table_rows(f, r);
    table_errors_push(f, r);
    if (r->c.empty_body_as_line)
        fprintf(f, "\nserver property: an empty body is served as one empty line (an mbox store keeps it so): "
                   "%llu message%s, %s\n", (unsigned long long)r->c.empty_body_as_line,
                r->c.empty_body_as_line == 1 ? "" : "s",
                r->cfg->strict_bodies ? "counted corrupted (run.strict_bodies = yes)"
                                      : "delivered intact (run.strict_bodies = yes counts them corrupted)");
    table_by_source(f, r);
    table_latency(f, r);
    table_notes(f, r);
    if (r->ladder.on)
        table_ladder(f, &r->ladder);
    if (r->interrupted)
        fprintf(f, "\n(interrupted: the run ended early on a signal; unread mail is pending)\n");
    struct verdict_view vv = run_verdict_view(r);
    verdict_table(f, &vv);
    /* after the answer, the messages behind it: the failures with their trails,
     * then the late ones (delivered; a line each) */
    for (int k = 0; k < EX_KINDS; k++)
        if (r->nexamples[k])
            table_examples(f, r, k);
}
