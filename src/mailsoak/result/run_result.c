/* run_result: a run's result as plain data (include/result/run_result.h): what it
 * owns released, and the helpers the table and the JSON share (the run's label,
 * its times, a message's ids, the mail clients' login rate). */
#include "result/run_result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verdict/judge.h"

const char *const example_kind_names[EX_KINDS] = { "lost", "duplicated", "corrupted", "late" };

static void example_free(struct message_example *x)
{
    free(x->mailbox);
    free(x->queue_id);
    free(x->differs);
    free(x->trail.cause_line);
    for (unsigned i = 0; i < x->trail.n; i++)
        free(x->trail.lines[i]);
    memset(x, 0, sizeof *x);
}

void run_result_free_server(struct run_result *r)
{
    probe_summary_free(&r->server.total);
    probe_events_free(&r->server.events);
    for (size_t i = 0; i < r->server.n; i++) {
        struct run_source *s = &r->server.v[i];
        free(s->label);
        free(s->url);
        free(s->host);
        free(s->last_error);
        probe_summary_free(&s->summary);
    }
    free(r->server.v);
    memset(&r->server, 0, sizeof r->server);
}

void run_result_free(struct run_result *r)
{
    for (int k = 0; k < EX_KINDS; k++)
        for (unsigned i = 0; i < r->nexamples[k]; i++)
            example_free(&r->examples[k][i]);
    memset(r->nexamples, 0, sizeof r->nexamples);
    run_result_free_server(r);
    json_decref(r->timeline);
    r->timeline = NULL;
    gate_judgement_free(&r->judged);
    verdict_window_free(&r->window);
}

const char *run_label(const struct config *cfg)
{
    if (cfg->label[0])
        return cfg->label;
    if (cfg->server.store_format && strcmp(cfg->server.store_format, "auto"))
        return cfg->server.store_format;
    return "run";
}

const char *run_time(const struct run_result *r, uint32_t at_ms, char *buf, size_t n)
{
    uint64_t t = r->start_unix_ms + at_ms;
    time_t sec = (time_t)(t / 1000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + k, n - k, ".%03uZ", (unsigned)(t % 1000));
    return buf;
}

void msg_ids(const struct run_result *r, uint64_t seq, char *id, size_t idn, char *mid, size_t midn)
{
    snprintf(id, idn, "%s-%llx", r->run_id, (unsigned long long)seq);
    snprintf(mid, midn, "<%s.%llx@mailsoak.invalid>", r->run_id, (unsigned long long)seq);
}

const struct message_example *run_example_of(const struct run_result *r, uint64_t entry)
{
    for (int k = 0; k < EX_KINDS; k++)
        for (unsigned i = 0; i < r->nexamples[k]; i++)
            if (r->examples[k][i].entry == entry && r->examples[k][i].has_trail)
                return &r->examples[k][i];
    return NULL;
}

int poll_view(const struct run_result *r, struct poll_view *v)
{
    const struct config *cfg = r->cfg;
    if (!cfg->poll_interval)
        return 0;
    size_t n = r->users;
    v->users = cfg->poll_users && cfg->poll_users < n ? cfg->poll_users : n;
    v->interval_s = (double)cfg->poll_interval / 1e9;
    v->target = (double)v->users / v->interval_s;
    v->achieved = r->duration_s > 0 ? (double)r->c.poll_logins / r->duration_s : 0;
    v->tester_limited = judge_readers_late(r->c.polls_late, r->c.polls);
    return 1;
}
