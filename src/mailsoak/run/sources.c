/* sources: the run's server side over its sources (see sources.h). A source is a
 * series and the offset of its clock from the run's: 0 for the local collector,
 * the probe's estimate for a remote one. Every cut is asked of each source on its
 * own clock and the results are added up on ours. */
#include "run/sources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "lib/alloc.h"
#include "probe/collector.h"
#include "result/probe_output.h"
#include "run/remote.h"

#define REFRESH_TIMEOUT_NS 10000000000ull     /* a walk of a large store can take seconds */

struct source {
    const char *label;
    struct collector *col;           /* one of the two */
    struct remote *rem;
};

struct sources {
    uint64_t t0;
    size_t examples;
    struct source *v;
    size_t n;
};

static struct series *series_of(const struct source *x)
{
    return x->col ? collector_series(x->col) : remote_series(x->rem);
}

static int64_t offset_of(const struct source *x)
{
    return x->rem ? remote_offset(x->rem) : 0;
}

/* A run time on the source's clock, and back. */
static uint64_t to_src(const struct source *x, uint64_t t)
{
    return (uint64_t)((int64_t)t + offset_of(x));
}

static uint64_t from_src(int64_t off, uint64_t t)
{
    return (uint64_t)((int64_t)t - off);
}

struct sources *sources_start(const struct config *cfg, uint64_t t0, char *err, size_t errlen)
{
    struct sources *s = xcalloc(1, sizeof *s);
    const struct tested_server *sc = &cfg->server;
    s->t0 = t0;
    s->examples = (size_t)sc->log_examples;
    s->v = xcalloc(sc->probes.n + 1, sizeof *s->v);
    /* The collector keeps /proc files open only from what the sessions leave of the
     * soft limit (a quarter of it, its default, took descriptors the senders then
     * lacked: 1,510 sessions under a limit of 1,574 failed 'socket: Too many open
     * files'). */
    struct collector_opts co = { .keep_files = 1 };
    struct rlimit rl;
    uint64_t held = cfg->senders + cfg->readers + imap_idle_users(cfg, (size_t)cfg->user_count) + CONFIG_FD_RESERVE;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > held + 2)
        co.keep_files = (size_t)(rl.rlim_cur - held) / 2;
    struct collector *col = collector_start_opts(sc, t0, &co, err, errlen);
    if (!col) {
        sources_free(s);
        return NULL;
    }
    if (collector_series(col) || !sc->probes.n)
        s->v[s->n++] = (struct source){ .label = "local", .col = col };
    else
        collector_free(col);         /* only probes: nothing to sample here */
    for (size_t i = 0; i < sc->probes.n; i++) {
        char why[500];
        struct remote *r = remote_start(sc->probes.v[i], sc->probe_token, s->examples, sc->sample_interval, why,
                                        sizeof why);
        if (!r) {
            snprintf(err, errlen, "server.probe: %s", why);
            sources_free(s);
            return NULL;
        }
        s->v[s->n++] = (struct source){ .label = remote_label(r), .rem = r };
        for (size_t k = 0; k + 1 < s->n; k++)
            if (!strcmp(s->v[k].label, s->v[s->n - 1].label)) {
                snprintf(err, errlen, "server.probe: two sources labelled '%s'", s->v[k].label);
                sources_free(s);
                return NULL;
            }
    }
    return s;
}

void sources_stop(struct sources *s)
{
    for (size_t i = 0; s && i < s->n; i++) {
        if (s->v[i].col)
            collector_stop(s->v[i].col);
        else
            remote_stop(s->v[i].rem);
    }
}

void sources_rescan_logs(struct sources *s, logwatch_rescan_fn fn, void *ctx)
{
    for (size_t i = 0; s && i < s->n; i++)
        collector_rescan_logs(s->v[i].col, fn, ctx);
}

void sources_free(struct sources *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        collector_free(s->v[i].col);
        remote_free(s->v[i].rem);
    }
    free(s->v);
    free(s);
}

