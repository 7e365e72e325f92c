/* cmd_capacity: `mailsoak capacity`, a search over the arrival rate for the highest
 * one a server sustains (SPECmail2001's method, include/capacity/search.h). Each
 * step is a `mailsoak run` of this same program with the command line's settings
 * and the step's own (its rate, open-loop arrivals, a ramp and a steady window, its
 * result file in the search's directory), in a process group of its own so that a
 * terminal's ^C reaches the search only: the search takes SIGINT or SIGTERM with
 * sigtimedwait and passes it on to the step running, which ends in order and writes
 * its result; then the search writes its own (table, JSON, HTML) with the steps
 * done, and exits 128 + N. Before each step it waits for the server's queue
 * ([server] spool_dir) to empty. A step's run is its ramp, its warm-up and its
 * steady window (only the window is judged). What follows a judged step (run it
 * again with more senders, readers or a longer window, stop, or go on) is
 * capacity/rerun.h's; this file runs the processes. */
#include "cmd/cmd_capacity.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyse/results.h"
#include "capacity/output.h"
#include "capacity/rerun.h"
#include "capacity/level.h"
#include "capacity/search.h"
#include "capacity/stair.h"
#include "capacity/stair_judge.h"
#include "capacity/stair_output.h"
#include "capacity/step.h"
#include "lib/alloc.h"
#include "lib/atomicfile.h"
#include "lib/cli.h"
#include "lib/clock.h"
#include "probe/spool.h"
#include "settings/config.h"

/* SIGINT, SIGTERM and SIGCHLD are blocked for the whole search and taken with
 * sigtimedwait: between steps, and while a step runs (its end comes as SIGCHLD), so
 * no handler and no global are needed to pass a signal on to the step. */
static void stop_set(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGCHLD);
}

/* A stop signal already pending (SIGCHLD from an earlier step is dropped), or 0. */
static int pending_stop(void)
{
    sigset_t set;
    stop_set(&set);
    struct timespec zero = { 0, 0 };
    int sig;
    while ((sig = sigtimedwait(&set, NULL, &zero)) == SIGCHLD)
        ;
    return sig > 0 ? sig : 0;
}

static void usage(FILE *f)
{
    fputs("usage: mailsoak capacity [-c FILE]... [--FLAG VALUE]... [--set SECTION.KEY=VALUE]...\n"
          "\n"
          "Finds the highest arrival rate the server sustains, with open-loop Poisson\n"
          "arrivals and SPECmail2001's gates (every command class's p95 within 5 s,\n"
          "delivery's within 60 s, errors under 1 %, nothing lost, duplicated or corrupted)\n"
          "and a backlog that does not grow. By default (capacity.method = staircase): a\n"
          "probe of levels doubling in one run until one falls behind, then runs of\n"
          "rising levels (capacity.level each), each judged while it runs by a\n"
          "sequential test of the backlog and ended once decided (kept up, behind, or\n"
          "open at its end); the capacity is what the server delivered at the highest\n"
          "level that passed below every failure, confirmed at 80 %, 100 % and 120 % of\n"
          "it. capacity.method = steps runs a step per rate instead (a ramp, a warm-up,\n"
          "a steady window; coarse steps, bisection, the same confirmation). Each run is\n"
          "a `mailsoak run` with these settings; the [capacity] keys shape the search.\n"
          "run.json is the search's JSON; every run's result goes to capacity.dir. Exit 0\n"
          "when a capacity was found (and confirmed, when asked), 1 when none was, 6 when\n"
          "it was not confirmed, 2 on bad settings, 128 + N on signal N (the report is\n"
          "written).\n", f);
    config_help(f);
}

/* The steps' directory: capacity.dir, NAME.steps beside run.json, or a new one here;
 * *made: it is new (removed again if no step wrote in it). An error names what the
 * user set. */
