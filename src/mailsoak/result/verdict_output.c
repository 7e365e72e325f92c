/* verdict_output: the verdict and the gates as the table's last section and as the
 * JSON's "verdict" (include/result/verdict_output.h). Writers only: the examples of
 * the failed messages are output.c's (summary.*_examples, the table's lists). */
#include "result/verdict_output.h"

#include <stdio.h>
#include <string.h>

#include "lib/exitcodes.h"
#include "lib/units.h"

static const char *const group_names[] = { "integrity", "qos" };

static void pending_line(FILE *f, const struct verdict_view *r)
{
    const struct run_verdict *v = r->verdict;
    char pct[16];
    fprintf(f, "  %-10s %llu (%s %%)", "unproven", (unsigned long long)r->lo->pending,
            fmt_share(pct, sizeof pct, 100 * v->unproven_share));
    const char *sep = ": ";
    for (unsigned k = 0; k < PR_COUNT; k++)
        if (r->lo->pending_by[k]) {
            fprintf(f, "%s%s %llu (%s %%)", sep, pending_reason_names[k], (unsigned long long)r->lo->pending_by[k],
                    fmt_share(pct, sizeof pct, 100 * v->pending_share[k]));
            sep = ", ";
        }
    fputc('\n', f);
}

/* Kept up, by the backlog of the run's own ledger (verdict/keptup.h); the server's
 * queue's growth beside it when it was counted long enough for a rate. */
static void kept_up_line(FILE *f, const struct verdict_view *r)
{
    const struct run_verdict *v = r->verdict;
    const struct keptup_result *k = &v->kept;
    if (!v->accepted_rate)
        return;
    char q[160] = "";
    if (v->has_queue_rate)
        snprintf(q, sizeof q, "; the server's queue grew %.1f msg/s", v->queue_rate);
    /* the seconds not judged are said, so a reader knows the window's start was left out */
    if (k->filled_s > 0)
        snprintf(q + strlen(q), sizeof q - strlen(q), "; judged from %.0f s, once the backlog had filled", k->filled_s);
    switch (k->outcome) {
    case KEPTUP_YES:
    case KEPTUP_BEHIND:
        fprintf(f, "  %-10s %s: %s; accepted %.0f msg/s, read %.0f msg/s in the send window%s\n", "kept up",
                k->outcome == KEPTUP_YES ? "yes" : "NO", k->why, v->accepted_rate, v->read_rate, q);
        break;
    case KEPTUP_TESTER: {
        /* IMAP's poll clients come for their mail every imap.poll_interval */
        unsigned share[IMAP_MODELS] = { 0 };
        char err[160];
        int poll = r->cfg && r->cfg->reader_protocol == READERS_IMAP &&
                   imap_models_parse(r->cfg->imap_models, share, err, sizeof err) == 0 && share[IMAP_POLL];
        fprintf(f, "  %-10s %s, the tester's limit, not the server's: %s (more pop3.readers%s a larger "
                "pop3.max_per_session%s); accepted %.0f msg/s, read %.0f msg/s%s\n", "kept up",
                v->kept_up > 0 ? "yes" : "cannot tell", k->why, poll ? "," : ", or", poll ? ", or a shorter "
                "imap.poll_interval" : "", v->accepted_rate, v->read_rate, q);
        break;
    }
    case KEPTUP_UNKNOWN:
        fprintf(f, "  %-10s cannot tell: %s; accepted %.0f msg/s, read %.0f msg/s\n", "kept up", k->why,
                v->accepted_rate, v->read_rate);
        break;
    }
}

/* Each spike of smtp.profile: how long the backlog and the delivery latency took
 * to come back to their level before it, and the proof of the mail sent in it. */
static void recovery_lines(FILE *f, const struct verdict_view *r)
{
    for (unsigned i = 0; i < r->nspikes; i++) {
        const struct recovery_spike *s = &r->spikes[i];
        const struct recovery_proof *p = &s->proof;
        fprintf(f, "  %-10s stage %u (%.0f msg/s after %.0f, %.0f-%.0f s): ", "recovery", s->stage + 1, s->spike_rate,
                s->base_rate, s->start_s, s->end_s);
        if (s->recovered < 0)
            fprintf(f, "cannot tell: no sample of the stage before it (a shorter run.interval)");
        else if (!s->recovered)
            fprintf(f, "NOT back within the send window, seen for %.0f s (backlog %s, delivery p50 %s)", s->recovery_s,
                    s->backlog_s < 0 ? "not back" : "back", s->latency_s < 0 ? "not back" : "back");
        else
            fprintf(f, "back in %.0f s (backlog in %.0f s, delivery p50 in %.0f s)", s->recovery_s, s->backlog_s,
                    s->latency_s);
        if (s->recovered > 0 && s->late)
            fprintf(f, "; not back at %.0f s, with no interval end taken between (the tester's controller ran late)",
                    s->from_s);
        fprintf(f, "; backlog %.0f at most, %.0f before; delivery p50 %.0f ms at most, %.0f before", s->peak_backlog,
                s->base_backlog, s->peak_latency_ms, s->base_latency_ms);
        if (s->base_steady == 0)
            fprintf(f, "; the stage before was not steady, its backlog grew %.1f msg/s: a level already behind",
                    s->base_growth);
        fputc('\n', f);
        fprintf(f, "  %-10s of the %llu accepted during it: %llu delivered exactly once, lost %llu, duplicated %llu, "
                "corrupted %llu, pending %llu\n", "", (unsigned long long)p->accepted, (unsigned long long)p->delivered,
                (unsigned long long)p->lost, (unsigned long long)p->duplicated, (unsigned long long)p->corrupted,
                (unsigned long long)p->pending);
    }
}

