/* verdict: what a run proved (include/verdict/verdict.h). Every figure comes from
 * the input; the words say what it means, loudest first. */
#include "verdict/verdict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/units.h"
#include "verdict/drift.h"

const char *const verdict_state_names[] = { "proven", "failed", "unproven", "no proof" };

static double share(uint64_t n, uint64_t of) { return of ? (double)n / (double)of : 0; }
static double per_s(double n, double s) { return s > 0 ? n / s : 0; }

/* The most frequent error class whose name starts with proto ("" for any). */
static const struct err_count *top_error(const struct verdict_input *in, const char *proto)
{
    const struct err_count *top = NULL;
    for (unsigned i = 0; i < in->nerr; i++)
        if (!strncmp(in->err[i].name, proto, strlen(proto)) && (!top || in->err[i].count > top->count))
            top = &in->err[i];
    return top;
}

void verdict_window_sample(struct verdict_window *w, const struct verdict_sample *s, double warm_s, double gap_s)
{
    if (s->t + gap_s < warm_s)
        return;
    if (w->nkept > 1 && s->t - w->kept[w->nkept - 1].t < gap_s) {
        w->kept[w->nkept - 1] = *s;
        return;
    }
    w->kept = grow(w->kept, &w->capkept, w->nkept, 1, sizeof *w->kept);
    w->kept[w->nkept++] = *s;
}

void verdict_window_free(struct verdict_window *w)
{
    free(w->kept);
    w->kept = NULL;
    w->nkept = w->capkept = 0;
}

/* The least-squares slope of the server's counts among the samples: a count needs
 * two samples spanning half the samples' span and two of its readings, or it tells
 * nothing. */
static int server_slope(const struct verdict_window *w, unsigned first, int store, double *slope)
{
    unsigned n = 0;
    double *t = xcalloc(w->nkept + 1, sizeof *t), *y = xcalloc(w->nkept + 1, sizeof *y);
    for (unsigned i = first; i < w->nkept; i++) {
        const struct verdict_sample *s = &w->kept[i];
        if (store ? s->has_store : s->has_spool) {
            t[n] = s->t;
            y[n++] = store ? s->store : s->spool;
        }
    }
    double span = w->nkept > first ? w->kept[w->nkept - 1].t - w->kept[first].t : 0;
    int ok = n >= 2 && span > 0 && t[n - 1] - t[0] >= span / 2 && t[n - 1] - t[0] >= 2 * (store ? w->walk_s : w->queue_s);
    *slope = ok ? keptup_slope(t, y, n) : 0;
    free(t);
    free(y);
    return ok;
}

/* Wald's sequential test on the net flow (verdict/drift.h), the statistic the
 * replay of recorded runs chose: it decides once 8 batches of 2 intervals are in,
 * and a window too short for it is left to the slope. */
static void sequential(const struct verdict_sample *ks, unsigned n, double growth_share, struct keptup_input *in)
{
    struct drift_point *p = xcalloc(n + 1, sizeof *p);
    for (unsigned i = 0; i < n; i++) {
        p[i].t = ks[i].t;
        p[i].unread = ks[i].unread;
        if (i) {
            p[i].accepted = (double)(ks[i].sent - ks[i - 1].sent);
            p[i].read = p[i].accepted - (ks[i].unread - ks[i - 1].unread);
        }
    }
    struct drift_rules r;
    drift_rules_default(&r);
    r.share = growth_share;
    r.cap_s = ks[n - 1].t - ks[0].t;
    struct drift_result d;
    drift_sprt(&r, p, n, DRIFT_VAR_BATCH, &d);
    free(p);
    if (d.d == DRIFT_KEPT_UP || d.d == DRIFT_BEHIND) {
        in->decided = d.d == DRIFT_KEPT_UP ? 1 : -1;
        in->decided_by = KEPTUP_SPRT;
        in->decided_value = d.value;
        in->decided_bound = d.bound;
    }
}