static int make_dir(const struct config *cfg, char *dir, size_t n, int *made)
{
    if (cfg->capacity.dir[0])
        snprintf(dir, n, "%s", cfg->capacity.dir);
    else if (cfg->json[0]) {
        snprintf(dir, n, "%s", cfg->json);
        size_t l = strlen(dir);
        if (l > 5 && !strcmp(dir + l - 5, ".json"))
            dir[l - 5] = 0;
        strncat(dir, ".steps", n - strlen(dir) - 1);
    } else {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(dir, n, "mailsoak-capacity-%Y%m%dT%H%M%SZ", &tm);
    }
    *made = mkdir(dir, 0755) == 0;
    if (!*made && errno != EEXIST) {
        if (cfg->capacity.dir[0])
            fprintf(stderr, "mailsoak capacity: capacity.dir: %s: %s\n", dir, strerror(errno));
        else if (cfg->json[0])
            fprintf(stderr, "mailsoak capacity: run.json (--json) %s: its steps' folder %s: %s\n", cfg->json, dir,
                    strerror(errno));
        else
            fprintf(stderr, "mailsoak capacity: the steps' folder %s: %s (set capacity.dir)\n", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* A step's output, whose run could not start: its last lines say why. */
static void say_why(const char *out)
{
    FILE *f = fopen(out, "r");
    if (!f)
        return;
    char lines[4][300], line[300];
    unsigned n = 0;
    while (fgets(line, sizeof line, f))
        if (line[0] != '\n')
            snprintf(lines[n++ % 4], sizeof lines[0], "%s", line);
    fclose(f);
    for (unsigned i = n > 4 ? n - 4 : 0; i < n; i++)
        fprintf(stderr, "  %s%s", lines[i % 4], strchr(lines[i % 4], '\n') ? "" : "\n");
}

struct step_plan {
    unsigned n;                      /* the step's number */
    double rate;
    unsigned senders, readers;
    uint64_t window;                 /* ns: capacity.window, longer when run again unsteady */
    uint64_t interval;               /* ns */
    int check;                       /* the preflight: the first step only */
};

static int run_child(int argc, char **argv, char *const *kv, int k, const char *out, int *stop);

/* Runs one step as `mailsoak run WORDS... --set ...` with its output in out;
 * returns its exit status (128 + N when a signal ended it). A SIGINT or SIGTERM
 * meanwhile is passed on to the step once and kept in *stop. */
static int run_step(const struct config *cfg, int argc, char **argv, const struct step_plan *p, const char *json,
                    const char *out, int *stop)
{
    char kv[16][160];
    int k = 0;
    snprintf(kv[k++], sizeof kv[0], "smtp.rate=%.6g", p->rate);
    snprintf(kv[k++], sizeof kv[0], "smtp.arrivals=%s", cfg->capacity.arrivals ? "exponential" : "constant");
    snprintf(kv[k++], sizeof kv[0], "smtp.ramp=%llums", (unsigned long long)(cfg->capacity.ramp / 1000000));
    snprintf(kv[k++], sizeof kv[0], "run.duration=%llums",
             (unsigned long long)((cfg->capacity.ramp + cfg->capacity.warmup + p->window) / 1000000));
    snprintf(kv[k++], sizeof kv[0], "run.interval=%llums", (unsigned long long)(p->interval / 1000000));
    snprintf(kv[k++], sizeof kv[0], "smtp.senders=%u", p->senders);
    snprintf(kv[k++], sizeof kv[0], "pop3.readers=%u", p->readers);
    snprintf(kv[k++], sizeof kv[0], "pop3.visit=%s", cfg->capacity.visit_owed ? "owed" : "random");
    snprintf(kv[k++], sizeof kv[0], "run.messages=0");
    /* the drain ends as soon as the step's mail is read: a long one costs only the
     * overloaded steps, which must deliver their backlog before the next starts */
    snprintf(kv[k++], sizeof kv[0], "run.drain=%llums", (unsigned long long)(cfg->capacity.drain / 1000000));
    snprintf(kv[k++], sizeof kv[0], "run.check=%s", p->check ? "yes" : "no");
    /* the column's name in compare: the search's label (its steps are repeats of one
     * server), else the step's rate */
    if (cfg->label[0])
        snprintf(kv[k++], sizeof kv[0], "run.label=%.100s", cfg->label);
    else
        snprintf(kv[k++], sizeof kv[0], "run.label=%.6g msg/s", p->rate);
    /* a seed of its own per step, so the steps' Poisson noise is independent, and the
     * search still replays with run.seed */
    snprintf(kv[k++], sizeof kv[0], "run.seed=%llu", (unsigned long long)(cfg->seed ? cfg->seed + p->n : 0));
    if (snprintf(kv[k++], sizeof kv[0], "run.json=%s", json) >= (int)sizeof kv[0])
        return 2;
    char *kvp[16];
    for (int i = 0; i < k; i++)
        kvp[i] = kv[i];
    return run_child(argc, argv, kvp, k, out, stop);
}

/* Runs `mailsoak run WORDS... --set KV...` with its output in out; returns its exit
 * status (128 + N when a signal ended it). A SIGINT or SIGTERM meanwhile is passed
 * on to the run once and kept in *stop. */
static int run_child(int argc, char **argv, char *const *kv, int k, const char *out, int *stop)
{
    char **av = xcalloc((size_t)argc + 2 * (size_t)k + 3, sizeof *av);
    int n = 0;
    av[n++] = "mailsoak";
    av[n++] = "run";
    for (int i = 1; i < argc; i++)
        av[n++] = argv[i];
    for (int i = 0; i < k; i++) {
        av[n++] = "--set";
        av[n++] = kv[i];
    }
    av[n] = NULL;
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "mailsoak capacity: %s: %s\n", out, strerror(errno));
        free(av);
        return 2;
    }
    fflush(NULL);
    sigset_t set, none;
    stop_set(&set);
    sigemptyset(&none);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);               /* a terminal's ^C reaches the search, which passes it on */
        dup2(fd, 1);
        dup2(fd, 2);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execv("/proc/self/exe", av);
        fprintf(stderr, "mailsoak capacity: cannot run a step: %s\n", strerror(errno));
        _exit(2);
    }
    close(fd);
    free(av);
    if (pid < 0) {
        fprintf(stderr, "mailsoak capacity: fork: %s\n", strerror(errno));
        return 2;
    }
    if (*stop)                       /* came before the fork */
        kill(pid, *stop);
    int st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
        struct timespec tick = { 1, 0 };     /* a SIGCHLD wakes it sooner */
        int sig = sigtimedwait(&set, NULL, &tick);
        if ((sig == SIGINT || sig == SIGTERM) && !*stop) {
            *stop = sig;             /* once: a second signal would make the step _exit */
            kill(pid, sig);
        }
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
}

