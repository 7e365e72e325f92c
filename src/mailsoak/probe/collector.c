/* collector: the server side of a run. One thread samples, every sample_interval:
 * the process set (procset.c: memory, I/O, crashes), the spool (spool.c), the mail
 * store (store.c) and the logs (logwatch.c). Samples are kept whole, so any interval
 * of the timeline can be cut from them; what leaves here is plain data
 * (probe/sample.h) for the run's writers to format. */
#include "probe/collector.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/alloc.h"
#include "lib/clock.h"
#include "probe/logwatch.h"
#include "probe/procset.h"
#include "probe/spool.h"
#include "probe/store.h"

struct collector {
    /* What to sample; fixed after start. */
    int has_procs, has_spool, has_store, has_logs, active, manual;
    struct spool *spool;
    char **store_dirs;
    size_t nstore;
    uint64_t t0, interval;
    struct procset *procs;
    struct store *store;
    struct logwatch *lw;
    size_t ncls;

    /* The sampler's own state (the thread, or the caller once the thread is joined). */
    uint64_t *hits_scratch;

    /* Results, under mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int thread_running, stopping, stopped;
    struct probe_sample *s;
    size_t ns, cap;
    uint64_t *hits;             /* ns x ncls */
    uint64_t mem_peak, pss_peak, spool_peak;
    unsigned procs_peak;
    struct probe_event *ev;
    size_t nev;
};

/* Events come from the sampler's thread (procset, logwatch); readers copy them. */
static void add_event(void *ctx, uint64_t t, const char *kind, const char *text)
{
    struct collector *c = ctx;
    pthread_mutex_lock(&c->mu);
    c->ev = xrealloc(c->ev, (c->nev + 1) * sizeof *c->ev);
    struct probe_event *e = &c->ev[c->nev++];
    e->t = t;
    snprintf(e->kind, sizeof e->kind, "%s", kind);
    e->text = xstrdup(text);
    pthread_mutex_unlock(&c->mu);
}

/* ------------------------------------------------------------------------------ */
/* Sampling */

void collector_sample(struct collector *c)
{
    struct probe_sample s = { 0 };
    s.t = mono_ns();
    if (c->has_procs)
        procset_sample(c->procs, s.t, &s);
    if (c->has_spool)
        s.spool = spool_count(c->spool);
    if (c->has_store)
        store_walk(c->store, c->store_dirs, c->nstore, &s.store_messages, &s.store_bytes);
    if (c->lw) {
        logwatch_poll(c->lw, s.t);
        s.log_lines = logwatch_take(c->lw, c->hits_scratch);
    }
    pthread_mutex_lock(&c->mu);
    if (c->ns == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->s = xrealloc(c->s, c->cap * sizeof *c->s);
        c->hits = xrealloc(c->hits, c->cap * (c->ncls ? c->ncls : 1) * sizeof *c->hits);
    }
    c->s[c->ns] = s;
    if (c->ncls)
        memcpy(&c->hits[c->ns * c->ncls], c->hits_scratch, c->ncls * sizeof *c->hits);
    c->ns++;
    if (s.mem > c->mem_peak)
        c->mem_peak = s.mem;
    if (s.pss > c->pss_peak)
        c->pss_peak = s.pss;
    if (s.spool > c->spool_peak)
        c->spool_peak = s.spool;
    if (s.procs > c->procs_peak)
        c->procs_peak = s.procs;
    pthread_mutex_unlock(&c->mu);
}