static void keptup_over(const struct verdict_window *w, double growth_share, int server_slows_readers, int seq,
                        struct keptup_result *out)
{
    struct keptup_rules r = { .growth_share = growth_share };
    struct keptup_input in = { .server_slows_readers = server_slows_readers };
    unsigned first = 0;
    while (first < w->nkept && w->kept[first].t < w->from_s - 1e-9)
        first++;
    unsigned n = (unsigned)w->nkept - first;
    double *t = xcalloc(n + 1, sizeof *t), *u = xcalloc(n + 1, sizeof *u);
    for (unsigned i = 0; i < n; i++) {
        t[i] = w->kept[first + i].t;
        u[i] = w->kept[first + i].unread;
    }
    /* judged once the backlog has filled, by the sequential test's batches: a
     * fresh server's queue and mailboxes fill to their steady level first, which
     * the test took for growth (docs/results/capacity.md) */
    struct drift_rules dr;
    drift_rules_default(&dr);
    unsigned fill = drift_fill_end(&dr, t, u, n);
    first += fill;
    n -= fill;
    const struct verdict_sample *ks = w->kept + first;
    keptup_backlog(t + fill, u + fill, n, &in.b);
    free(t);
    free(u);
    if (n >= 2) {
        const struct verdict_sample *a = &ks[0], *b = &ks[n - 1];
        in.accepted_rate = per_s((double)(b->sent - a->sent), b->t - a->t);
        in.visits = b->visits - a->visits;
        in.left_behind = b->left_behind - a->left_behind;
        in.empty_visits = b->empty_visits - a->empty_visits;
        in.full_visits = b->full_visits - a->full_visits;
        in.readers_busy = (b->polls_late - a->polls_late) * 100 > b->polls - a->polls;
        in.has_spool = server_slope(w, first, 0, &in.spool_slope);
        in.has_store = server_slope(w, first, 1, &in.store_slope);
        if (seq)
            sequential(ks, n, growth_share, &in);
    }
    keptup_judge(&r, &in, out);
    out->filled_s = fill && n ? ks[0].t : 0;
}

void verdict_keptup(const struct verdict_window *w, double growth_share, int server_slows_readers,
                    struct keptup_result *out)
{
    keptup_over(w, growth_share, server_slows_readers, 1, out);
}

void verdict_keptup_slope(const struct verdict_window *w, double growth_share, struct keptup_result *out)
{
    keptup_over(w, growth_share, 0, 0, out);
}

static void rates(const struct verdict_input *in, struct run_verdict *v)
{
    const struct verdict_window *w = &in->send;
    v->accepted_rate = per_s((double)w->accepted, w->seconds);
    v->read_rate = per_s((double)w->read, w->seconds);
    v->backlog_rate = per_s((double)w->accepted - (double)w->read, w->seconds);
    v->after_rate = per_s((double)(in->c->read - w->read), in->elapsed_s - w->seconds);
    v->delivered_rate = v->read_rate;
    v->kept_up = -1;
    /* a rate of the queue needs two counts spanning half the window and two
     * readings: two close together make any figure at all, and one read twice 0 */
    double span = w->spool_t1 - w->spool_t0;
    if (w->has_spool && span > 0 && span >= w->seconds / 2 && span >= 2 * w->queue_s) {
        v->has_queue_rate = 1;
        v->queue_rate = ((double)w->spool_last - (double)w->spool_first) / (w->spool_t1 - w->spool_t0);
        v->delivered_rate = fmax(0, v->accepted_rate - v->queue_rate);
    }
    if (in->kept)
        v->kept = *in->kept;
    if (!in->senders || !w->accepted)
        return;
    switch (v->kept.outcome) {
    case KEPTUP_YES:
        v->kept_up = 1;
        break;
    case KEPTUP_BEHIND:
        v->kept_up = 0;
        break;
    case KEPTUP_TESTER:
        /* our readers fell behind: the server kept up where its side shows it */
        v->kept_up = v->kept.server_seen ? 1 : -1;
        break;
    case KEPTUP_UNKNOWN:
        break;
    }
}

static void headline(const struct verdict_input *in, struct run_verdict *v)
{
    const struct ledger_outcome *lo = in->lo;
    const struct counters *c = in->c;
    char *h = v->headline;
    char pct[16];
    size_t n = sizeof v->headline;
    const struct err_count *top;
    switch (v->state) {
    case VERDICT_FAILED:
        if (lo->lost || lo->duplicated || lo->corrupted)
            snprintf(h, n, "FAILED: %llu lost, %llu duplicated, %llu corrupted of %llu accepted",
                     (unsigned long long)lo->lost, (unsigned long long)lo->duplicated,
                     (unsigned long long)lo->corrupted, (unsigned long long)lo->accepted);
        else if (in->senders && !c->sent) {
            top = top_error(in, "smtp");
            snprintf(h, n, "FAILED: nothing was sent (%llu errors%s%s)", (unsigned long long)c->errors,
                     top ? ", most " : "", top ? top->name : "");
        } else {
            top = top_error(in, "pop3");
            snprintf(h, n, "FAILED: none of the %llu accepted messages was read (%llu errors%s%s)",
                     (unsigned long long)lo->accepted, (unsigned long long)c->errors, top ? ", most " : "",
                     top ? top->name : "");
        }
        break;
    case VERDICT_PROVEN:
        snprintf(h, n, "PROVEN: all %llu accepted messages delivered exactly once", (unsigned long long)lo->accepted);
        break;
    case VERDICT_UNPROVEN:
        snprintf(h, n, "UNPROVEN: %llu of %llu accepted messages (%s %%) are neither proven delivered nor proven "
                 "lost: \"lost 0\" says nothing about them", (unsigned long long)lo->pending,
                 (unsigned long long)lo->accepted, fmt_share(pct, sizeof pct, 100 * v->unproven_share));
        break;
    case VERDICT_NO_PROOF:
        snprintf(h, n, "NO PROOF: no readers, so none of the %llu accepted messages could be proven delivered",
                 (unsigned long long)lo->accepted);
        break;
    }
}