/* Before a step: the server's queue ([server] spool_dir) empty, so that a step does
 * not pay for the backlog of the one before (mail its drain did not see through).
 * Waits at most capacity.drain and says on stderr what is still queued then. */
static void wait_for_queue(const struct config *cfg, struct spool *sp, int *stop)
{
    if (!sp)
        return;
    uint64_t t0 = mono_ns(), n = spool_count(sp);
    if (n)
        fprintf(stderr, "mailsoak capacity: the server's queue holds %llu messages: waiting for it to empty\n",
                (unsigned long long)n);
    while (n && mono_ns() - t0 < cfg->capacity.drain && !*stop) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        struct timespec tick = { 1, 0 };
        int sig = sigtimedwait(&set, NULL, &tick);
        if (sig > 0)
            *stop = sig;
        n = spool_count(sp);
    }
    if (n)
        fprintf(stderr, "mailsoak capacity: the server's queue still holds %llu messages after capacity.drain\n",
                (unsigned long long)n);
}

/* v, raised to lo, then lowered to hi */
static uint64_t within(uint64_t v, uint64_t lo, uint64_t hi)
{
    if (v < lo)
        v = lo;
    return v > hi ? hi : v;
}

/* The search's start, as the outputs print it. */
static void start_time_now(char *buf, size_t n)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static struct step_record *new_step(struct capacity_record *c)
{
    c->steps = grow(c->steps, &c->cap, c->nsteps, 1, sizeof *c->steps);
    struct step_record *st = &c->steps[c->nsteps++];
    memset(st, 0, sizeof *st);
    st->n = (unsigned)c->nsteps;
    return st;
}

