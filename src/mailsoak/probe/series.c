/* series: the samples of one host and the cuts the run's writers need (see
 * series.h). Samples sit in an array in time order; with keep_ns the oldest are
 * dropped from the front as new ones arrive (mailsoak probe runs for weeks),
 * and indexes count from the series' creation so that a puller asking "since N"
 * is not confused by the drop. */
#include "probe/series.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "lib/alloc.h"

enum { MAX_EVENTS = 10000 };

struct entry {
    struct probe_sample x;
    uint64_t *hits;                  /* ncls, or NULL without classes */
    struct series_line *lines;
    size_t nlines;
};

struct series {
    pthread_mutex_t mu;
    struct probe_has has;
    uint64_t t0, keep;
    char **cls;
    size_t ncls, examples;
    struct entry *v;
    size_t n, cap;
    uint64_t first;                  /* index of v[0] */
    uint64_t mem_peak, pss_peak, spool_peak;
    unsigned procs_peak;
    uint64_t part_mem_peak[PROBE_NPARTS], part_pss_peak[PROBE_NPARTS];
    unsigned part_procs_peak[PROBE_NPARTS];
    uint64_t db_waiting_peak, db_conns_peak;
    uint64_t *cls_total;
    struct probe_event *ev;
    size_t nev, evcap;
    uint64_t ev_first;               /* index of ev[0] */
};

struct series *series_new(const struct series_opts *o)
{
    struct series *s = xcalloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->has = o->has;
    s->t0 = o->t0;
    s->keep = o->keep_ns;
    s->examples = o->examples;
    s->ncls = o->ncls;
    s->cls = xcalloc(o->ncls, sizeof *s->cls);
    for (size_t i = 0; i < o->ncls; i++)
        s->cls[i] = xstrdup(o->classes[i]);
    s->cls_total = xcalloc(o->ncls, sizeof *s->cls_total);
    return s;
}

static void entry_free(struct entry *e)
{
    free(e->hits);
    for (size_t i = 0; i < e->nlines; i++)
        free(e->lines[i].line);
    free(e->lines);
}

void series_free(struct series *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        entry_free(&s->v[i]);
    free(s->v);
    for (size_t i = 0; i < s->ncls; i++)
        free(s->cls[i]);
    free(s->cls);
    free(s->cls_total);
    for (size_t i = 0; i < s->nev; i++)
        free(s->ev[i].text);
    free(s->ev);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* Samples older than keep before the newest go, but never the newest itself. */
static void drop_old(struct series *s)
{
    if (!s->keep || s->n < 2)
        return;
    uint64_t newest = s->v[s->n - 1].x.t;
    size_t k = 0;
    while (k < s->n - 1 && newest - s->v[k].x.t > s->keep)
        entry_free(&s->v[k++]);
    if (!k)
        return;
    memmove(s->v, s->v + k, (s->n - k) * sizeof *s->v);
    s->n -= k;
    s->first += k;
}

void series_add(struct series *s, const struct probe_sample *x, const uint64_t *hits,
                struct series_line *lines, size_t nlines)
{
    struct entry e = { .x = *x };
    if (s->ncls) {
        e.hits = xcalloc(s->ncls, sizeof *e.hits);
        if (hits)
            memcpy(e.hits, hits, s->ncls * sizeof *e.hits);
    }
    /* Keep the first `examples` lines of each class; the caller's others go. */
    size_t *per = xcalloc(s->ncls, sizeof *per);
    for (size_t i = 0; i < nlines; i++) {
        if (lines[i].cls < s->ncls && per[lines[i].cls] < s->examples) {
            per[lines[i].cls]++;
            e.lines = xrealloc(e.lines, (e.nlines + 1) * sizeof *e.lines);
            e.lines[e.nlines++] = lines[i];
        } else {
            free(lines[i].line);
        }
    }
    free(per);
    pthread_mutex_lock(&s->mu);
    s->v = grow(s->v, &s->cap, s->n, 1, sizeof *s->v);
    s->v[s->n++] = e;
    for (size_t k = 0; k < s->ncls; k++)
        s->cls_total[k] += e.hits[k];
    if (x->mem > s->mem_peak)
        s->mem_peak = x->mem;
    if (x->pss > s->pss_peak)
        s->pss_peak = x->pss;
    if (x->spool > s->spool_peak)
        s->spool_peak = x->spool;
    if (x->procs > s->procs_peak)
        s->procs_peak = x->procs;
    for (int k = 0; k < PROBE_NPARTS; k++) {
        if (x->part[k].mem > s->part_mem_peak[k])
            s->part_mem_peak[k] = x->part[k].mem;
        if (x->part[k].pss > s->part_pss_peak[k])
            s->part_pss_peak[k] = x->part[k].pss;
        if (x->part[k].procs > s->part_procs_peak[k])
            s->part_procs_peak[k] = x->part[k].procs;
    }
    if (x->db.waiting > s->db_waiting_peak)
        s->db_waiting_peak = x->db.waiting;
    if (x->db.conns > s->db_conns_peak)
        s->db_conns_peak = x->db.conns;
    drop_old(s);
    pthread_mutex_unlock(&s->mu);
}

void series_event(void *ctx, uint64_t t, const char *kind, const char *text)
{
    struct series *s = ctx;
    pthread_mutex_lock(&s->mu);
    if (s->nev == MAX_EVENTS) {
        free(s->ev[0].text);
        memmove(s->ev, s->ev + 1, (s->nev - 1) * sizeof *s->ev);
        s->nev--;
        s->ev_first++;
    }
    s->ev = grow(s->ev, &s->evcap, s->nev, 1, sizeof *s->ev);
    struct probe_event *e = &s->ev[s->nev++];
    e->t = t;
    snprintf(e->kind, sizeof e->kind, "%s", kind);
    e->text = xstrdup(text);
    pthread_mutex_unlock(&s->mu);
}

struct probe_has series_has(const struct series *s)
{
    return s ? s->has : (struct probe_has){ 0 };
}

size_t series_nclasses(const struct series *s)
{
    return s->ncls;
}

size_t series_examples(const struct series *s)
{
    return s->examples;
}

const char *series_class(const struct series *s, size_t i)
{
    return s->cls[i];
}

/* Index in v of the last sample at or before t, or -1. Under the lock. */
static ssize_t sample_at(const struct series *s, uint64_t t)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->v[mid].x.t <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (ssize_t)lo - 1;
}