/* Errors against session attempts, per protocol: a run whose server turned most away
 * can still prove every message it accepted, and must not read as healthy. */
static void session_errors(const struct verdict_input *in, struct run_verdict *v)
{
    static const struct { const char *proto, *name; } p[] = { { "smtp", "SMTP" }, { "pop3", "POP3" } };
    for (unsigned k = 0; k < 2; k++) {
        uint64_t errs = 0;
        for (unsigned i = 0; i < in->nerr; i++)
            if (!strncmp(in->err[i].name, p[k].proto, 4))
                errs += in->err[i].count;
        uint64_t sessions = k == 0 ? in->c->smtp_sessions : in->c->pop3_sessions;
        double sh = share(errs, sessions + errs);
        if (sh <= VERDICT_SESSION_ERRORS || sh <= v->session_error_share)
            continue;
        const struct err_count *top = top_error(in, p[k].proto);
        v->session_error_share = sh;
        snprintf(v->session_errors, sizeof v->session_errors,
                 "%llu %s errors in %llu session attempts (%.0f %%; most %s, %llu): the load the server carried "
                 "is not the load asked for", (unsigned long long)errs, p[k].name, (unsigned long long)(sessions + errs),
                 100 * sh, top ? top->name : "?", (unsigned long long)(top ? top->count : 0));
    }
}

/* What grew when the server fell behind: its queue where it was counted, else the
 * backlog of mail accepted and not read that the judgement read. */
static const char *grew_what(const struct run_verdict *v) { return v->has_queue_rate ? "queue" : "backlog"; }
static double grew_rate(const struct run_verdict *v) { return v->has_queue_rate ? v->queue_rate : v->kept.value; }