static int write_outputs(const struct config *cfg, const struct capacity_record *c)
{
    char err[400];
    int rc = 0;
    capacity_table(stdout, c);
    fflush(stdout);
    if (cfg->json[0]) {
        json_t *root = capacity_json(c);
        if (write_json_atomic(cfg->json, root, err, sizeof err) < 0) {
            fprintf(stderr, "mailsoak capacity: %s\n", err);
            rc = 1;
        }
        json_decref(root);
    }
    if (cfg->capacity.report[0]) {
        struct atomic_file a;
        if (atomic_open(&a, cfg->capacity.report, err, sizeof err) < 0) {
            fprintf(stderr, "mailsoak capacity: %s\n", err);
            return 1;
        }
        capacity_html(a.f, c);
        if (atomic_commit(&a, cfg->capacity.report, !ferror(a.f), err, sizeof err) < 0) {
            fprintf(stderr, "mailsoak capacity: %s\n", err);
            rc = 1;
        }
    }
    return rc;
}

/* Reads and judges a step's result; st->f stays NULL (and the step invalid) when
 * it cannot be read. */
static void judge_step(const struct capacity_record *c, struct step_record *st)
{
    char err[300];
    struct result r;
    if (result_load(&r, st->json, err, sizeof err) < 0) {
        st->j.verdict = STEP_INVALID;
        snprintf(st->j.why, sizeof st->j.why, "its run (exit %d) wrote no result: %.160s", st->exit_status, err);
        return;
    }
    st->f = xcalloc(1, sizeof *st->f);
    if (step_read(&r, c->ramp_s + c->warmup_s, st->f, err, sizeof err) < 0) {
        free(st->f);
        st->f = NULL;
        st->j.verdict = STEP_INVALID;
        snprintf(st->j.why, sizeof st->j.why, "its result: %.200s", err);
    } else {
        step_judge(&c->rules, st->f, 0, &st->j);
    }
    result_free(&r);
}

/* The search's loop: each step planned, run, judged and settled (capacity/rerun.h),
 * then the outputs. The exit status. */