/* The baseline of a window starting at t0: the last sample at or before it, else
 * the first. Under the lock, with samples. */
static size_t baseline(const struct series *s, uint64_t t0)
{
    ssize_t a = sample_at(s, t0);
    return a < 0 ? 0 : (size_t)a;
}

void series_now(struct series *s, struct series_now *out)
{
    memset(out, 0, sizeof *out);
    if (!s || !s->has.active)
        return;
    out->active = 1;
    out->has = s->has;
    pthread_mutex_lock(&s->mu);
    if (s->n) {
        size_t a = baseline(s, s->t0);
        const struct probe_sample *x = &s->v[s->n - 1].x;
        out->mem = x->mem;
        out->spool = x->spool;
        out->store_messages = x->store_messages;
        out->store_bytes = x->store_bytes;
        out->procs = x->procs;
        out->crashes = (unsigned)(x->crashes - s->v[a].x.crashes);
        for (size_t i = a + 1; i < s->n; i++)
            out->log_hits += s->v[i].x.log_lines;
    }
    out->mem_peak = s->mem_peak;
    pthread_mutex_unlock(&s->mu);
}

static struct probe_class *class_names(const struct series *s)
{
    struct probe_class *v = xcalloc(s->ncls, sizeof *v);
    for (size_t k = 0; k < s->ncls; k++)
        v[k].name = xstrdup(s->cls[k]);
    return v;
}