static void has_add(struct probe_has *a, const struct probe_has *b)
{
    a->active |= b->active;
    a->procs |= b->procs;
    a->spool |= b->spool;
    a->store |= b->store;
    a->logs |= b->logs;
    /* Several hosts' databases add up; the kind shown is the first one's. */
    if (!a->db)
        a->db = b->db;
}

static void sample_add(struct probe_sample *a, const struct probe_sample *b)
{
    a->mem += b->mem;
    a->pss += b->pss;
    a->spool += b->spool;
    a->store_messages += b->store_messages;
    a->store_bytes += b->store_bytes;
    a->log_lines += b->log_lines;
    a->crashes += b->crashes;
    a->procs += b->procs;
    proc_io_add(&a->io, &b->io);
    for (int k = 0; k < PROBE_NPARTS; k++) {
        a->part[k].mem += b->part[k].mem;
        a->part[k].pss += b->part[k].pss;
        a->part[k].procs += b->part[k].procs;
        proc_io_add(&a->part[k].io, &b->part[k].io);
    }
    a->db.lock_waits += b->db.lock_waits;
    a->db.waiting += b->db.waiting;
    a->db.deadlocks += b->db.deadlocks;
    a->db.errors += b->db.errors;
    a->db.conns += b->db.conns;
    a->db.conns_max += b->db.conns_max;
    a->db.unreadable += b->db.unreadable;
}

static int by_t(const void *a, const void *b)
{
    const struct probe_example *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* Adds src's classes (times shifted by -off onto the run's clock) to dst by name;
 * examples stay the first `examples` in time. src is emptied. */
static void classes_add(struct probe_class **dst, size_t *ndst, struct probe_class *src, size_t nsrc, int64_t off,
                        size_t examples)
{
    for (size_t i = 0; i < nsrc; i++) {
        struct probe_class *c = NULL;
        for (size_t k = 0; k < *ndst && !c; k++)
            if (!strcmp((*dst)[k].name, src[i].name))
                c = &(*dst)[k];
        if (!c) {
            *dst = xrealloc(*dst, (*ndst + 1) * sizeof **dst);
            c = &(*dst)[(*ndst)++];
            *c = (struct probe_class){ .name = xstrdup(src[i].name) };
        }
        c->count += src[i].count;
        c->ex = xrealloc(c->ex, (c->nex + src[i].nex) * sizeof *c->ex);
        for (size_t j = 0; j < src[i].nex; j++) {
            c->ex[c->nex] = src[i].ex[j];
            c->ex[c->nex++].t = from_src(off, src[i].ex[j].t);
            src[i].ex[j].line = NULL;
        }
        qsort(c->ex, c->nex, sizeof *c->ex, by_t);
        for (; c->nex > examples; c->nex--)
            free(c->ex[c->nex - 1].line);
    }
}

int sources_refresh(struct sources *s, uint64_t min_age_ns)
{
    int rc = 0;
    for (size_t i = 0; s && i < s->n; i++)
        if ((s->v[i].col ? collector_sample_fresh(s->v[i].col, min_age_ns, REFRESH_TIMEOUT_NS)
                         : remote_refresh(s->v[i].rem, min_age_ns, REFRESH_TIMEOUT_NS)) < 0)
            rc = -1;
    return rc;
}

void sources_now(struct sources *s, struct series_now *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; s && i < s->n; i++) {
        struct series_now x;
        series_now(series_of(&s->v[i]), &x);
        out->active |= x.active;
        has_add(&out->has, &x.has);
        out->mem += x.mem;
        out->mem_peak += x.mem_peak;
        out->spool += x.spool;
        out->store_messages += x.store_messages;
        out->store_bytes += x.store_bytes;
        out->log_hits += x.log_hits;
        out->procs += x.procs;
        out->crashes += x.crashes;
    }
}