static int run_search(const struct config *cfg, int argc, char **argv, const char *dir)
{
    int stop_signal = 0;
    struct capacity_record c = { .label = cfg->label[0] ? cfg->label : "capacity" };
    const struct capacity_config *k = &cfg->capacity;
    struct search_rules sr = { k->start, k->factor, k->max_rate, k->precision, k->confirm, (int)k->confirm_rounds };
    search_init(&c.s, &sr);
    char gerr[300];
    if (step_rules_from_config(&c.rules, cfg, gerr, sizeof gerr) < 0) {
        fprintf(stderr, "mailsoak capacity: %s\n", gerr);
        return 2;
    }
    c.ramp_s = (double)k->ramp / 1e9;
    c.visit_owed = k->visit_owed;
    c.warmup_s = (double)k->warmup / 1e9;
    c.window_s = (double)k->window / 1e9;
    start_time_now(c.start_time, sizeof c.start_time);
    /* tail: the longest drain and sweep a step has had (the last one's let an overloaded
     * step's longer drain run the search past its limit) */
    uint64_t t0 = mono_ns(), tail = 0;
    const uint64_t held = k->ramp + k->warmup;  /* a step's run before its window and drain */
    const struct rerun_rules rr = {
        .window = k->window, .window_max = CAPACITY_WINDOW_MAX * k->window,
        .base_senders = (unsigned)(cfg->senders ? cfg->senders : 1),
        .base_readers = (unsigned)(cfg->readers ? cfg->readers : 1),
        .max_senders = k->max_senders, .max_readers = k->max_readers,
    };
    struct rerun_state rs;
    rerun_init(&rs, &rr);
    struct step_plan p = { .window = k->window, .check = cfg->check };
    /* about ten timeline entries per window, within 1 s and run.interval */
    p.interval = within(k->window / 10, 1000 * NS_PER_MS, cfg->interval);
    int rc = 0;
    char err[400];
    struct spool *sp = cfg->server.spool_dirs.n ? spool_new(&cfg->server, err, sizeof err) : NULL;
    fprintf(stderr, "mailsoak capacity: steps of %.0f s ramp + %.0f s warm-up + %.0f s window, results in %s/\n",
            c.ramp_s, c.warmup_s, c.window_s, dir);
    while (search_next(&c.s) > 0) {
        if (!stop_signal)
            stop_signal = pending_stop();
        if (stop_signal) {
            c.interrupted = 1;
            search_stop(&c.s, "interrupted by a signal");
            break;
        }
        uint64_t elapsed = mono_ns() - t0, step = held + rs.window + tail;
        if (elapsed + step > k->time_limit) {
            char why[200];
            snprintf(why, sizeof why, "capacity.time_limit: a step of about %.0f s would end after it",
                     (double)step / 1e9);
            search_stop(&c.s, why);
            break;
        }
        p.rate = search_next(&c.s);
        p.window = rs.window;
        rerun_sessions(&rs, &rr, p.rate, &p.senders, &p.readers);
        struct step_record *st = new_step(&c);
        p.n = st->n;
        search_phase_name(&c.s, st->phase, sizeof st->phase);
        st->rate = p.rate;
        st->senders = p.senders;
        st->readers = p.readers;
        st->window_s = (double)p.window / 1e9;
        char out[600];
        /* dir is bounded where it is made; a path that still does not fit ends the search
         * rather than writing the step's result somewhere else */
        if ((size_t)snprintf(st->json, sizeof st->json, "%s/step-%02u.json", dir, st->n) >= sizeof st->json ||
            (size_t)snprintf(out, sizeof out, "%s/step-%02u.out", dir, st->n) >= sizeof out) {
            search_stop(&c.s, "the steps' directory path is too long");
            break;
        }
        unlink(st->json);
        fprintf(stderr, "mailsoak capacity: step %u (%s): %.1f msg/s, %u senders, %u readers, a %.0f s window\n",
                st->n, st->phase, p.rate, p.senders, p.readers, st->window_s);
        wait_for_queue(cfg, sp, &stop_signal);
        uint64_t ts = mono_ns();
        st->exit_status = run_step(cfg, argc, argv, &p, st->json, out, &stop_signal);
        uint64_t took = mono_ns() - ts;
        if (took > held + p.window && took - held - p.window > tail)
            tail = took - held - p.window;
        p.check = 0;
        if (st->exit_status == 2 || st->exit_status == 3) {
            /* the settings or the preflight: every step would fail alike */
            fprintf(stderr, "mailsoak capacity: step %u could not run (exit %d), %s says:\n", st->n, st->exit_status, out);
            say_why(out);
            st->j.verdict = STEP_INVALID;
            snprintf(st->j.why, sizeof st->j.why, "its run could not start (exit %d, see step-%02u.out)", st->exit_status,
                     st->n);
            search_stop(&c.s, "a step could not run");
            rc = 2;
            break;
        }
        judge_step(&c, st);
        char why[300];
        enum rerun_action next = rerun_next(&rr, &rs, &c.rules, c.nsteps > 1 ? &c.steps[c.nsteps - 2] : NULL, st,
                                            why, sizeof why);
        if (c.nsteps == 1)          /* the columns named once, above the first step's line */
            capacity_step_header(stderr);
        capacity_step_line(stderr, st);
        if (stop_signal) {
            c.interrupted = 1;
            search_stop(&c.s, "interrupted by a signal");
            break;
        }
        if (next == RERUN_WINDOW || next == RERUN_MORE)
            continue;
        if (next == RERUN_STOP) {
            search_stop(&c.s, why);
            break;
        }
        search_result(&c.s, st->j.verdict == STEP_PASS);
    }
    spool_free(sp);
    c.elapsed_s = (double)(mono_ns() - t0) / 1e9;
    if (write_outputs(cfg, &c) != 0 && rc == 0)
        rc = 1;
    if (rc == 0)
        rc = c.interrupted ? 128 + stop_signal : search_exit_status(&c.s);
    capacity_record_free(&c);
    return rc;
}

