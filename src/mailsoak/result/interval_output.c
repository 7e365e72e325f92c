/* interval_output: the timeline's entry and the live line of one interval
 * (include/result/interval_output.h). Formats what run.c measured. */
#include "result/interval_output.h"

#include <string.h>

#include "result/latency.h"
#include "lib/units.h"
#include "result/probe_output.h"

static double per_s(uint64_t n, double dt) { return dt > 0 ? (double)n / dt : 0; }

json_t *interval_json(const struct interval_view *v)
{
    json_t *e = json_object();
    json_object_set_new(e, "t", json_real(v->t));
    json_object_set_new(e, "phase", json_string(v->phase));
    json_object_set_new(e, "sent", json_integer((json_int_t)v->dsent));
    json_object_set_new(e, "read", json_integer((json_int_t)v->dread));
    json_object_set_new(e, "errors", json_integer((json_int_t)v->derr));
    json_t *ebc = json_object();
    for (unsigned i = 0; i < v->nerr; i++)
        json_object_set_new(ebc, v->err[i].name, json_integer((json_int_t)v->err[i].count));
    json_object_set_new(e, "errors_by_class", ebc);
    json_object_set_new(e, "rate_in", json_real(per_s(v->dsent, v->dt)));
    json_object_set_new(e, "rate_out", json_real(per_s(v->dread, v->dt)));
    json_object_set_new(e, "conns", json_integer((json_int_t)v->c->conns_open));
    /* accepted and not yet read: the server's queue and the mailboxes' backlog */
    json_object_set_new(e, "unread", json_integer((json_int_t)v->unread));
    if (v->stage >= 0)
        json_object_set_new(e, "stage", json_integer(v->stage));
    const struct counters *c = v->c, *p = v->prev;
    json_object_set_new(e, "smtp_sessions", json_integer((json_int_t)(c->smtp_sessions - p->smtp_sessions)));
    json_object_set_new(e, "pop3_sessions", json_integer((json_int_t)(c->pop3_sessions - p->pop3_sessions)));
    json_object_set_new(e, "arrivals", json_integer((json_int_t)(c->arrivals - p->arrivals)));
    json_object_set_new(e, "late_busy", json_integer((json_int_t)(c->late_busy - p->late_busy)));
    json_object_set_new(e, "late_engine", json_integer((json_int_t)(c->late_engine - p->late_engine)));
    json_object_set_new(e, "left_behind", json_integer((json_int_t)(c->left_behind - p->left_behind)));
    json_object_set_new(e, "empty_visits", json_integer((json_int_t)(c->empty_visits - p->empty_visits)));
    json_object_set_new(e, "full_visits", json_integer((json_int_t)(c->full_visits - p->full_visits)));
    json_object_set_new(e, "idle_syncs", json_integer((json_int_t)(c->idle_syncs - p->idle_syncs)));
    json_t *lj = json_object();
    for (unsigned k = 0; k < LAT_COUNT; k++)
        if (v->lat[k].count)
            json_object_set_new(lj, lat_names[k], latency_json(&v->lat[k]));
    json_object_set_new(e, "latency", lj);
    probe_json_interval(v->srv, e);
    return e;
}

void interval_line(FILE *f, const struct interval_view *v, const struct series_now *cn)
{
    char a[16], b[16], m[16], q[16], srv[96] = "";
    if (cn->has.procs)
        snprintf(srv, sizeof srv, "  | mem %s", fmt_bytes(m, sizeof m, (double)cn->mem));
    if (cn->has.spool)
        snprintf(srv + strlen(srv), sizeof srv - strlen(srv), "%s spool %s", srv[0] ? " " : "  |",
                 fmt_count(q, sizeof q, (double)cn->spool));
    fprintf(f, "[%6.0fs %-5s] sent %s (%.0f/s)  read %s (%.0f/s)  errors %llu  conns %llu  unread %lld%s\n", v->t,
            v->phase, fmt_count(a, sizeof a, (double)v->c->sent), per_s(v->dsent, v->dt),
            fmt_count(b, sizeof b, (double)v->c->read), per_s(v->dread, v->dt), (unsigned long long)v->c->errors,
            (unsigned long long)v->c->conns_open, (long long)v->unread, srv);
}