static void remedy(const struct verdict_input *in, struct run_verdict *v)
{
    const struct ledger_outcome *lo = in->lo;
    const struct counters *c = in->c;
    char *r = v->remedy;
    size_t n = sizeof v->remedy;
    const struct err_count *top;
    if (in->senders && !c->sent) {
        top = top_error(in, "smtp");
        snprintf(r, n, "no message was accepted: check smtp.target%s%s%s", top ? " (" : "", top ? top->name : "",
                 top ? ": see errors by class)" : " (no session got an answer)");
        return;
    }
    if (in->readers && c->sent && !c->read && lo->pending_by[PR_QUEUED]) {
        snprintf(r, n, "no message was read: the server's queue still holds %llu of them, it delivered none "
                 "(look at its logs: server.log)", (unsigned long long)lo->pending_by[PR_QUEUED]);
        return;
    }
    if (in->readers && c->sent && !c->read) {
        top = top_error(in, "pop3");
        snprintf(r, n, "no message was read: check pop3.target and the users' passwords%s%s%s", top ? " (" : "",
                 top ? top->name : "", top ? ": see errors by class)" : "");
        return;
    }
    if (in->tester_limited && v->kept_up == 0) {
        /* held back, the load was lighter than asked: a queue growing under it is the
         * server's failure all the same, and senders busy waiting for it add nothing */
        snprintf(r, n, "the server fell behind even the part of the load it got: it accepted %.0f msg/s and "
                 "delivered %.0f (its %s grew %.1f msg/s), while the tester held back more, its senders busy "
                 "waiting for the server's replies; that is the server's limit: rerun with smtp.rate = %.0f",
                 v->accepted_rate, v->delivered_rate, grew_what(v), grew_rate(v),
                 fmax(1, floor(0.8 * v->delivered_rate)));
        return;
    }
    if (in->tester_limited) {
        snprintf(r, n, "the tester held back part of the offered load (its senders or its engine were busy): "
                 "this run measured mailsoak, not the server; add smtp.senders or workers, or lower smtp.rate");
        return;
    }
    if (in->interrupted && lo->pending) {
        snprintf(r, n, "the run was interrupted: what was not read is pending; let it run to its end");
        return;
    }
    /* the rate the server showed it can deliver at: in the window, or emptying its
     * backlog after it, whichever is higher; but a server that fell behind delivers
     * faster once nobody sends, and only its rate while accepting is one to send at */
    int behind = v->kept_up == 0;
    double d = behind && v->delivered_rate > 0 ? v->delivered_rate : fmax(v->delivered_rate, v->after_rate);
    int unsettled = lo->pending && (in->settled == 0 || lo->pending_by[PR_UNSETTLED] || lo->pending_by[PR_QUEUED] ||
                                    lo->pending_by[PR_UNSWEPT]);
    if (unsettled || behind) {
        if (d > 0 && (behind || in->rate == 0 || in->rate > d))
            v->suggested_rate = fmax(1, floor(0.8 * d));
        if (lo->pending && d > 0)
            v->more_sweep_s = ceil((double)lo->pending / d + in->settle_s);
    }
    if (unsettled && d <= 0) {
        snprintf(r, n, "the server delivered none of the mail it accepted after the window: its queue does not move "
                 "(look at its logs: server.log)");
    } else if (unsettled && !in->swept) {
        snprintf(r, n, "no sweep ran (run.sweep = no, or the drain ended first): turn it on, or give run.drain "
                 "%.0f s more", v->more_sweep_s);
    } else if (unsettled && v->suggested_rate > 0) {
        /* the accepted rate only when the timeline had a send window to measure it in
         * (a send shorter than run.interval has none): never a rate not measured */
        char acc[48] = "";
        if (v->accepted_rate > 0)
            snprintf(acc, sizeof acc, " (it accepted %.0f)", v->accepted_rate);
        snprintf(r, n, "the server delivered %.0f msg/s%s: rerun with smtp.rate = %.0f, or give the sweep %.0f s "
                 "more (run.sweep_timeout = %.0fs)", d, acc, v->suggested_rate, v->more_sweep_s,
                 in->sweep_timeout_s + v->more_sweep_s);
    } else if (unsettled) {
        snprintf(r, n, "give the sweep %.0f s more (run.sweep_timeout = %.0fs): the server delivers %.0f msg/s",
                 v->more_sweep_s, in->sweep_timeout_s + v->more_sweep_s, d);
    } else if (behind && v->suggested_rate > 0) {
        snprintf(r, n, "the server accepted %.0f msg/s but delivered %.0f: its %s grew %.1f msg/s, which a "
                 "longer run cannot hold; rerun with smtp.rate = %.0f", v->accepted_rate, v->delivered_rate,
                 grew_what(v), grew_rate(v), v->suggested_rate);
    } else if (lo->pending_by[PR_PEEKED]) {
        snprintf(r, n, "%llu retrieved but never deleted (pop3.delete_share < 1, or sessions cut short): the sweep "
                 "deletes what it reads, give it time", (unsigned long long)lo->pending_by[PR_PEEKED]);
    } else if (lo->lost || lo->duplicated || lo->corrupted) {
        /* said by run, which printed the examples above it, and by merge, which did not */
        snprintf(r, n, "look the messages up in the server's logs by their ids (examples in the result and in "
                 "`mailsoak report`; run.ledger_csv lists every one)");
    } else if (v->session_errors[0]) {
        snprintf(r, n, "see errors by class: raise the server's session limits or lower smtp.senders and "
                 "pop3.readers to the load it takes; gate.errors (e.g. 0.01) makes such a run fail");
    }
}

void verdict_make(const struct verdict_input *in, struct run_verdict *v)
{
    const struct ledger_outcome *lo = in->lo;
    const struct counters *c = in->c;
    *v = (struct run_verdict){ 0 };
    v->accepted = lo->accepted;
    v->tester_limited = in->tester_limited;
    v->proven = lo->delivered;
    v->proven_share = share(lo->delivered, lo->accepted);
    v->unproven_share = share(lo->pending, lo->accepted);
    for (unsigned k = 0; k < PR_COUNT; k++)
        v->pending_share[k] = share(lo->pending_by[k], lo->accepted);
    rates(in, v);
    if (lo->lost || lo->duplicated || lo->corrupted || (in->senders && !c->sent) ||
        (in->readers && c->sent && !c->read))
        v->state = VERDICT_FAILED;
    else if (!in->readers)
        v->state = VERDICT_NO_PROOF;
    else if (lo->delivered == lo->accepted)
        v->state = VERDICT_PROVEN;
    else
        v->state = VERDICT_UNPROVEN;
    headline(in, v);
    session_errors(in, v);
    remedy(in, v);
}

