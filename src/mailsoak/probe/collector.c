/* collector: the server side of a run. One thread samples, every sample_interval:
 * the process set (procset.c: memory, CPU, I/O, crashes, by part), the database's own
 * counters (db.c) and the logs (logwatch.c); every queue_interval, the spool's count
 * (spool.c, from directory entries), less often where a count costs more than
 * QUEUE_SHARE of the time between counts; and every walk_interval, the readings
 * that walk directories or page tables: the mail store (store.c) and PSS. Between
 * readings a sample carries the last one's figures. Samples are kept whole, so any
 * interval of the timeline can be cut from them; what leaves here is plain data
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
#include "lib/printable.h"
#include "lib/clock.h"
#include "probe/db.h"
#include "probe/logwatch.h"
#include "probe/procset.h"
#include "probe/spool.h"
#include "probe/store.h"

/* A count reads every directory entry of the queue: one of 100,000 files takes
 * tens of milliseconds, on the host of the server it measures, when the server is
 * furthest behind. Counts are spaced so that they take at most this share of the
 * time. */
#define QUEUE_SHARE 0.01

struct collector {
    /* What to sample; fixed after start. */
    int has_procs, has_spool, has_store, has_logs, active, manual;
    struct spool *spool;
    char **store_dirs;
    size_t nstore;
    uint64_t t0, interval, walk_interval, queue_interval;
    struct procset *procs;
    struct store *store;
    struct logwatch *lw;
    struct dbmon *db;
    int db_failing;             /* the last reading failed (said once, as an event) */
    int store_failing;          /* the last store walk could not read a file (said once) */
    size_t cls_locked, cls_error;   /* SQLite's counters: these classes' lines (SIZE_MAX: none) */
    size_t ncls, examples;
    struct series *series;      /* the samples; thread-safe itself */
    struct probe_events early;  /* events of the set-up, before the series exists */

    /* The sampler's own state (the thread, or the caller once the thread is joined). */
    uint64_t *hits_scratch;
    struct series_line *lines;  /* matched since the last sample: the first `examples` per class */
    size_t nlines, lines_cap;
    size_t *lines_per_class;
    struct probe_sample walked;     /* the last count's spool, the last walk's store */

    /* The thread, under mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int thread_running, stopping, stopped;
    uint64_t fresh_wanted, fresh_done, last_walk_t;
    uint64_t queue_ns;              /* the last count's wall time (the sampler's) */
};

/* Events come from the sampler's thread (procset, logwatch), and during the set-up
 * (a spool or log awaited) before the series that keeps them is made. */
static void add_event(void *ctx, uint64_t t, const char *kind, const char *text)
{
    struct collector *c = ctx;
    if (c->series) {
        series_event(c->series, t, kind, text);
        return;
    }
    struct probe_events *e = &c->early;
    e->v = xrealloc(e->v, (e->n + 1) * sizeof *e->v);
    e->v[e->n] = (struct probe_event){ .t = t, .text = xstrdup(text) };
    snprintf(e->v[e->n++].kind, sizeof e->v[0].kind, "%s", kind);
}

/* A matching log line, on the sampler's thread while logwatch_poll() runs. */
static void add_line(void *ctx, size_t cls, uint64_t t, const char *line, size_t n)
{
    struct collector *c = ctx;
    if (cls >= c->ncls || c->lines_per_class[cls] >= c->examples)
        return;
    c->lines_per_class[cls]++;
    c->lines = grow(c->lines, &c->lines_cap, c->nlines, 1, sizeof *c->lines);
    c->lines[c->nlines++] = (struct series_line){ t, cls, xstrndup(line, n) };
}

/* ------------------------------------------------------------------------------ */
/* Sampling */

/* The database's counters: read from the server (PostgreSQL, MariaDB), or SQLite's
 * from the logs' classes (the totals up to and with this sample's hits). */
static void sample_db(struct collector *c, struct probe_sample *s)
{
    if (dbmon_kind(c->db) == DBK_SQLITE) {
        if (c->cls_locked != SIZE_MAX)
            s->db.lock_waits = series_class_total(c->series, c->cls_locked) + c->hits_scratch[c->cls_locked];
        if (c->cls_error != SIZE_MAX)
            s->db.errors = series_class_total(c->series, c->cls_error) + c->hits_scratch[c->cls_error];
        return;
    }
    char why[300];
    int rc = dbmon_read(c->db, &s->db, why, sizeof why);
    if (rc < 0 && !c->db_failing)
        probe_eventf(add_event, c, s->t, "db_unreadable", "server.database: %s: %s (the last figures stand)",
                     probe_db_kind_name(dbmon_kind(c->db)), why);
    else if (rc == 0 && c->db_failing)
        probe_eventf(add_event, c, s->t, "db_readable", "server.database: %s: read again",
                     probe_db_kind_name(dbmon_kind(c->db)));
    c->db_failing = rc < 0;
}