void series_summary(struct series *s, uint64_t t0, struct probe_summary *out)
{
    memset(out, 0, sizeof *out);
    out->has = series_has(s);
    out->t0 = t0;
    if (!s)
        return;
    if (s->has.logs) {
        out->classes = class_names(s);
        out->ncls = s->ncls;
    }
    pthread_mutex_lock(&s->mu);
    if (s->n) {
        size_t a = baseline(s, t0);
        out->first = s->v[a].x;
        out->last = s->v[s->n - 1].x;
        /* crashes count from the baseline, like every other delta */
        out->last.crashes -= out->first.crashes;
        out->first.crashes = 0;
        out->samples = s->n - a;
        for (size_t i = a + 1; i < s->n; i++) {
            const struct entry *e = &s->v[i];
            out->log_hits += e->x.log_lines;
            for (size_t k = 0; k < out->ncls; k++)
                out->classes[k].count += e->hits[k];
            for (size_t j = 0; j < e->nlines; j++) {
                struct probe_class *c = &out->classes[e->lines[j].cls];
                if (c->nex >= s->examples)
                    continue;
                if (!c->ex)
                    c->ex = xcalloc(s->examples, sizeof *c->ex);
                c->ex[c->nex].t = e->lines[j].t;
                c->ex[c->nex++].line = xstrdup(e->lines[j].line);
            }
        }
    }
    out->mem_peak = s->mem_peak;
    out->pss_peak = s->pss_peak;
    out->spool_peak = s->spool_peak;
    out->procs_peak = s->procs_peak;
    memcpy(out->part_mem_peak, s->part_mem_peak, sizeof out->part_mem_peak);
    memcpy(out->part_pss_peak, s->part_pss_peak, sizeof out->part_pss_peak);
    memcpy(out->part_procs_peak, s->part_procs_peak, sizeof out->part_procs_peak);
    out->db_waiting_peak = s->db_waiting_peak;
    out->db_conns_peak = s->db_conns_peak;
    pthread_mutex_unlock(&s->mu);
}

void series_interval(struct series *s, uint64_t from, uint64_t to, struct probe_interval *out)
{
    memset(out, 0, sizeof *out);
    out->has = series_has(s);
    if (!s || !s->has.active)
        return;
    if (s->has.logs) {
        out->classes = class_names(s);
        out->ncls = s->ncls;
    }
    pthread_mutex_lock(&s->mu);
    ssize_t a = sample_at(s, from), b = sample_at(s, to);
    /* Before the first sample nothing had happened yet: the baseline stands in. */
    if (s->n) {
        out->from = s->v[a < 0 ? 0 : a].x;
        out->to = s->v[b < 0 ? 0 : b].x;
    }
    for (ssize_t i = a + 1; i <= b; i++)
        for (size_t k = 0; k < out->ncls; k++)
            out->classes[k].count += s->v[i].hits[k];
    pthread_mutex_unlock(&s->mu);
}

void series_events(struct series *s, uint64_t t0, struct probe_events *out)
{
    memset(out, 0, sizeof *out);
    out->t0 = t0;
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    out->v = xcalloc(s->nev, sizeof *out->v);
    for (size_t i = 0; i < s->nev; i++) {
        out->v[i] = s->ev[i];
        out->v[i].text = xstrdup(s->ev[i].text);
    }
    out->n = s->nev;
    pthread_mutex_unlock(&s->mu);
}

uint64_t series_each(struct series *s, uint64_t from, size_t max, series_sample_fn fn, void *ud)
{
    pthread_mutex_lock(&s->mu);
    size_t i = from > s->first ? (size_t)(from - s->first) : 0;
    for (size_t k = 0; i < s->n && k < max; k++) {
        const struct entry *e = &s->v[i++];
        if (fn(ud, s->first + i - 1, &e->x, e->hits, e->lines, e->nlines))
            break;
    }
    uint64_t next = s->first + (i < s->n ? i : s->n);
    pthread_mutex_unlock(&s->mu);
    return next;
}

uint64_t series_each_event(struct series *s, uint64_t from, size_t max, series_event_fn fn, void *ud)
{
    pthread_mutex_lock(&s->mu);
    size_t i = from > s->ev_first ? (size_t)(from - s->ev_first) : 0;
    for (size_t k = 0; i < s->nev && k < max; i++, k++)
        fn(ud, s->ev_first + i, &s->ev[i]);
    uint64_t next = s->ev_first + (i < s->nev ? i : s->nev);
    pthread_mutex_unlock(&s->mu);
    return next;
}

void series_next(struct series *s, uint64_t *sample, uint64_t *event)
{
    pthread_mutex_lock(&s->mu);
    *sample = s->first + s->n;
    *event = s->ev_first + s->nev;
    pthread_mutex_unlock(&s->mu);
}

uint64_t series_class_total(struct series *s, size_t i)
{
    pthread_mutex_lock(&s->mu);
    uint64_t n = i < s->ncls ? s->cls_total[i] : 0;
    pthread_mutex_unlock(&s->mu);
    return n;
}
