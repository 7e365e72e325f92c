/* verdict_output: the verdict and the gates as the table's last section and as the
 * JSON's "verdict" (include/run/verdict_output.h). Writers only: the examples of
 * the failed messages are output.c's (summary.*_examples, the table's lists). */
#include "run/verdict_output.h"

#include <stdio.h>
#include <string.h>

#include "lib/exitcodes.h"
#include "lib/units.h"

static const char *const group_names[] = { "integrity", "qos" };

static void pending_line(FILE *f, const struct run_result *r)
{
    const struct run_verdict *v = &r->verdict;
    char pct[16];
    fprintf(f, "  %-10s %llu (%s %%)", "unproven", (unsigned long long)r->lo.pending,
            fmt_share(pct, sizeof pct, 100 * v->unproven_share));
    const char *sep = ": ";
    for (unsigned k = 0; k < PR_COUNT; k++)
        if (r->lo.pending_by[k]) {
            fprintf(f, "%s%s %llu (%s %%)", sep, pending_reason_names[k], (unsigned long long)r->lo.pending_by[k],
                    fmt_share(pct, sizeof pct, 100 * v->pending_share[k]));
            sep = ", ";
        }
    fputc('\n', f);
}

/* Kept up, by the backlog of the run's own ledger (verdict/keptup.h); the server's
 * queue's growth beside it when it was counted long enough for a rate. */
static void kept_up_line(FILE *f, const struct run_result *r)
{
    const struct run_verdict *v = &r->verdict;
    const struct keptup_result *k = &v->kept;
    if (!v->accepted_rate)
        return;
    char q[80] = "";
    if (v->has_queue_rate)
        snprintf(q, sizeof q, "; the server's queue grew %.1f msg/s", v->queue_rate);
    switch (k->outcome) {
    case KEPTUP_YES:
    case KEPTUP_BEHIND:
        fprintf(f, "  %-10s %s: %s; accepted %.0f msg/s, read %.0f msg/s in the send window%s\n", "kept up",
                k->outcome == KEPTUP_YES ? "yes" : "NO", k->why, v->accepted_rate, v->read_rate, q);
        break;
    case KEPTUP_TESTER:
        fprintf(f, "  %-10s %s, the tester's limit, not the server's: %s (more pop3.readers, or a larger "
                "pop3.max_per_session); accepted %.0f msg/s, read %.0f msg/s%s\n", "kept up",
                v->kept_up > 0 ? "yes" : "cannot tell", k->why, v->accepted_rate, v->read_rate, q);
        break;
    case KEPTUP_UNKNOWN:
        fprintf(f, "  %-10s cannot tell: %s; accepted %.0f msg/s, read %.0f msg/s\n", "kept up", k->why,
                v->accepted_rate, v->read_rate);
        break;
    }
}

void verdict_table(FILE *f, const struct run_result *r)
{
    const struct run_verdict *v = &r->verdict;
    const struct gate_judgement *j = &r->judged;
    char b[200];
    fprintf(f, "\nverdict  %s\n", v->headline);
    if (r->lo.accepted)
        fprintf(f, "  %-10s %llu of %llu accepted delivered exactly once (%s %%)\n", "proven",
                (unsigned long long)v->proven, (unsigned long long)v->accepted,
                fmt_share(b, sizeof b, 100 * v->proven_share));
    fprintf(f, "  %-10s lost %llu, duplicated %llu, corrupted %llu\n", "failed", (unsigned long long)r->lo.lost,
            (unsigned long long)r->lo.duplicated, (unsigned long long)r->lo.corrupted);
    if (r->lo.pending)
        pending_line(f, r);
    if (v->session_errors[0])
        fprintf(f, "  %-10s %s\n", "sessions", v->session_errors);
    kept_up_line(f, r);
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

json_t *verdict_json(const struct run_result *r)
{
    const struct run_verdict *v = &r->verdict;
    const struct gate_judgement *j = &r->judged;
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
    json_object_set_new(g, "exit_status", json_integer(gate_exit_status(j)));
    json_object_set_new(g, "failed", failed);
    json_object_set_new(g, "results", res);
    json_object_set_new(o, "gates", g);
    return o;
}