/* The staircase's table on stdout, its JSON (run.json) and page (capacity.report);
 * *rc 1 when one could not be written. */
static void capacity_stair_write(const struct config *cfg, const struct stair_record *c, int *rc)
{
    char err[400];
    stair_table(stdout, c);
    fflush(stdout);
    if (cfg->json[0]) {
        json_t *root = stair_json(c);
        if (write_json_atomic(cfg->json, root, err, sizeof err) < 0) {
            fprintf(stderr, "mailsoak capacity: %s\n", err);
            *rc = 1;
        }
        json_decref(root);
    }
    if (cfg->capacity.report[0]) {
        struct atomic_file a;
        if (atomic_open(&a, cfg->capacity.report, err, sizeof err) < 0) {
            fprintf(stderr, "mailsoak capacity: %s\n", err);
            *rc = 1;
            return;
        }
        stair_html(a.f, c);
        if (atomic_commit(&a, cfg->capacity.report, !ferror(a.f), err, sizeof err) < 0) {
            fprintf(stderr, "mailsoak capacity: %s\n", err);
            *rc = 1;
        }
    }
}

/* --- capacity.method = staircase (include/capacity/stair.h) --- */

/* A run's span, its levels' length and its lead-in's, spent the time already
 * spent: the confirmation's levels twice as long (SPECmail2001 asks its 80 % to
 * pass, and a level below the knee decides slowest: a swing must come back), an
 * open level's retry's too (it had too little time); a probe's levels, up to
 * max_rate, cut to those capacity.time_limit allows (most never run: the first to
 * fall behind ends the run). */
static uint64_t run_plan(const struct capacity_config *k, struct stair_run *run, uint64_t spent, uint64_t *level,
                         uint64_t *lead)
{
    *level = run->kind == RUN_CONFIRM || run->kind == RUN_RETRY ? 2 * k->level : k->level;
    *lead = k->level / 5;
    while (run->kind == RUN_PROBE && run->n > 1 && spent + *lead + run->n * *level > k->time_limit)
        run->n--;
    return *lead + (uint64_t)run->n * *level;
}

/* The record of a staircase's next run. */
static struct stair_run_record *new_run(struct stair_record *c, const struct stair_run *run, uint64_t level,
                                        uint64_t lead, unsigned senders, unsigned readers)
{
    c->runs = grow(c->runs, &c->runs_cap, c->nruns, 1, sizeof *c->runs);
    struct stair_run_record *rr = &c->runs[c->nruns++];
    memset(rr, 0, sizeof *rr);
    rr->n = (unsigned)c->nruns;
    rr->kind = run->kind;
    rr->level_s = (double)level / 1e9;
    rr->lead_s = (double)lead / 1e9;
    rr->senders = senders;
    rr->readers = readers;
    return rr;
}

