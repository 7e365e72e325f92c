/* run: the controller thread of `mailsoak run`. It sets the run up, moves it
 * through its phases (send, drain, sweep, stop), carries out what the sweep's
 * settle rule decides (verdict/sweep.c) with the server's queue read against the
 * ledger (verdict/reconcile.c), takes the workers' interval snapshots (formatted by
 * result/interval_output.c), judges the totals (verdict/judge.h) and hands them to the
 * writers (result/run_table.c, result/run_json.c), as plain data. A first SIGINT or SIGTERM only sets the stop flag: the
 * controller notices within 100 ms and ends the run in order, its report written;
 * a second one exits at once. The phases (when each ends, the sweep's passes) are
 * run/phase.c's.
 * run_soak is five steps over one struct controller, which owns everything:
 * soak_setup, soak_start, soak_loop, soak_finish, and soak_free whatever the step
 * it stopped at. setup.c makes what the workers share. */
#include "run/run.h"

#include "run/controller.h"
#include "run/phase.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "settings/config.h"
#include "preflight/check.h"
#include "probe/spool.h"
#include "run/embedded.h"
#include "run/fill_file.h"
#include "run/examples.h"
#include "result/interval_output.h"
#include "run/ladder_result.h"
#include "run/metrics.h"
#include "result/ledger_csv.h"
#include "result/run_json.h"
#include "result/run_table.h"
#include "run/result_copy.h"
#include "run/setup.h"
#include "run/sources.h"
#include "lib/alloc.h"
#include "lib/exitcodes.h"
#include "lib/json.h"
#include "verdict/judge.h"
#include "verdict/reconcile.h"
#include "verdict/sweep.h"

/* One of the project's three mutable globals (DEVELOPERS.md, "Rules the code
 * keeps"): a signal handler reaches nothing else. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    if (stop_signal)
        _exit(MS_EXIT_SIGNAL + sig);    /* a second signal: out at once */
    stop_signal = sig;
}

static const char *const phase_names[] = { "send", "drain", "sweep", "stop" };
/* the fill's run: sending, waiting for the server, listing every mailbox */
static const char *const fill_phase_names[] = { "fill", "fill", "verify", "stop" };


static void counters_add(struct counters *a, const struct counters *b)
{
    uint64_t *x = (uint64_t *)a;
    const uint64_t *y = (const uint64_t *)b;
    for (size_t i = 0; i < sizeof *a / sizeof(uint64_t); i++)
        x[i] += y[i];
}

/* The timeline's entries go to an unlinked temporary file while the run goes on, so
 * a long soak does not hold its past intervals (their histograms are most of an
 * entry) in memory; they come back when the result is built. Back in memory, in
 * order: the entries spilled so far; the spill ends there (a failed write too). */
static void timeline_unspill(struct controller *ct)
{
    if (!ct->tl_spill)
        return;
    char *line = NULL;
    size_t cap = 0;
    rewind(ct->tl_spill);
    while (getline(&line, &cap, ct->tl_spill) > 0) {
        json_t *e = json_loads(line, 0, NULL);
        if (e)
            json_array_append_new(ct->timeline, e);
    }
    free(line);
    fclose(ct->tl_spill);
    ct->tl_spill = NULL;
}

static void timeline_add(struct controller *ct, json_t *e)
{
    if (ct->tl_spill) {
        fseek(ct->tl_spill, 0, SEEK_END);
        if (json_dumpf(e, ct->tl_spill, JSON_COMPACT) == 0 && fputc('\n', ct->tl_spill) != EOF &&
            fflush(ct->tl_spill) == 0) {
            json_decref(e);
            return;
        }
        timeline_unspill(ct);        /* a full disk: from now on in memory (a cut line is skipped) */
    }
    json_array_append_new(ct->timeline, e);
}

