/* verdict: what a run proved (include/verdict/verdict.h). Every figure comes from
 * the input; the words say what it means, loudest first. */
#include "verdict/verdict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/units.h"

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

static void rates(const struct verdict_input *in, struct run_verdict *v)
{
    const struct verdict_window *w = &in->send;
    v->accepted_rate = per_s((double)w->accepted, w->seconds);
    v->read_rate = per_s((double)w->read, w->seconds);
    v->backlog_rate = per_s((double)w->accepted - (double)w->read, w->seconds);
    v->after_rate = per_s((double)(in->c->read - w->read), in->elapsed_s - w->seconds);
    v->delivered_rate = v->read_rate;
    v->kept_up = -1;
    if (w->has_spool && w->spool_t1 > w->spool_t0) {
        v->has_queue_rate = 1;
        v->queue_rate = ((double)w->spool_last - (double)w->spool_first) / (w->spool_t1 - w->spool_t0);
        v->delivered_rate = fmax(0, v->accepted_rate - v->queue_rate);
        if (in->senders && w->accepted)
            /* growth under 5 % of what came in (or 1 msg/s) is noise of the window's edges */
            v->kept_up = v->queue_rate <= fmax(1, 0.05 * v->accepted_rate);
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
                 "delivered %.0f (its queue grew %.0f msg/s), while the tester held back more, its senders busy "
                 "waiting for the server's replies; that is the server's limit: rerun with smtp.rate = %.0f",
                 v->accepted_rate, v->delivered_rate, v->queue_rate, fmax(1, floor(0.8 * v->delivered_rate)));
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
     * backlog after it, whichever is higher */
    double d = fmax(v->delivered_rate, v->after_rate);
    int behind = v->kept_up == 0;
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
        snprintf(r, n, "the server accepted %.0f msg/s but delivered %.0f: its queue grew %.0f msg/s, which a "
                 "longer run cannot hold; rerun with smtp.rate = %.0f", v->accepted_rate, v->delivered_rate,
                 v->queue_rate, v->suggested_rate);
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