static void *sampler(void *arg)
{
    struct collector *c = arg;
    uint64_t next = mono_ns() + c->interval;
    pthread_mutex_lock(&c->mu);
    while (!c->stopping) {
        struct timespec ts = { (time_t)(next / 1000000000ull), (long)(next % 1000000000ull) };
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
        if (c->stopping)
            break;
        uint64_t now = mono_ns();
        if (now < next)
            continue;
        pthread_mutex_unlock(&c->mu);
        collector_sample(c);
        /* A sample longer than the period skips ticks rather than piling them up. */
        now = mono_ns();
        while (next <= now)
            next += c->interval;
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* ------------------------------------------------------------------------------ */
/* Start and stop */

static int add_dirs(char ***out, size_t *n, const struct strlist *l, const char *key, char *err, size_t errlen)
{
    for (size_t i = 0; i < l->n; i++) {
        struct stat st;
        if (stat(l->v[i], &st) < 0)
            return probe_fail(err, errlen, "%s: '%s': %s", key, l->v[i], strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return probe_fail(err, errlen, "%s: '%s': not a directory", key, l->v[i]);
        *out = xrealloc(*out, (*n + 1) * sizeof **out);
        (*out)[(*n)++] = xstrdup(l->v[i]);
    }
    return 0;
}

/* A spool directory or log that does not exist yet (Exim creates input/ with its first
 * message and paniclog on its first write): said at the start, and on the timeline. */
static void awaited(struct collector *c, const char *key, const char *path, const char *then)
{
    fprintf(stderr, "mailsoak: warning: %s: %s does not exist yet: watching for it (%s)\n", key, path, then);
    probe_eventf(add_event, c, c->t0, "awaited", "%s: %s did not exist at the start; %s", key, path, then);
}

static int configure(struct collector *c, const struct server_config *cfg, const struct collector_opts *opts,
                     char *err, size_t errlen)
{
    if (cfg->pids.n || cfg->pidfiles.n || cfg->processes.n) {
        c->has_procs = 1;
        c->procs = procset_new(opts && opts->proc_root ? opts->proc_root : "/proc",
                               opts ? opts->start_ticks : 0, add_event, c, err, errlen);
        if (!c->procs)
            return -1;
    }
    for (size_t i = 0; i < cfg->pids.n; i++)
        if (procset_add_pid(c->procs, cfg->pids.v[i], err, errlen) < 0)
            return -1;
    for (size_t i = 0; i < cfg->pidfiles.n; i++)
        if (procset_add_pidfile(c->procs, cfg->pidfiles.v[i], err, errlen) < 0)
            return -1;
    for (size_t i = 0; i < cfg->processes.n; i++)
        if (procset_add_process(c->procs, cfg->processes.v[i], err, errlen) < 0)
            return -1;
    if (cfg->spool_dirs.n) {
        c->spool = spool_new(cfg, err, errlen);
        if (!c->spool)
            return -1;
        c->has_spool = 1;
        for (size_t i = 0; spool_awaited(c->spool, i); i++)
            awaited(c, "server.spool_dir", spool_awaited(c->spool, i), "counted as empty until it appears");
    }
    if (add_dirs(&c->store_dirs, &c->nstore, &cfg->store_dirs, "server.store_dir", err, errlen) < 0)
        return -1;
    c->has_store = c->nstore > 0;
    const char *fmt = cfg->store_format && *cfg->store_format ? cfg->store_format : "auto";
    enum store_format f;
    if (store_format_parse(fmt, &f) < 0)
        return probe_fail(err, errlen, "server.store_format: '%s': expected auto, maildir, mbox, sdbox or mdbox", fmt);
    c->store = store_new(f);
    if (cfg->logs.n) {
        c->lw = logwatch_from_config(cfg, c->t0, err, errlen);
        if (!c->lw)
            return -1;
        logwatch_on_event(c->lw, add_event, c);
        for (size_t i = 0; logwatch_awaited(c->lw, i); i++)
            awaited(c, "server.log", logwatch_awaited(c->lw, i), "read from its first line once it appears");
        c->has_logs = 1;
        c->ncls = logwatch_nclasses(c->lw);
        c->hits_scratch = xcalloc(c->ncls, sizeof *c->hits_scratch);
    }
    if ((c->has_procs || c->has_spool || c->has_store || c->has_logs) && cfg->sample_interval == 0)
        return probe_fail(err, errlen, "server.sample_interval: must be above 0");
    c->interval = cfg->sample_interval;
    c->active = c->has_procs || c->has_spool || c->has_store || c->has_logs;
    return 0;
}

struct collector *collector_start_opts(const struct server_config *cfg, uint64_t t0_ns,
                                       const struct collector_opts *opts, char *err, size_t errlen)
{
    struct collector *c = xcalloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    c->t0 = t0_ns;
    c->manual = opts && opts->manual;
    if (configure(c, cfg, opts, err, errlen) < 0) {
        collector_free(c);
        return NULL;
    }
    if (!c->active)
        return c;
    collector_sample(c);        /* the baseline every delta is taken from */
    if (!c->manual) {
        /* Signals are the run controller's: the sampler blocks them all. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc = pthread_create(&c->thread, NULL, sampler, c);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc) {
            snprintf(err, errlen, "collector thread: %s", strerror(rc));
            collector_free(c);
            return NULL;
        }
        c->thread_running = 1;
    }
    return c;
}

struct collector *collector_start(const struct server_config *cfg, uint64_t t0_ns, char *err, size_t errlen)
{
    return collector_start_opts(cfg, t0_ns, NULL, err, errlen);
}

void collector_stop(struct collector *c)
{
    if (!c || c->stopped)
        return;
    if (c->thread_running) {
        pthread_mutex_lock(&c->mu);
        c->stopping = 1;
        pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->thread, NULL);
        c->thread_running = 0;
    }
    if (c->active)
        collector_sample(c);
    c->stopped = 1;
}

void collector_free(struct collector *c)
{
    if (!c)
        return;
    collector_stop(c);
    procset_free(c->procs);
    store_free(c->store);
    spool_free(c->spool);
    for (size_t i = 0; i < c->nstore; i++)
        free(c->store_dirs[i]);
    free(c->store_dirs);
    logwatch_free(c->lw);
    free(c->hits_scratch);
    free(c->s);
    free(c->hits);
    for (size_t i = 0; i < c->nev; i++)
        free(c->ev[i].text);
    free(c->ev);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* ------------------------------------------------------------------------------ */
/* What was measured, as plain data */

static struct probe_has has_of(const struct collector *c)
{
    if (!c)
        return (struct probe_has){ 0 };
    return (struct probe_has){ c->active, c->has_procs, c->has_spool, c->has_store, c->has_logs };
}

void collector_now(struct collector *c, struct collector_now *out)
{
    memset(out, 0, sizeof *out);
    if (!c || !c->active)
        return;
    pthread_mutex_lock(&c->mu);
    out->active = 1;
    if (c->ns) {
        const struct probe_sample *s = &c->s[c->ns - 1];
        out->mem = s->mem;
        out->spool = s->spool;
        out->store_messages = s->store_messages;
        out->store_bytes = s->store_bytes;
        out->procs = s->procs;
        out->crashes = (unsigned)s->crashes;
    }
    out->mem_peak = c->mem_peak;
    pthread_mutex_unlock(&c->mu);
    out->log_hits = c->lw ? logwatch_total(c->lw) : 0;
}

void collector_summary(struct collector *c, struct probe_summary *out)
{
    memset(out, 0, sizeof *out);
    out->has = has_of(c);
    if (!c)
        return;
    out->t0 = c->t0;
    pthread_mutex_lock(&c->mu);
    if (c->ns) {
        out->first = c->s[0];
        out->last = c->s[c->ns - 1];
    }
    out->mem_peak = c->mem_peak;
    out->pss_peak = c->pss_peak;
    out->spool_peak = c->spool_peak;
    out->procs_peak = c->procs_peak;
    out->samples = c->ns;
    pthread_mutex_unlock(&c->mu);
    if (c->lw) {
        out->log_hits = logwatch_total(c->lw);
        out->ncls = logwatch_classes(c->lw, &out->classes);
    }
}

/* Index of the last sample taken at or before t, or -1. */
static ssize_t sample_at(const struct collector *c, uint64_t t)
{
    size_t lo = 0, hi = c->ns;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->s[mid].t <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (ssize_t)lo - 1;
}

void collector_interval(struct collector *c, uint64_t from_ns, uint64_t to_ns, struct probe_interval *out)
{
    memset(out, 0, sizeof *out);
    out->has = has_of(c);
    if (!c || !c->active)
        return;
    if (c->has_logs) {
        out->ncls = c->ncls;
        out->classes = xcalloc(c->ncls, sizeof *out->classes);
        for (size_t k = 0; k < c->ncls; k++)
            out->classes[k].name = xstrdup(logwatch_class_name(c->lw, k));
    }
    pthread_mutex_lock(&c->mu);
    ssize_t a = sample_at(c, from_ns), b = sample_at(c, to_ns);
    /* Before the first sample nothing had happened yet: the baseline stands in. */
    if (c->ns) {
        out->from = c->s[a < 0 ? 0 : a];
        out->to = c->s[b < 0 ? 0 : b];
    }
    for (size_t k = 0; k < out->ncls; k++)
        for (ssize_t i = a + 1; i <= b; i++)
            out->classes[k].count += c->hits[(size_t)i * c->ncls + k];
    pthread_mutex_unlock(&c->mu);
}

void collector_events(struct collector *c, struct probe_events *out)
{
    memset(out, 0, sizeof *out);
    if (!c)
        return;
    out->t0 = c->t0;
    pthread_mutex_lock(&c->mu);
    out->v = xcalloc(c->nev, sizeof *out->v);
    for (size_t i = 0; i < c->nev; i++) {
        out->v[i] = c->ev[i];
        out->v[i].text = xstrdup(c->ev[i].text);
    }
    out->n = c->nev;
    pthread_mutex_unlock(&c->mu);
}