/* Asks every worker for a snapshot and merges what arrives within a second. */
static void interval(struct controller *ct, int phase, int live)
{
    struct run *r = ct->run;
    unsigned want = ++ct->snap_seq;
    for (unsigned i = 0; i < ct->nw; i++)
        atomic_store_explicit(&ct->w[i].snap_want, want, memory_order_release);
    for (int tries = 0; tries < 100; tries++) {
        unsigned ready = 0;
        for (unsigned i = 0; i < ct->nw; i++)
            ready += atomic_load_explicit(&ct->w[i].snap_done, memory_order_acquire) == want;
        if (ready == ct->nw)
            break;
        for (unsigned i = 0; i < ct->nw; i++)
            loop_wake(ct->w[i].loop);
        usleep(10000);
    }
    uint64_t now = mono_ns();
    struct counters c = { 0 };
    struct hist *lat = ct->lat;
    unsigned nerr = 0;
    struct err_count err[ERR_CLASSES_MAX];
    for (unsigned k = 0; k < LAT_COUNT; k++)
        hist_reset(&lat[k]);
    for (unsigned i = 0; i < ct->nw; i++) {
        struct worker *w = &ct->w[i];
        if (atomic_load_explicit(&w->snap_done, memory_order_acquire) != want)
            continue;                /* a stuck worker: its counts arrive next time */
        counters_add(&c, &w->snap.c);
        for (unsigned k = 0; k < LAT_COUNT; k++)
            hist_merge(&lat[k], &w->snap.lat[k]);
        errs_merge(err, &nerr, w->snap.err, w->snap.nerr);
    }
    /* this interval's errors by class: the classes that grew since the last one */
    struct err_count *derr = xcalloc(nerr ? nerr : 1, sizeof *derr);
    unsigned nderr = 0;
    for (unsigned i = 0; i < nerr; i++) {
        uint64_t before = 0;
        for (unsigned j = 0; j < ct->prev_nerr; j++)
            if (!strcmp(ct->prev_err[j].name, err[i].name))
                before = ct->prev_err[j].count;
        if (err[i].count > before) {
            derr[nderr] = err[i];
            derr[nderr++].count -= before;
        }
    }
    struct probe_interval iv;
    sources_interval(ct->sources, ct->prev_t, now, &iv);
    struct interval_view v = {
        .t = (double)(now - r->t0) / 1e9, .dt = (double)(now - ct->prev_t) / 1e9,
        .phase = (ct->fill ? fill_phase_names : phase_names)[phase],
        .c = &c, .prev = &ct->prev, .dsent = c.sent - ct->prev.sent, .dread = c.read - ct->prev.read,
        .derr = c.errors - ct->prev.errors, .err = derr, .nerr = nderr, .lat = lat, .srv = &iv,
        .unread = atomic_load(&r->ledger.owed_total),
        .stage = ct->cfg->profile.n && !ct->fill ? stage_clock_at(&r->stages, ct->prev_t - r->t0) : -1,
    };
    timeline_add(ct, interval_json(&v));
    if (!strcmp(v.phase, "send"))
        ct->last_send = (struct send_end){ .has = 1, .unread = (uint64_t)v.unread,
                                           .queued = iv.has.active && iv.has.spool ? (long long)iv.to.spool : -1 };
    probe_interval_free(&iv);
    free(derr);
    struct series_now cn;
    sources_now(ct->sources, &cn);
    if (live) {
        if (ct->fill) {              /* the fill's progress */
            char a[16], b[16], n[16];
            fprintf(stderr, "[%6.0fs %-6s] filled %s of %s (%.0f/s)  verified %s  errors %llu  conns %llu\n", v.t,
                    v.phase, fmt_count(a, sizeof a, (double)c.sent), fmt_count(n, sizeof n, (double)r->fill_total),
                    v.dt > 0 ? (double)v.dsent / v.dt : 0, fmt_count(b, sizeof b, (double)c.read),
                    (unsigned long long)c.errors, (unsigned long long)c.conns_open);
        } else {
            interval_line(stderr, &v, &cn);
        }
    }
    struct verdict_window *win = &ct->res->window;
    if (!ct->fill && phase == PH_SEND && cn.has.spool) {  /* the queue's growth over the send window */
        if (!win->has_spool) {
            win->has_spool = 1;
            win->spool_t0 = v.t;
            win->spool_first = cn.spool;
        }
        win->spool_t1 = v.t;
        win->spool_last = cn.spool;
    }
    if (!ct->fill && phase == PH_SEND) {  /* the backlog, for "kept up" */
        double iv_s = (double)ct->cfg->interval / 1e9;
        struct verdict_sample ks = {
            .t = v.t, .unread = (double)(v.unread > 0 ? v.unread : 0), .has_spool = cn.has.spool,
            .has_store = cn.has.store, .spool = (double)cn.spool, .store = (double)cn.store_messages,
            .sent = c.sent, .visits = c.pop3_sessions + c.idle_syncs, .left_behind = c.left_behind, .empty_visits = c.empty_visits,
            .full_visits = c.full_visits,
            .polls = c.polls, .polls_late = c.polls_late,
            .delivery_ms = lat[LAT_DELIVERY].count ? (double)hist_percentile(&lat[LAT_DELIVERY], 50) / 1e6 : -1,
        };
        const struct stage_clock *pr = &r->stages;
        win->walk_s = (double)ct->cfg->server.walk_interval / 1e9;
        win->queue_s = (double)ct->cfg->server.queue_interval / 1e9;
        verdict_window_sample(win, &ks, (pr->plan->n ? 0 : (double)ct->cfg->ramp / 1e9) + iv_s, iv_s / 2);
        /* a stage that runs out its time is judged on the samples up to its end, this one's too */
        run_stage_interval(ct, now - r->t0, &v, &ks);
        /* a profile: judged on its last stage (that ran), the load the run ends at */
        win->from_s = pr->plan->n ? (double)stage_clock_start(pr, stage_clock_last(pr)) / 1e9 + iv_s : 0;
    }
    ct->prev = c;
    ct->prev_nerr = nerr;
    memcpy(ct->prev_err, err, sizeof err);
    ct->prev_t = now;
}