void sources_summary(struct sources *s, struct probe_summary *out)
{
    memset(out, 0, sizeof *out);
    if (!s)
        return;
    out->t0 = s->t0;
    for (size_t i = 0; i < s->n; i++) {
        struct probe_summary x;
        int64_t off = offset_of(&s->v[i]);
        series_summary(series_of(&s->v[i]), to_src(&s->v[i], s->t0), &x);
        has_add(&out->has, &x.has);
        sample_add(&out->first, &x.first);
        sample_add(&out->last, &x.last);
        out->mem_peak += x.mem_peak;
        out->pss_peak += x.pss_peak;
        out->spool_peak += x.spool_peak;
        out->procs_peak += x.procs_peak;
        for (int k = 0; k < PROBE_NPARTS; k++) {
            out->part_mem_peak[k] += x.part_mem_peak[k];
            out->part_pss_peak[k] += x.part_pss_peak[k];
            out->part_procs_peak[k] += x.part_procs_peak[k];
        }
        out->db_waiting_peak += x.db_waiting_peak;
        out->db_conns_peak += x.db_conns_peak;
        out->samples += x.samples;
        out->log_hits += x.log_hits;
        classes_add(&out->classes, &out->ncls, x.classes, x.ncls, off, s->examples);
        probe_summary_free(&x);
    }
}

void sources_interval(struct sources *s, uint64_t from, uint64_t to, struct probe_interval *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; s && i < s->n; i++) {
        struct probe_interval x;
        series_interval(series_of(&s->v[i]), to_src(&s->v[i], from), to_src(&s->v[i], to), &x);
        has_add(&out->has, &x.has);
        sample_add(&out->from, &x.from);
        sample_add(&out->to, &x.to);
        classes_add(&out->classes, &out->ncls, x.classes, x.ncls, 0, 0);
        probe_interval_free(&x);
    }
}

static int event_by_t(const void *a, const void *b)
{
    const struct probe_event *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

void sources_events(struct sources *s, struct probe_events *out)
{
    memset(out, 0, sizeof *out);
    if (!s)
        return;
    out->t0 = s->t0;
    for (size_t i = 0; i < s->n; i++) {
        struct probe_events x;
        int64_t off = offset_of(&s->v[i]);
        series_events(series_of(&s->v[i]), 0, &x);
        out->v = xrealloc(out->v, (out->n + x.n) * sizeof *out->v);
        for (size_t j = 0; j < x.n; j++) {
            struct probe_event *e = &out->v[out->n++];
            *e = x.v[j];
            e->t = from_src(off, x.v[j].t);
            if (s->n > 1) {
                size_t len = strlen(s->v[i].label) + strlen(x.v[j].text) + 3;
                e->text = xmalloc(len);
                snprintf(e->text, len, "%s: %s", s->v[i].label, x.v[j].text);
                free(x.v[j].text);
            }
            x.v[j].text = NULL;
        }
        probe_events_free(&x);
    }
    qsort(out->v, out->n, sizeof *out->v, event_by_t);
}

/* One source's summary alone, on its own clock from the run's start. */
static void summary_one(struct sources *s, size_t i, struct probe_summary *out)
{
    series_summary(series_of(&s->v[i]), to_src(&s->v[i], s->t0), out);
}

void sources_snapshot(struct sources *s, struct run_server *out)
{
    memset(out, 0, sizeof *out);
    sources_summary(s, &out->total);
    sources_events(s, &out->events);
    if (!s)
        return;
    out->by_source = s->n && !(s->n == 1 && s->v[0].col);
    out->n = s->n;
    out->v = xcalloc(s->n ? s->n : 1, sizeof *out->v);
    for (size_t i = 0; i < s->n; i++) {
        const struct source *x = &s->v[i];
        struct run_source *o = &out->v[i];
        o->label = xstrdup(x->label);
        if (x->rem)
            remote_view(x->rem, o);
        summary_one(s, i, &o->summary);
        /* when this source's first and last samples were taken, on the run's clock:
         * what two sources of one server differ by */
        int64_t off = offset_of(x);
        o->window_s[0] = ((double)o->summary.first.t - (double)off - (double)s->t0) / 1e9;
        o->window_s[1] = ((double)o->summary.last.t - (double)off - (double)s->t0) / 1e9;
    }
}