static json_t *recovery_json(const struct verdict_view *r)
{
    json_t *a = json_array();
    for (unsigned i = 0; i < r->nspikes; i++) {
        const struct recovery_spike *s = &r->spikes[i];
        const struct recovery_proof *p = &s->proof;
        json_t *o = json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "stage", (int)s->stage + 1, "base_rate",
                              s->base_rate, "spike_rate", s->spike_rate, "start_s", s->start_s, "end_s", s->end_s,
                              "base_backlog", s->base_backlog, "base_latency_ms", s->base_latency_ms, "peak_backlog",
                              s->peak_backlog, "peak_latency_ms", s->peak_latency_ms);
        json_object_set_new(o, "recovered", s->recovered < 0 ? json_null() : json_boolean(s->recovered));
        json_object_set_new(o, "recovery_s", s->recovered < 0 ? json_null() : json_real(s->recovery_s));
        json_object_set_new(o, "backlog_s", s->backlog_s < 0 ? json_null() : json_real(s->backlog_s));
        json_object_set_new(o, "latency_s", s->latency_s < 0 ? json_null() : json_real(s->latency_s));
        json_object_set_new(o, "from_s", s->recovered > 0 && s->from_s >= 0 ? json_real(s->from_s) : json_null());
        json_object_set_new(o, "late", json_boolean(s->recovered > 0 && s->late));
        json_object_set_new(o, "base_steady", s->base_steady < 0 ? json_null() : json_boolean(s->base_steady));
        json_object_set_new(o, "base_growth", s->base_steady < 0 ? json_null() : json_real(s->base_growth));
        json_object_set_new(o, "sent_during", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "accepted",
                                                        (json_int_t)p->accepted, "delivered", (json_int_t)p->delivered,
                                                        "lost", (json_int_t)p->lost, "duplicated",
                                                        (json_int_t)p->duplicated, "corrupted", (json_int_t)p->corrupted,
                                                        "pending", (json_int_t)p->pending));
        json_array_append_new(a, o);
    }
    return a;
}

/* smtp.profile: each stage's span (as it ran: smtp.profile_end = decided ends some
 * early, and a stage that never ran has none) and the ledger's outcomes of the mail
 * it accepted. */
static json_t *stages_json(const struct verdict_view *r)
{
    json_t *a = json_array();
    double t = 0;
    for (unsigned i = 0; i < r->nstages; i++) {
        const struct recovery_proof *p = &r->stage_proof[i];
        double t1 = t + (double)r->cfg->profile.dur_ns[i] / 1e9;
        if (r->stage_span) {
            t = r->stage_span[i][0];
            t1 = r->stage_span[i][1];
        }
        json_array_append_new(a, json_pack("{s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I}", "t0", t, "t1", t1, "rate",
                                           r->cfg->profile.rate[i], "accepted", (json_int_t)p->accepted, "delivered",
                                           (json_int_t)p->delivered, "lost", (json_int_t)p->lost, "duplicated",
                                           (json_int_t)p->duplicated, "corrupted", (json_int_t)p->corrupted, "pending",
                                           (json_int_t)p->pending));
        t = t1;
    }
    return a;
}