/* --metrics: the figures as of the interval just taken (ct->prev, ct->prev_err,
 * ct->lat), with the ledger's outcomes so far; phase is the one the run is in now. */
static void publish_metrics(struct controller *ct, int phase)
{
    struct run *r = ct->run;
    if (!ct->metrics)
        return;
    for (unsigned k = 0; k < LAT_COUNT; k++)
        hist_merge(&ct->lat_cum[k], &ct->lat[k]);
    struct ledger_outcome lo;
    ledger_outcome(&r->ledger, &lo);     /* atomic loads only: safe while readers mark */
    struct metrics_view v = {
        .run_id = r->run_id, .label = run_label(r->cfg), .phase = phase_names[phase],
        .elapsed_s = (double)(mono_ns() - r->t0) / 1e9, .c = &ct->prev, .err = ct->prev_err,
        .nerr = ct->prev_nerr, .lat = ct->lat_cum, .lo = &lo, .unread = atomic_load(&r->ledger.owed_total),
        .ledger_held = ledger_held(&r->ledger), .ledger_compacted = r->ledger.settled,
        .readers = r->cfg->reader_protocol == READERS_IMAP ? "imap" : NULL,
    };
    metrics_publish(ct->metrics, &v);
}

static void merge_totals(struct run_result *res, struct worker *w, unsigned nw)
{
    for (unsigned i = 0; i < nw; i++) {
        for (unsigned x = 0; x < w[i].st.corrupt.n; x++) {
            if (res->corrupt.n < ERR_EXAMPLES_MAX)
                res->corrupt_entry[res->corrupt.n] = w[i].st.corrupt_entry[x];
            stats_example(&res->corrupt, w[i].st.max_examples, "%s", w[i].st.corrupt.text[x]);
        }
        counters_add(&res->c, &w[i].st.c);
        for (unsigned k = 0; k < LAT_COUNT; k++)
            hist_merge(&res->lat[k], &w[i].st.total[k]);
        for (unsigned e = 0; e < w[i].st.nerr; e++) {
            unsigned j = errs_add(res->err, &res->nerr, w[i].st.err[e].name, w[i].st.err[e].count);
            for (unsigned x = 0; x < w[i].st.ex[e].n; x++)
                stats_example(&res->ex[j], w[i].st.max_examples, "%s", w[i].st.ex[e].text[x]);
        }
    }
}

/* The fill's plan: every mailbox's count drawn from fill.messages (from the seed),
 * its messages interleaved round robin, so consecutive ones go to different
 * mailboxes; and the known table its verification fills. */
static int fill_setup(struct controller *ct)
{
    struct run *r = ct->run;
    const struct config *cfg = ct->cfg;
    size_t n = r->users.n;
    uint32_t *count = xcalloc(n ? n : 1, sizeof *count);
    struct rng g;
    rng_seed(&g, r->seed ^ 0x66696c6c00000000ull);
    uint64_t total = 0, most = 0;
    for (size_t u = 0; u < n; u++) {
        count[u] = (uint32_t)rng_range(&g, cfg->fill_messages.lo, cfg->fill_messages.hi);
        total += count[u];
        most = count[u] > most ? count[u] : most;
        ct->fill_sum->mailboxes += count[u] > 0;
    }
    ct->plan = xcalloc(total ? total : 1, sizeof *ct->plan);
    uint64_t k = 0;
    for (uint64_t round = 0; round < most; round++)
        for (size_t u = 0; u < n; u++)
            if (count[u] > round)
                ct->plan[k++] = (uint32_t)u;
    free(count);
    r->fill_mode = 1;
    r->fill_plan = ct->plan;
    r->fill_total = total;
    ct->fill_sum->planned = total;
    memcpy(ct->fill_sum->run_id, r->run_id, sizeof ct->fill_sum->run_id);
    if (known_init(ct->known, n) < 0) {
        fprintf(stderr, "mailsoak: out of memory\n");
        return 1;
    }
    r->known = ct->known;
    return 0;
}

/* The gates and the verdict (verdict/judge.h), from what the run measured; the
 * exit status a run that wrote its results and was not interrupted gives. */