/* One sample; walk: the store and PSS are read too, queue: the spool is counted
 * too (a walk counts it as well), else the last reading of each stands. */
static void sample(struct collector *c, int walk, int queue)
{
    struct probe_sample s = { 0 };
    s.t = mono_ns();
    if (c->has_procs)
        procset_sample(c->procs, s.t, walk, &s);
    if (c->has_spool && (walk || queue)) {
        uint64_t t0 = mono_ns();
        c->walked.spool = spool_count(c->spool);
        c->queue_ns = mono_ns() - t0;
    }
    if (c->has_store && walk) {
        char why[600], shown[800];   /* a mailbox's name is a user's: printable */
        store_walk(c->store, c->store_dirs, c->nstore, &c->walked.store_messages, &c->walked.store_bytes, why,
                   sizeof why);
        printable(shown, sizeof shown, why, strlen(why));
        /* said once when it starts and once when it ends, as the database's */
        if (why[0] && !c->store_failing)
            probe_eventf(add_event, c, s.t, "store_unreadable",
                         "collector failed to read the store: %s (counted without it until it reads again)", shown);
        else if (!why[0] && c->store_failing)
            probe_eventf(add_event, c, s.t, "store_readable", "collector: the store reads again");
        c->store_failing = why[0] != 0;
    }
    s.spool = c->walked.spool;
    s.store_messages = c->walked.store_messages;
    s.store_bytes = c->walked.store_bytes;
    if (c->lw) {
        logwatch_poll(c->lw, s.t);
        s.log_lines = logwatch_take(c->lw, c->hits_scratch);
    }
    if (c->db)
        sample_db(c, &s);
    series_add(c->series, &s, c->hits_scratch, c->lines, c->nlines);
    c->nlines = 0;
    if (c->ncls)
        memset(c->lines_per_class, 0, c->ncls * sizeof *c->lines_per_class);
    if (walk) {
        pthread_mutex_lock(&c->mu);
        c->last_walk_t = s.t;
        pthread_mutex_unlock(&c->mu);
    }
}

void collector_sample(struct collector *c)
{
    sample(c, 1, 1);
}