void verdict_table(FILE *f, const struct verdict_view *r)
{
    const struct run_verdict *v = r->verdict;
    const struct gate_judgement *j = r->judged;
    char b[200];
    fprintf(f, "\nverdict  %s\n", v->headline);
    if (r->lo->accepted)
        fprintf(f, "  %-10s %llu of %llu accepted delivered exactly once (%s %%)\n", "proven",
                (unsigned long long)v->proven, (unsigned long long)v->accepted,
                fmt_share(b, sizeof b, 100 * v->proven_share));
    fprintf(f, "  %-10s lost %llu, duplicated %llu, corrupted %llu\n", "failed", (unsigned long long)r->lo->lost,
            (unsigned long long)r->lo->duplicated, (unsigned long long)r->lo->corrupted);
    if (r->lo->pending)
        pending_line(f, r);
    if (v->session_errors[0])
        fprintf(f, "  %-10s %s\n", "sessions", v->session_errors);
    kept_up_line(f, r);
    recovery_lines(f, r);
    if (v->remedy[0])
        fprintf(f, "  %-10s %s\n", "remedy", v->remedy);
    /* the status the run returns (r->exit_status), not the gates' alone: a signal or
     * a size ladder's failure decides it too */
    int status = r->exit_status;
    fprintf(f, "  %-10s %s", "gates", j->failed ? "FAILED" : "passed");
    if (status == MS_EXIT_GATE_INTEGRITY || status == MS_EXIT_GATE_QOS)
        fprintf(f, " (exit %d: %s)", status, status == MS_EXIT_GATE_INTEGRITY ? "integrity" : "quality of service");
    else if (status > MS_EXIT_SIGNAL)
        fprintf(f, " (exit %d: interrupted by signal %d)", status, status - MS_EXIT_SIGNAL);
    fprintf(f, ", %u of %u passed\n", j->n - j->failed, j->n);
    for (unsigned i = 0; i < j->n; i++)
        if (!j->v[i].pass || j->v[i].reason)
            fprintf(f, "    %s %s\n", j->v[i].pass ? "ok  " : "FAIL", gate_describe(&j->v[i], b, sizeof b));
}

static json_t *num_or_null(int has, double v) { return has ? json_real(v) : json_null(); }

json_t *verdict_json(const struct verdict_view *r)
{
    const struct run_verdict *v = r->verdict;
    const struct gate_judgement *j = r->judged;
    json_t *o = json_object();
    json_object_set_new(o, "state", json_string(verdict_state_names[v->state]));
    json_object_set_new(o, "headline", json_string(v->headline));
    json_object_set_new(o, "accepted", json_integer((json_int_t)v->accepted));
    json_object_set_new(o, "proven", json_integer((json_int_t)v->proven));
    json_object_set_new(o, "proven_share", json_real(v->proven_share));
    json_object_set_new(o, "unproven_share", json_real(v->unproven_share));
    json_t *ps = json_object();
    for (unsigned k = 0; k < PR_COUNT; k++)
        json_object_set_new(ps, pending_reason_names[k], json_real(v->pending_share[k]));
    json_object_set_new(o, "pending_share", ps);
    json_object_set_new(o, "kept_up", v->kept_up < 0 ? json_null() : json_boolean(v->kept_up));
    const struct keptup_result *k = &v->kept;
    json_object_set_new(o, "recovery", recovery_json(r));
    json_object_set_new(o, "stages", stages_json(r));
    json_object_set_new(o, "kept", json_pack("{s:s, s:s, s:f, s:f, s:b, s:s}", "outcome",
                                             keptup_outcome_names[k->outcome], "statistic", k->stat ? k->stat : KEPTUP_STAT,
                                             "value", k->value, "bound", k->bound, "swing", k->swing, "why", k->why));
    json_object_set_new(o, "accepted_rate", json_real(v->accepted_rate));
    json_object_set_new(o, "read_rate", json_real(v->read_rate));
    json_object_set_new(o, "delivered_rate", json_real(v->delivered_rate));
    json_object_set_new(o, "after_rate", json_real(v->after_rate));
    json_object_set_new(o, "backlog_rate", json_real(v->backlog_rate));
    json_object_set_new(o, "queue_rate", num_or_null(v->has_queue_rate, v->queue_rate));
    json_object_set_new(o, "remedy", v->remedy[0] ? json_string(v->remedy) : json_null());
    json_object_set_new(o, "session_errors", v->session_errors[0] ? json_string(v->session_errors) : json_null());
    json_object_set_new(o, "session_error_share", json_real(v->session_error_share));
    json_object_set_new(o, "suggested_rate", num_or_null(v->suggested_rate > 0, v->suggested_rate));
    json_object_set_new(o, "more_sweep_s", num_or_null(v->more_sweep_s > 0, v->more_sweep_s));
    json_t *g = json_object(), *res = json_array(), *failed = json_array();
    char b[200];
    for (unsigned i = 0; i < j->n; i++) {
        const struct gate_result *x = &j->v[i];
        json_t *e = json_pack("{s:s, s:s, s:b, s:f, s:f, s:s, s:s, s:s}", "name", x->name, "group",
                              group_names[x->group], "pass", x->pass, "value", x->value, "bound", x->bound, "op", x->op,
                              "unit", x->unit, "text", gate_describe(x, b, sizeof b));
        if (x->reason)
            json_object_set_new(e, "reason", json_string(x->reason));
        json_array_append_new(res, e);
        if (!x->pass)
            json_array_append_new(failed, json_string(x->name));
    }
    json_object_set_new(g, "passed", json_boolean(!j->failed));
    json_object_set_new(g, "exit_status", json_integer(j->exit_status));
    json_object_set_new(g, "failed", failed);
    json_object_set_new(g, "results", res);
    json_object_set_new(o, "gates", g);
    return o;
}