/* smtp.profile's stages: the ledger's proof of the mail accepted during each; its
 * spikes: the stages on the run's clock, the send window's samples, and the
 * ledger's proof of the mail accepted during each spike. */
static void recovery_measure(struct run_result *res, const struct ledger *l, const struct stage_clock *clk)
{
    const struct rate_stages *pr = &res->cfg->profile;
    struct recovery_stage st[RATE_STAGES_MAX];
    for (unsigned k = 0; k < pr->n; k++) {
        /* the stages as they ran (smtp.profile_end = decided ends some early) */
        double t0 = (double)stage_clock_start(clk, k) / 1e9;
        st[k] = (struct recovery_stage){ t0, t0 + (double)stage_clock_dur(clk, k) / 1e9, pr->rate[k] };
        res->stage_span[k][0] = st[k].t0;
        res->stage_span[k][1] = st[k].t1;
        /* the last stage that ran keeps what its last moments accepted, however late */
        recovery_count(l, st[k].t0, k == stage_clock_last(clk) ? INFINITY : st[k].t1, &res->stage_proof[k]);
    }
    res->nstages = pr->n;
    if (pr->n < 3)
        return;
    const struct verdict_window *w = &res->window;
    struct recovery_point *p = xcalloc(w->nkept + 1, sizeof *p);
    for (size_t i = 0; i < w->nkept; i++)
        p[i] = (struct recovery_point){ w->kept[i].t, w->kept[i].unread, w->kept[i].delivery_ms };
    res->nspikes = recovery_find(st, pr->n, p, (unsigned)w->nkept, res->spikes, RECOVERY_MAX);
    free(p);
    for (unsigned i = 0; i < res->nspikes; i++)
        recovery_count(l, res->spikes[i].start_s, res->spikes[i].end_s, &res->spikes[i].proof);
}

static void judge_run(struct run_result *res, const struct run *r)
{
    const struct config *cfg = res->cfg;
    struct judge_figures f = {
        .c = &res->c, .lo = &res->lo, .lat = res->lat, .err = res->err, .nerr = res->nerr,
        .settled = r->ledger.swept ? res->settled : -1, .swept = r->ledger.swept,
        .interrupted = res->interrupted, .senders = cfg->senders, .readers = cfg->readers + r->imap_own,
        .elapsed_s = res->elapsed_s, .send = res->window, .rate = cfg->rate,
        .sweep_timeout_s = (double)cfg->sweep_timeout / 1e9, .settle_s = (double)cfg->settle / 1e9,
        .held = res->c.late_busy + res->c.late_engine + res->arrivals_held,
        .due = res->c.arrivals + res->arrivals_owed, .growth_share = cfg->capacity.queue_growth,
        .spikes = res->spikes, .nspikes = res->nspikes,
        .signalled = res->interrupted, .signal = stop_signal, .ladder_failures = res->ladder.failures,
    };
    /* what the run returns, decided before the table says it */
    res->exit_status = judge(&res->gates, &f, &res->judged, &res->verdict);
}

/* Setup: the settings checked, what the workers share, the workers, the clock's
 * start, the collector and --metrics. 0, 1 or 2 (bad settings), with the reason
 * printed; what was set up stays for soak_free. */