static int search_staircase(const struct config *cfg, int argc, char **argv, const char *dir)
{
    int stop_signal = 0, rc = 0;
    const struct capacity_config *k = &cfg->capacity;
    struct stair_record c = { .label = cfg->label[0] ? cfg->label : "capacity", .level_s = (double)k->level / 1e9 };
    struct stair_rules sr = { .start = k->start, .factor = k->factor, .max_rate = k->max_rate, .step = k->step,
                              .below = 0.2, .precision = k->precision, .max_runs = 12, .confirm = k->confirm,
                              .confirm_rounds = (unsigned)k->confirm_rounds };
    stair_init(&c.s, &sr);
    struct step_rules rules;
    char err[400];
    if (step_rules_from_config(&rules, cfg, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak capacity: %s\n", err);
        return 2;
    }
    /* about ten timeline entries a level, within 100 ms and 1 s */
    uint64_t interval = within(k->level / 10, 100 * NS_PER_MS, 1000 * NS_PER_MS);
    drift_rules_level(&c.dr, k->queue_growth, c.level_s, (double)interval / 1e9);
    c.dr.arrivals_cv2 = k->arrivals ? 1 : 0;
    c.visit_owed = k->visit_owed;
    start_time_now(c.start_time, sizeof c.start_time);
    uint64_t t0 = mono_ns(), tail = 0;
    unsigned senders = (unsigned)(cfg->senders ? cfg->senders : 1), readers = (unsigned)(cfg->readers ? cfg->readers : 1);
    int check = cfg->check, retries = 0;
    struct spool *sp = cfg->server.spool_dirs.n ? spool_new(&cfg->server, err, sizeof err) : NULL;
    fprintf(stderr, "mailsoak capacity: a staircase search, levels of %.0f s, results in %s/\n", c.level_s, dir);
    fprintf(stderr, "run kind           rate   offered accepted delivered  p95 deliv  outcome\n");
    struct stair_run run;
    for (stair_next(&c.s, &run); run.n; stair_next(&c.s, &run)) {
        if (!stop_signal)
            stop_signal = pending_stop();
        if (stop_signal) {
            c.interrupted = 1;
            stair_stop(&c.s, "interrupted by a signal");
            break;
        }
        uint64_t level, lead, span = run_plan(k, &run, mono_ns() - t0 + tail, &level, &lead);
        if (mono_ns() - t0 + span + tail > k->time_limit) {
            stair_stop(&c.s, "capacity.time_limit: the next run would end after it");
            break;
        }
        struct stair_run_record *rr = new_run(&c, &run, level, lead, senders, readers);
        char out[600], profile[STAIR_PROFILE_MAX], kvs[STAIR_SETTINGS_MAX][160];
        if ((size_t)snprintf(rr->json, sizeof rr->json, "%s/run-%02u.json", dir, rr->n) >= sizeof rr->json ||
            (size_t)snprintf(out, sizeof out, "%s/run-%02u.out", dir, rr->n) >= sizeof out) {
            stair_stop(&c.s, "the runs' directory path is too long");
            break;
        }
        unlink(rr->json);
        char *kv[STAIR_SETTINGS_MAX];
        int n = stair_run_settings(cfg, &run, rr, lead, level, interval, check, kvs, profile, sizeof profile, kv);
        unsigned more_runs, more_levels;
        stair_remaining(&c.s, &run, &more_runs, &more_levels);
        uint64_t spent = mono_ns() - t0, left = span + (uint64_t)more_levels * k->level + (more_runs + 1) * tail;
        fprintf(stderr, "mailsoak capacity: run %u of about %u (%s): %u level%s from %.1f to %.1f msg/s, %u senders, "
                        "%u readers; %.0f s spent, about %.0f s left (capacity.time_limit in %.0f s)\n",
                rr->n, rr->n + more_runs, stair_kind_name(run.kind), run.n, run.n == 1 ? "" : "s", run.rate[0],
                run.rate[run.n - 1], senders, readers, (double)spent / 1e9, (double)left / 1e9,
                (double)(k->time_limit - spent) / 1e9);
        wait_for_queue(cfg, sp, &stop_signal);
        uint64_t ts = mono_ns();
        rr->exit_status = run_child(argc, argv, kv, n, out, &stop_signal);
        uint64_t took = mono_ns() - ts;
        if (took > span && took - span > tail)
            tail = took - span;
        check = 0;
        if (rr->exit_status == 2 || rr->exit_status == 3) {
            fprintf(stderr, "mailsoak capacity: run %u could not run (exit %d), %s says:\n", rr->n, rr->exit_status, out);
            say_why(out);
            stair_stop(&c.s, "a run could not start");
            rc = 2;
            break;
        }
        enum level_outcome lo[STAIR_LEVELS_MAX];
        double delivered;
        run.n = stair_judge_run(&c, &rules, &run, rr, (double)interval / 2e9, lo, &delivered);
        rr->delivered = delivered;
        if (stop_signal) {
            c.interrupted = 1;
            stair_stop(&c.s, "interrupted by a signal");
            break;
        }
        double offered[STAIR_LEVELS_MAX], got[STAIR_LEVELS_MAX];
        for (unsigned i = 0; i < run.n; i++) {
            const struct stair_level_record *l = &c.levels[c.nlevels - run.n + i];
            offered[i] = l->read ? l->offered : 0;
            got[i] = l->read ? l->delivered : 0;
        }
        if (stair_more_sessions(&c, run.n, lo, (unsigned)k->max_senders, (unsigned)k->max_readers, &senders, &readers,
                                &retries)) {
            /* with more sessions from the level the tester limited: the search's next
             * run, or this one again when that was its first level */
            stair_keep_before_invalid(&c.s, &run, lo, delivered, offered, got);
            continue;
        }
        stair_result_measured(&c.s, &run, lo, delivered, offered, got);
        /* the senders the rates to come need, sized from the probe's last level by
         * Little's law (each busy for a message's time), twice over for the
         * arrivals' bunching */
        if (run.kind == RUN_PROBE && run.n && rr->message_s > 0) {
            double need = ceil(2 * run.rate[run.n - 1] * rr->message_s);
            if (need > senders) {
                senders = need < (double)k->max_senders ? (unsigned)need : (unsigned)k->max_senders;
                fprintf(stderr, "mailsoak capacity: %u senders from now on: a message took %.0f ms in the probe\n",
                        senders, rr->message_s * 1000);
            }
        }
    }
    spool_free(sp);
    double pass = stair_lower_bound(&c.s);
    /* the fit's scale at least half a level's step: a clean separation fits any smaller */
    stair_fit(&c.s, fmax(0.5 * c.s.r.step * (pass > 0 ? pass : c.s.mrr), 1e-3), &c.fit);
    c.elapsed_s = (double)(mono_ns() - t0) / 1e9;
    capacity_stair_write(cfg, &c, &rc);
    if (rc == 0)
        rc = c.interrupted ? 128 + stop_signal : stair_exit_status(&c.s);
    stair_record_free(&c);
    return rc;
}

int cmd_capacity(int argc, char **argv)
{
    struct config cfg = { 0 };
    const struct cli_opt opts[] = { { 0 } };
    const struct cli_cmd cmd = { .name = "mailsoak capacity", .usage = usage, .opts = opts, .words = CLI_SETTINGS,
                                 .settings = config_from_words, .ud = &cfg };
    char **files;
    size_t nfiles;
    int rc;
    if (cli_parse(&cmd, argc, argv, stdout, stderr, &files, &nfiles, &rc)) {
        char err[400], dir[512];
        int made = 0;
        if (config_check(&cfg, err, sizeof err) < 0 || config_check_outputs(&cfg, err, sizeof err) < 0) {
            fprintf(stderr, "mailsoak capacity: %s\n", err);
            rc = 2;
        } else if (!cfg.smtp_targets.n || !cfg.pop3_targets.n || !cfg.senders || !cfg.readers) {
            fprintf(stderr, "mailsoak capacity: needs an SMTP and a POP3 target, senders and readers: the capacity "
                            "is of mail delivered, and only reading it proves that\n");
            rc = 2;
        } else if (make_dir(&cfg, dir, sizeof dir, &made) < 0) {
            rc = 2;
        } else {
            sigset_t set, old;
            stop_set(&set);
            sigprocmask(SIG_BLOCK, &set, &old);
            rc = cfg.capacity.method == CAPACITY_STAIRCASE ? search_staircase(&cfg, argc, argv, dir)
                                                           : run_search(&cfg, argc, argv, dir);
            sigprocmask(SIG_SETMASK, &old, NULL);
            if (made)
                rmdir(dir);          /* fails but when no step wrote in it: nothing left behind */
        }
    }
    config_free(&cfg);
    return rc;
}