static void *sampler(void *arg)
{
    struct collector *c = arg;
    uint64_t next = mono_ns() + c->interval, next_walk = mono_ns() + c->walk_interval;
    uint64_t next_queue = mono_ns() + c->queue_interval;
    pthread_mutex_lock(&c->mu);
    while (!c->stopping) {
        struct timespec ts = { (time_t)(next / 1000000000ull), (long)(next % 1000000000ull) };
        if (c->fresh_wanted == c->fresh_done)
            pthread_cond_timedwait(&c->cv, &c->mu, &ts);
        if (c->stopping)
            break;
        uint64_t now = mono_ns(), wanted = c->fresh_wanted;
        int asked = wanted != c->fresh_done;
        if (now < next && !asked)
            continue;
        pthread_mutex_unlock(&c->mu);
        /* A sample asked for is a window's edge: every figure is read anew. */
        int walk = !c->walk_interval || now >= next_walk || asked;
        int queue = now >= next_queue;
        uint64_t began = now;
        sample(c, walk, queue);
        /* A sample longer than the period skips ticks rather than piling them up. */
        now = mono_ns();
        while (next <= now)
            next += c->interval;
        while (walk && c->walk_interval && next_walk <= now)
            next_walk += c->walk_interval;
        while ((walk || queue) && c->queue_interval && next_queue <= now)
            next_queue += c->queue_interval;
        uint64_t spaced = began + (uint64_t)((double)c->queue_ns / QUEUE_SHARE);
        if ((walk || queue) && c->has_spool && next_queue < spaced)
            next_queue = spaced;
        pthread_mutex_lock(&c->mu);
        c->fresh_done = wanted;
        pthread_cond_broadcast(&c->cv);
    }
    c->fresh_done = c->fresh_wanted;     /* nobody waits for a stopped sampler */
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

int collector_sample_fresh(struct collector *c, uint64_t min_age_ns, uint64_t timeout_ns)
{
    if (!c || !c->active)
        return -1;
    uint64_t deadline = mono_ns() + timeout_ns;
    struct timespec ts = { (time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull) };
    pthread_mutex_lock(&c->mu);
    if (!c->thread_running || mono_ns() - c->last_walk_t < min_age_ns) {
        int ok = c->thread_running || c->stopped;
        pthread_mutex_unlock(&c->mu);
        return ok ? 0 : -1;
    }
    uint64_t want = ++c->fresh_wanted;
    pthread_cond_broadcast(&c->cv);
    int rc = 0;
    while (c->fresh_done < want && rc == 0)
        rc = pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    int ok = c->fresh_done >= want;
    pthread_mutex_unlock(&c->mu);
    return ok ? 0 : -1;
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

static int configure(struct collector *c, const struct tested_server *cfg, const struct collector_opts *opts,
                     char *err, size_t errlen)
{
    if (cfg->pids.n || cfg->pidfiles.n || cfg->processes.n) {
        c->has_procs = 1;
        c->procs = procset_new(opts && opts->proc_root ? opts->proc_root : "/proc", opts ? opts->start_ticks : 0,
                               opts ? opts->keep_files : 0, add_event, c, err, errlen);
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
        logwatch_on_match(c->lw, add_line, c);
        c->has_logs = 1;
        c->ncls = logwatch_nclasses(c->lw);
        c->hits_scratch = xcalloc(c->ncls, sizeof *c->hits_scratch);
        c->lines_per_class = xcalloc(c->ncls, sizeof *c->lines_per_class);
    }
    c->examples = (size_t)cfg->log_examples;
    c->cls_locked = c->cls_error = SIZE_MAX;
    if (cfg->database && *cfg->database) {
        c->db = dbmon_new(cfg->database, err, errlen);
        if (!c->db)
            return -1;
        if (dbmon_kind(c->db) == DBK_SQLITE) {
            for (size_t k = 0; k < c->ncls; k++) {
                if (!strcmp(logwatch_class_name(c->lw, k), "lock_wait"))
                    c->cls_locked = k;
                if (!strcmp(logwatch_class_name(c->lw, k), "db_error"))
                    c->cls_error = k;
            }
            if (c->cls_locked == SIZE_MAX)
                return probe_fail(err, errlen, "server.database: sqlite: its lock waits and errors are counted from "
                                  "the servers' logs: set server.log and keep the log classes lock_wait and db_error");
        }
    }
    if ((c->has_procs || c->has_spool || c->has_store || c->has_logs || c->db) && cfg->sample_interval == 0)
        return probe_fail(err, errlen, "server.sample_interval: must be above 0");
    c->interval = cfg->sample_interval;
    c->walk_interval = cfg->walk_interval;
    c->queue_interval = cfg->queue_interval;
    c->active = c->has_procs || c->has_spool || c->has_store || c->has_logs || c->db;
    const char **names = xcalloc(c->ncls, sizeof *names);
    for (size_t k = 0; k < c->ncls; k++)
        names[k] = logwatch_class_name(c->lw, k);
    struct series_opts so = {
        .has = { c->active, c->has_procs, c->has_spool, c->has_store, c->has_logs, dbmon_kind(c->db) },
        .t0 = c->t0, .classes = names, .ncls = c->ncls, .examples = c->examples,
        .keep_ns = opts ? opts->keep_ns : 0,
    };
    c->series = series_new(&so);
    free(names);
    for (size_t i = 0; i < c->early.n; i++)
        series_event(c->series, c->early.v[i].t, c->early.v[i].kind, c->early.v[i].text);
    probe_events_free(&c->early);
    return 0;
}

struct collector *collector_start_opts(const struct tested_server *cfg, uint64_t t0_ns,
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
    /* What each spool_dir was recognised as (by its names too, once counted), so a
     * user can tell the count is in messages. */
    for (size_t i = 0; spool_path(c->spool, i); i++)
        if (*spool_layout(c->spool, i)) {
            fprintf(stderr, "mailsoak: server.spool_dir: %s: %s, counted in messages\n", spool_path(c->spool, i),
                    spool_layout(c->spool, i));
            probe_eventf(add_event, c, c->t0, "spool", "%s: %s", spool_path(c->spool, i), spool_layout(c->spool, i));
        }
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

struct collector *collector_start(const struct tested_server *cfg, uint64_t t0_ns, char *err, size_t errlen)
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

void collector_rescan_logs(struct collector *c, logwatch_rescan_fn fn, void *ctx)
{
    if (c && c->lw && c->stopped)
        logwatch_rescan(c->lw, fn, ctx);
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
    dbmon_free(c->db);
    free(c->hits_scratch);
    for (size_t i = 0; i < c->nlines; i++)
        free(c->lines[i].line);
    free(c->lines);
    free(c->lines_per_class);
    series_free(c->series);
    probe_events_free(&c->early);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* ------------------------------------------------------------------------------ */
/* What was measured, as plain data: cut from the series */

struct series *collector_series(struct collector *c)
{
    return c && c->active ? c->series : NULL;
}

void collector_now(struct collector *c, struct series_now *out)
{
    series_now(collector_series(c), out);
}

void collector_summary(struct collector *c, struct probe_summary *out)
{
    series_summary(collector_series(c), c ? c->t0 : 0, out);
}

void collector_interval(struct collector *c, uint64_t from_ns, uint64_t to_ns, struct probe_interval *out)
{
    series_interval(collector_series(c), from_ns, to_ns, out);
}

void collector_events(struct collector *c, struct probe_events *out)
{
    series_events(c ? c->series : NULL, c ? c->t0 : 0, out);
}