static int soak_setup(struct controller *ct, const struct config *cfg)
{
    char err[400];
    int rc;
    ct->cfg = cfg;
    ct->run = xcalloc(1, sizeof *ct->run);
    ct->res = xcalloc(1, sizeof *ct->res);
    struct run *r = ct->run;
    struct run_result *res = ct->res;
    unsigned nw = (unsigned)(cfg->workers ? cfg->workers : (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
    if (nw < 1)
        nw = 1;
    if (config_check(cfg, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak: %s\n", err);
        return MS_EXIT_SETUP;
    }
    if (gates_from_config(cfg, &res->gates, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak: %s\n", err);
        return MS_EXIT_SETUP;
    }
    if ((rc = setup_run(r, cfg, nw)) != 0)
        return rc;
    if (ct->fill && (rc = fill_setup(ct)) != 0)
        return rc;
    if (ct->fill_loaded) {
        if (fill_read_json(cfg->fill_from, ct->fill_loaded, &r->users, ct->known, err, sizeof err) < 0) {
            fprintf(stderr, "mailsoak: fill.from: %s\n", err);
            return 2;
        }
        ct->fill_done = ct->fill_loaded;
    }
    if (ct->fill_done) {
        r->known = ct->known;
        memcpy(r->fill_run_id, ct->fill_done->run_id, sizeof r->fill_run_id);
    }
    atomic_store(&r->send_budget, (int64_t)cfg->messages);

    ct->w = xcalloc(nw, sizeof *ct->w);
    ct->nw = nw;
    ct->timeline = json_array();
    ct->tl_spill = tmpfile();        /* NULL: kept in memory */
    ct->lat = xcalloc(LAT_COUNT, sizeof *ct->lat);
    ct->lat_cum = xcalloc(LAT_COUNT, sizeof *ct->lat_cum);
    r->t0 = mono_ns();
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    r->t0_unix_ms = (uint64_t)rt.tv_sec * 1000 + (uint64_t)rt.tv_nsec / 1000000;
    /* The server side is sampled on its own thread, on the same clock. */
    ct->sources = sources_start(cfg, r->t0, err, sizeof err);
    if (!ct->sources) {
        fprintf(stderr, "mailsoak: %s\n", err);
        return MS_EXIT_SETUP;
    }
    /* The queue read per message, in this thread: an instance apart from the
     * collector's, which counts it on its own thread. */
    if (cfg->server.spool_dirs.n)
        ct->queue = spool_new(&cfg->server, err, sizeof err);
    if (cfg->metrics[0]) {
        if (!(ct->metrics = metrics_start(cfg->metrics, cfg->metrics_token, err, sizeof err))) {
            fprintf(stderr, "mailsoak: run.metrics: %s\n", err);
            return MS_EXIT_SETUP;
        }
        fprintf(stderr, "mailsoak: metrics on http://%s/metrics\n", metrics_address(ct->metrics));
        publish_metrics(ct, PH_SEND);   /* zeros until the first interval */
    }
    struct tm tm;
    gmtime_r(&rt.tv_sec, &tm);
    strftime(res->start_time, sizeof res->start_time, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* the readers: the drain readers, and a client per idle user (imap.models) */
    uint64_t nr = cfg->readers + r->imap_own;
    for (unsigned i = 0; i < nw; i++) {
        unsigned ns = (unsigned)(cfg->senders / nw + (i < cfg->senders % nw));
        unsigned np = (unsigned)(nr / nw + (i < nr % nw));
        unsigned sb = (unsigned)(cfg->senders / nw * i + (i < cfg->senders % nw ? i : cfg->senders % nw));
        unsigned pb = (unsigned)(nr / nw * i + (i < nr % nw ? i : nr % nw));
        if (worker_init(&ct->w[i], i, r, ns, np, sb, pb) < 0) {
            fprintf(stderr, "mailsoak: cannot set up worker %u\n", i);
            return MS_EXIT_FAILURE;
        }
    }
    return 0;
}

/* Start: the signals become the controller's, the worker threads run. A thread
 * that cannot start ends the run at once (with what the others did, if any). */
static void soak_start(struct controller *ct)
{
    struct run *r = ct->run;
    /* Workers must not take the signals: the controller owns the run's end. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    signal(SIGPIPE, SIG_IGN);
    ct->prev_t = r->t0;
    for (; ct->started < ct->nw; ct->started++)
        if (pthread_create(&ct->w[ct->started].thread, NULL, worker_main, &ct->w[ct->started]))
            break;
    pthread_sigmask(SIG_SETMASK, &old, NULL);

    ct->phase = PH_SEND;
    ct->phase_start = r->t0;
    ct->next_iv = r->t0 + ct->cfg->interval;
    if (ct->started < ct->nw) {
        fprintf(stderr, "mailsoak: cannot start worker threads\n");
        ct->phase = PH_STOP;
        run_set_phase(r, ct, PH_STOP);
    }
}

/* How long the controller sleeps before deciding again: while only the clock can
 * end the send phase (no messages = N budget), until that end or the next interval,
 * else 20 ms (the drain and the sweep watch counters, and an interval under 20 ms
 * gets an entry every 20 ms as before); never over 100 ms, so a stop signal that
 * came just before the sleep is still noticed within 100 ms. */
static uint64_t nap_ns(const struct controller *ct, uint64_t now)
{
    const struct config *cfg = ct->cfg;
    if (ct->phase != PH_SEND || (cfg->messages && cfg->senders) || cfg->interval < 20 * NS_PER_MS)
        return 20 * NS_PER_MS;
    uint64_t until = ct->run->t0 + run_send_ns(ct->run);
    if (ct->next_iv < until)
        until = ct->next_iv;
    uint64_t nap = until > now ? until - now : 0;
    return nap < 100 * NS_PER_MS ? nap : 100 * NS_PER_MS;
}

/* Whether the ledger may drop the entries of messages delivered exactly once
 * (ledger_compact): not when what follows needs every entry: the fill's bytes and
 * its CSV, the size ladder's rungs, a profile's stages and spikes counted by
 * acceptance time. */
static int compacts(const struct controller *ct)
{
    return !ct->fill && !ct->run->fill_mode && !ct->run->ladder && !ct->cfg->profile.n;
}

/* The run window: the next phase is decided after each nap; every interval (and at
 * each change of phase) the workers' snapshots become a timeline entry. */
static void soak_loop(struct controller *ct)
{
    struct run *r = ct->run;
    while (ct->phase != PH_STOP) {
        usleep((useconds_t)(nap_ns(ct, mono_ns()) / 1000));
        uint64_t now = mono_ns();
        int next = stop_signal ? PH_STOP : run_next_phase(ct, ct->phase, now, ct->phase_start);
        if (stop_signal && !ct->res->interrupted) {
            ct->res->interrupted = 1;
            fprintf(stderr, "mailsoak: %s: ending the run early\n", strsignal(stop_signal));
        }
        if (next == ct->phase && now < ct->next_iv)
            continue;
        if (ct->phase == PH_SEND && next != PH_SEND)
            ct->send_end = now;
        if (next == PH_STOP) {
            ct->stopped_in_sweep = ct->phase == PH_SWEEP;
            sources_stop(ct->sources);       /* its last sample belongs in the last interval */
        }
        if (next != ct->phase || now >= ct->next_iv) {
            interval(ct, ct->phase, 1);
            if (compacts(ct))
                ledger_compact(&r->ledger);
            publish_metrics(ct, next);
            ct->next_iv = now + ct->cfg->interval;
            /* a stage decided behind ended the send window with this interval
             * (smtp.profile_end = decided): no sliver of a send interval after it */
            if (ct->phase == PH_SEND && next == PH_SEND &&
                (next = run_next_phase(ct, PH_SEND, mono_ns(), ct->phase_start)) != PH_SEND)
                ct->send_end = now;
        }
        if (ct->phase == PH_SEND && next != PH_SEND) {   /* the send window, as of its last interval */
            ct->res->window.seconds = (double)(now - r->t0) / 1e9;
            ct->res->window.accepted = ct->prev.sent;
            ct->res->window.read = ct->prev.read;
        }
        if (next != ct->phase) {
            /* For the senders' sake, the drain starts only after the switch: a
             * sender mid-transaction finishes it and QUITs. */
            ct->phase = next;
            ct->phase_start = now;
            run_set_phase(r, ct, ct->phase);
        }
    }
    if (!ct->send_end)
        ct->send_end = mono_ns();
}

struct fill_bytes {
    const struct ledger *l;
    uint64_t bytes;
};

static void add_bytes(void *arg, uint64_t seq, const struct ledger_entry *e)
{
    struct fill_bytes *b = arg;
    enum pending_reason why;
    (void)seq;
    if (ledger_entry_outcome(b->l, e, &why) <= OUTCOME_PENDING)
        b->bytes += e->size;
}

/* The fill's end: its summary, printed, and its ledger written. 0, or 1 when the
 * ledger could not be written. */
static int fill_finish(struct controller *ct)
{
    struct run_result *res = ct->res;
    struct fill_summary *fs = ct->fill_sum;
    const struct ledger_outcome *lo = &res->lo;
    char err[400];
    struct fill_bytes b = { &ct->run->ledger, 0 };
    ledger_each(&ct->run->ledger, add_bytes, &b);
    fs->on = 1;
    fs->accepted = lo->accepted;
    fs->verified = lo->delivered;
    fs->duplicated = lo->duplicated;
    fs->missing = lo->lost;
    fs->unverified = lo->pending + lo->corrupted;
    fs->bytes = b.bytes;
    fs->deferrals = res->c.deferrals;
    fs->errors = res->c.errors;
    fs->foreign = res->c.foreign;
    fs->elapsed_s = res->elapsed_s;
    fs->settled = res->settled;
    fill_table(stderr, fs);
    result_copy_run(res, ct->run, ct->sources);
    if (ct->cfg->fill_ledger_csv[0] &&
        write_fill_csv(ct->cfg->fill_ledger_csv, res, &ct->run->ledger, &ct->run->users, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak: %s\n", err);
        return 1;
    }
    if (ct->fill_out && fill_write_json(ct->fill_out, fs, &ct->run->users, ct->known, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak: %s\n", err);
        return 1;
    }
    return res->interrupted ? MS_EXIT_SIGNAL + stop_signal : 0;
}

/* Finish: the workers joined, their totals merged, the verdicts and the gates, then
 * the table, the ledger CSV and the JSON. 1 (a file not written), else 128 + the
 * signal, else the gates' status: 0, 4 (integrity) or 5 (quality of service). */
static int soak_finish(struct controller *ct)
{
    const struct config *cfg = ct->cfg;
    struct run *r = ct->run;
    struct run_result *res = ct->res;
    char err[400];
    for (; ct->started > 0; ct->started--)
        pthread_join(ct->w[ct->started - 1].thread, NULL);
    r->ledger.final = 1;
    if (compacts(ct))                /* every owner stopped: what was dropped is freed, its late marks kept */
        ledger_compact(&r->ledger);
    for (unsigned i = 0; i < ct->nw; i++)
        res->retry_left += retryq_len(&ct->w[i].env.retry);

    res->cfg = cfg;
    res->duration_s = (double)(ct->send_end - r->t0) / 1e9;
    res->elapsed_s = (double)(mono_ns() - r->t0) / 1e9;
    timeline_unspill(ct);
    res->timeline = json_incref(ct->timeline);
    res->send_end = ct->last_send;
    merge_totals(res, ct->w, ct->nw);
    /* the schedule's arrivals that never started: due before the end of sending,
     * and of those, due before it less the slack a late one gets (drawn on copies
     * of the pacers) */
    for (unsigned i = 0; cfg->rate > 0 && i < ct->nw; i++) {
        const struct pacer *p = &ct->w[i].env.msg_pacer;
        res->arrivals_owed += pacer_owed(p, ct->send_end, 10000000);
        if (ct->send_end > r->t0 + cfg->late_after)
            res->arrivals_held += pacer_owed(p, ct->send_end - cfg->late_after, 10000000);
    }
    /* The verdicts: a pass that began after the server settled proves what it did
     * not find. A sweep cut short by its time proves with what it read of such a
     * pass; a signal proves nothing. */
    struct sweep_seen seen = run_sweep_seen(ct, mono_ns());
    r->ledger.proof_pass = sweep_conclude(&ct->sw, &seen, ct->stopped_in_sweep && !res->interrupted);
    /* What the queue still holds is pending_queued. With a proving pass the marks
     * since it began must stay (they keep what reached a mailbox after its visit
     * from being lost); without one nothing can be lost, and a fresh reading makes
     * pending_queued exactly what the queue holds at the end. */
    reconcile_queue(ct->queue, r, !r->ledger.proof_pass);
    res->settled = r->ledger.proof_pass != 0;
    res->sweep_passes = atomic_load(&r->sweep_pass);
    ledger_outcome(&r->ledger, &res->lo);
    if (ct->fill)
        return fill_finish(ct);
    if (ct->fill_done)
        res->fill = *ct->fill_done;
    examples_collect(res, r, ct->sources);  /* and their trails in the server's logs */
    if (r->ladder)
        ladder_result(res, r);
    recovery_measure(res, &r->ledger, &r->stages);
    judge_run(res, r);
    result_copy_run(res, r, ct->sources);   /* from here on the writers read res alone */
    run_result_table(stdout, res);
    int rc = 0;
    if (cfg->ledger_csv[0] && write_ledger_csv(cfg->ledger_csv, res, &r->ledger, &r->users, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak: %s\n", err);
        rc = MS_EXIT_FAILURE;
    }
    if (cfg->json[0]) {
        json_t *root = run_result_json(res);
        if (write_json_atomic(cfg->json, root, err, sizeof err) < 0) {
            fprintf(stderr, "mailsoak: %s\n", err);
            rc = MS_EXIT_FAILURE;
        }
        json_decref(root);
    }
    return rc ? rc : res->exit_status;    /* judge_run's, which the table printed */
}

/* Everything the controller owns, whichever step it reached. */
static void soak_free(struct controller *ct)
{
    struct run *r = ct->run;
    /* workers may be partly set up on an error path: worker_free copes */
    for (unsigned i = 0; ct->w && i < ct->nw; i++)
        worker_free(&ct->w[i]);
    free(ct->w);
    free(ct->plan);
    stage_end_free(&ct->stage_end);
    free(ct->lat);
    metrics_stop(ct->metrics);
    free(ct->lat_cum);
    sources_free(ct->sources);
    spool_free(ct->queue);
    if (ct->tl_spill)
        fclose(ct->tl_spill);
    json_decref(ct->timeline);
    run_free(r);
    if (ct->res)
        run_result_free(ct->res);
    free(ct->res);
}

static int run_controller(struct controller *ct, const struct config *cfg)
{
    int rc = soak_setup(ct, cfg);
    if (rc == 0) {
        soak_start(ct);
        soak_loop(ct);
        rc = soak_finish(ct);
    }
    soak_free(ct);
    return rc;
}

/* The fill (fill.messages) as a run of its own before the window, with the
 * settings of the soak but for what the fill decides: its senders, one recipient
 * per message, no rates, 4xx retried after 1 s to 30 s (the tester's own
 * preparation must not leave a mailbox short), its readers only verifying, and
 * nothing written but its ledger. */
static int run_fill(const struct config *cfg, struct known *known, struct fill_summary *fs, const char *out)
{
    struct config fc = *cfg;         /* shallow: strings and lists are cfg's, never freed through fc */
    char empty[] = "";               /* fc lives no longer than this call */
    fc.senders = cfg->fill_senders;
    fc.readers = cfg->readers ? cfg->readers : 10;
    fc.messages = 0;
    fc.duration = 100 * 86400 * NS_PER_S;   /* the plan ends the sending */
    fc.rate = fc.conn_rate = 0;
    fc.ramp = fc.think = 0;
    fc.rcpts = (struct range){ 1, 1 };
    fc.smtp_retry = 1;
    fc.retry_min = 1 * NS_PER_S;
    fc.retry_max = 30 * NS_PER_S;
    fc.retry_lifetime = cfg->drain > 120 * NS_PER_S ? cfg->drain : 120 * NS_PER_S;
    fc.start_after = 0;
    fc.sweep = 1;
    /* the verification lists every filled message, which takes longer than a
     * soak's sweep; it ends as soon as everything is verified, or proven missing */
    if (fc.sweep_timeout < 600 * NS_PER_S)
        fc.sweep_timeout = 600 * NS_PER_S;
    fc.json = fc.ledger_csv = fc.metrics = empty;
    struct controller ct = { .fill = 1, .known = known, .fill_sum = fs, .fill_out = out };
    fprintf(stderr, "mailsoak: filling every mailbox with %llu-%llu messages before the window\n",
            (unsigned long long)cfg->fill_messages.lo, (unsigned long long)cfg->fill_messages.hi);
    return run_controller(&ct, &fc);
}

static int run_soak(const struct config *cfg)
{
    struct known known = { 0 };
    struct fill_summary fs = { 0 };
    int rc = 0;
    if (cfg->fill_messages.hi) {
        rc = run_fill(cfg, &known, &fs, cfg->fill_only && cfg->json[0] ? cfg->json : NULL);
        int exact = fs.on && fs.verified == fs.planned && fs.accepted == fs.planned;
        if (rc == 0 && !exact)
            fprintf(stderr, "mailsoak: the fill is not proven exact (above)%s\n",
                    cfg->fill_only ? "" : "; the soak goes on, its verdicts are its own messages'");
        if (rc == 0 && cfg->fill_only && !exact)
            rc = 1;
        if (rc != 0 || cfg->fill_only || stop_signal) {
            known_free(&known);
            return rc ? rc : stop_signal ? MS_EXIT_SIGNAL + stop_signal : 0;
        }
    }
    /* the soak: after its own fill, or leaving an earlier one's (fill.from) */
    struct controller ct = { .known = fs.on || cfg->fill_from[0] ? &known : NULL, .fill_done = fs.on ? &fs : NULL,
                             .fill_loaded = cfg->fill_from[0] ? &fs : NULL };
    rc = run_controller(&ct, cfg);
    known_free(&known);
    return rc;
}

int run_configured(struct config *cfg, int demo_duration)
{
    struct embedded demo = { 0 };
    int rc = 0;
    /* From here on SIGINT and SIGTERM end the run in order, the preflight too
     * (which takes up to 15 s against a server that does not answer). */
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    char err[600];
    if (config_check_limits(cfg, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak: %s\n", err);
        return MS_EXIT_SETUP;
    }
    /* no target: the demo's reference server, read over POP3 or IMAP */
    if (!cfg->smtp_targets.n && !cfg->pop3_targets.n && !cfg->imap_targets.n &&
        embedded_start(cfg, &demo, demo_duration) < 0)
        rc = MS_EXIT_FAILURE;
    /* the rules between keys before the preflight: a model not built yet is
     * refused, never checked against a server and then ignored */
    if (rc == 0 && config_check(cfg, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak: %s\n", err);
        rc = MS_EXIT_SETUP;
    }
    if (rc == 0 && cfg->check) {
        /* an independent look (libcurl) at every target before any load: a typo
         * in a port or a password is one line here, not ten minutes of errors */
        int c = check_config(cfg, 3, stderr, &stop_signal);
        if (stop_signal) {
            fprintf(stderr, "mailsoak: %s: interrupted during the preflight check; no load was sent\n",
                    strsignal(stop_signal));
            rc = MS_EXIT_SIGNAL + stop_signal;
        } else if (c != 0) {
            fprintf(stderr, "mailsoak: the preflight check found problems (above); no load was sent. "
                            "Fix them, or skip the check with --no-check.\n");
            rc = MS_EXIT_PREFLIGHT;
        }
    }
    if (rc == 0)
        rc = run_soak(cfg);
    embedded_stop(&demo);
    return rc;
}
