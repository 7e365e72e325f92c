/* run: the controller thread of `mailsoak run`. It sets the run up, moves it
 * through its phases (send, drain, sweep, stop), decides when the server has
 * settled (the point after which a sweep can prove a loss), collects the workers'
 * interval snapshots into the timeline, and hands the totals to the writers.
 * Signals only set the stop flag; the controller notices within 100 ms. */
#include "run/run.h"

#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "analyse/latency.h"
#include "run/config.h"
#include "preflight/check.h"
#include "probe/spool.h"
#include "run/embedded.h"
#include "run/metrics.h"
#include "run/probe_output.h"
#include "run/servers.h"
#include "lib/tls.h"

static volatile sig_atomic_t stop_signal;   /* the one mutable global besides the config */

static void on_signal(int sig)
{
    if (stop_signal)
        _exit(128 + sig);            /* a second signal: out at once */
    stop_signal = sig;
}

/* A local address to bind: an IP literal, port chosen by the kernel. */
static int resolve_bind(const char *spec, struct target *t, char *err, size_t errlen)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_PASSIVE }, *ai;
    char host[128];
    snprintf(host, sizeof host, "%s", spec);
    if (host[0] == '[') {            /* [::1] */
        memmove(host, host + 1, strlen(host));
        char *end = strchr(host, ']');
        if (end)
            *end = 0;
    }
    int rc = getaddrinfo(host, "0", &hints, &ai);
    if (rc) {
        snprintf(err, errlen, "'%s': not an IP address (%s)", spec, gai_strerror(rc));
        return -1;
    }
    memcpy(&t->sa, ai->ai_addr, ai->ai_addrlen);
    t->len = ai->ai_addrlen;
    snprintf(t->name, sizeof t->name, "%s", spec);
    freeaddrinfo(ai);
    return 0;
}

static int resolve(const char *spec, struct target *t, char *err, size_t errlen)
{
    char host[256];
    const char *port;
    if (spec[0] == '[') {
        const char *end = strchr(spec, ']');
        if (!end || end[1] != ':') {
            snprintf(err, errlen, "'%s': expected [IPv6]:PORT", spec);
            return -1;
        }
        snprintf(host, sizeof host, "%.*s", (int)(end - spec - 1), spec + 1);
        port = end + 2;
    } else {
        const char *colon = strrchr(spec, ':');
        if (!colon) {
            snprintf(err, errlen, "'%s': expected HOST:PORT", spec);
            return -1;
        }
        snprintf(host, sizeof host, "%.*s", (int)(colon - spec), spec);
        port = colon + 1;
    }
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
    int rc = getaddrinfo(host, port, &hints, &ai);
    if (rc) {
        snprintf(err, errlen, "'%s': %s", spec, gai_strerror(rc));
        return -1;
    }
    memcpy(&t->sa, ai->ai_addr, ai->ai_addrlen);
    t->len = ai->ai_addrlen;
    snprintf(t->name, sizeof t->name, "%s", spec);
    snprintf(t->host, sizeof t->host, "%s", host);
    freeaddrinfo(ai);
    return 0;
}

static int resolve_all(const struct strlist *l, const char *what, struct target **out, unsigned *n,
                       int (*fn)(const char *, struct target *, char *, size_t))
{
    char err[300];
    *out = calloc(l->n ? l->n : 1, sizeof **out);
    *n = (unsigned)l->n;
    for (size_t i = 0; i < l->n; i++)
        if (fn(l->v[i], &(*out)[i], err, sizeof err) < 0) {
            fprintf(stderr, "mailsoak: %s: %s\n", what, err);
            return -1;
        }
    return 0;
}

static int setup_users(struct run *r, const struct config *cfg)
{
    char err[400];
    int rc = cfg->users_file[0]
                 ? users_load_file(&r->users, cfg->users_file, err, sizeof err)
                 : users_from_pattern(&r->users, cfg->user_pattern, cfg->user_password,
                                      (size_t)cfg->user_count, err, sizeof err);
    r->users_total = r->users.n;
    /* A shard owns its users outright, so every choice of a user (recipients,
     * mailboxes to read, the sweep, AUTH) stays among them by construction and the
     * shard's ledger is complete for them. */
    if (rc == 0 && cfg->shard.n > 1)
        rc = users_keep_shard(&r->users, (size_t)cfg->shard.k, (size_t)cfg->shard.n, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "mailsoak: %s\n", err);
    return rc;
}

/* 10,000 sessions need more descriptors than the usual soft limit of 1024. */
static void raise_nofile(uint64_t need)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need + 64) {
        rl.rlim_cur = need + 64 < rl.rlim_max ? need + 64 : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static const char *const phase_names[] = { "send", "drain", "sweep", "stop" };

struct controller {
    struct run *run;
    struct worker *w;
    unsigned nw;
    unsigned snap_seq;
    struct counters prev;            /* cumulative as of the previous interval */
    unsigned prev_nerr;
    struct err_count prev_err[ERR_CLASSES_MAX];
    uint64_t prev_t;
    json_t *timeline;
    struct servers *srv;
    struct spool *queue;             /* its own reading of [server] spool_dir, or NULL */
    struct hist *lat;                /* LAT_COUNT, merged per interval; too big for the stack */
    struct run_metrics *metrics;     /* --metrics, or NULL */
    struct hist *lat_cum;            /* LAT_COUNT since the start, for --metrics */
    struct sweep_state {
        uint64_t pass_start;         /* when the current pass began */
        uint64_t quiet_since;        /* end of the last pass that found new mail */
        uint64_t gains;              /* r->sweep_gains when the current pass began */
        int qualifies;               /* the current pass began after the server settled */
        int ended;                   /* the current pass ended and proved nothing */
    } sw;
};

static void counters_add(struct counters *a, const struct counters *b)
{
    uint64_t *x = (uint64_t *)a;
    const uint64_t *y = (const uint64_t *)b;
    for (size_t i = 0; i < sizeof *a / sizeof(uint64_t); i++)
        x[i] += y[i];
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
    double dt = (double)(now - ct->prev_t) / 1e9;
    double t = (double)(now - r->t0) / 1e9;
    uint64_t dsent = c.sent - ct->prev.sent, dread = c.read - ct->prev.read;
    uint64_t derr = c.errors - ct->prev.errors;

    json_t *e = json_object();
    json_object_set_new(e, "t", json_real(t));
    json_object_set_new(e, "phase", json_string(phase_names[phase]));
    json_object_set_new(e, "sent", json_integer((json_int_t)dsent));
    json_object_set_new(e, "read", json_integer((json_int_t)dread));
    json_object_set_new(e, "errors", json_integer((json_int_t)derr));
    json_t *ebc = json_object();
    for (unsigned i = 0; i < nerr; i++) {
        uint64_t before = 0;
        for (unsigned j = 0; j < ct->prev_nerr; j++)
            if (!strcmp(ct->prev_err[j].name, err[i].name))
                before = ct->prev_err[j].count;
        if (err[i].count > before)
            json_object_set_new(ebc, err[i].name, json_integer((json_int_t)(err[i].count - before)));
    }
    json_object_set_new(e, "errors_by_class", ebc);
    json_object_set_new(e, "rate_in", json_real(dt > 0 ? (double)dsent / dt : 0));
    json_object_set_new(e, "rate_out", json_real(dt > 0 ? (double)dread / dt : 0));
    json_object_set_new(e, "conns", json_integer((json_int_t)c.conns_open));
    json_t *lj = json_object();
    for (unsigned k = 0; k < LAT_COUNT; k++)
        if (lat[k].count)
            json_object_set_new(lj, lat_names[k], latency_json(&lat[k]));
    json_object_set_new(e, "latency", lj);
    struct probe_interval iv;
    servers_interval(ct->srv, ct->prev_t, now, &iv);
    probe_json_interval(&iv, e);
    probe_interval_free(&iv);
    json_array_append_new(ct->timeline, e);

    if (live) {
        char a[16], b[16], srv[96] = "";
        struct series_now cn;
        servers_now(ct->srv, &cn);
        /* what is not measured is not shown, rather than shown as 0 */
        char m[16], q[16];
        if (cn.has.procs)
            snprintf(srv, sizeof srv, "  | mem %s", fmt_bytes(m, sizeof m, (double)cn.mem));
        if (cn.has.spool)
            snprintf(srv + strlen(srv), sizeof srv - strlen(srv), "%s spool %s", srv[0] ? " " : "  |",
                     fmt_count(q, sizeof q, (double)cn.spool));
        fprintf(stderr, "[%6.0fs %-5s] sent %s (%.0f/s)  read %s (%.0f/s)  errors %llu  conns %llu  unread %lld%s\n",
                t, phase_names[phase], fmt_count(a, sizeof a, (double)c.sent), dt > 0 ? dsent / dt : 0,
                fmt_count(b, sizeof b, (double)c.read), dt > 0 ? dread / dt : 0,
                (unsigned long long)c.errors, (unsigned long long)c.conns_open,
                (long long)atomic_load(&r->ledger.owed_total), srv);
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
        .run_id = r->run_id, .label = result_label(r->cfg), .phase = phase_names[phase],
        .elapsed_s = (double)(mono_ns() - r->t0) / 1e9, .c = &ct->prev, .err = ct->prev_err,
        .nerr = ct->prev_nerr, .lat = ct->lat_cum, .lo = &lo, .unread = atomic_load(&r->ledger.owed_total),
    };
    metrics_publish(ct->metrics, &v);
}

static unsigned senders_open(const struct controller *ct)
{
    unsigned n = 0;
    for (unsigned i = 0; i < ct->nw; i++)
        n += atomic_load_explicit(&ct->w[i].smtp_open, memory_order_relaxed);
    return n;
}

static void set_phase(struct run *r, struct controller *ct, int phase)
{
    atomic_store_explicit(&r->phase, phase, memory_order_release);
    for (unsigned i = 0; i < ct->nw; i++)
        loop_wake(ct->w[i].loop);
}

struct queue_marks {
    struct ledger *l;
    unsigned owed;
};

/* One message of this run found in the queue: its id and recipient count, as in
 * its X-Mailsoak-Id header. */
static void mark_queued(void *arg, uint64_t seq, unsigned nrcpt)
{
    struct queue_marks *m = arg;
    m->owed += ledger_mark_queued(m->l, seq, nrcpt);
}

/* One message the server's queue holds. Ours (this run's id) marks its ledger
 * entries: only the recipients the queue says are still to deliver when it says so
 * and they are ours by address, else (unknown, or rewritten addresses) all of them. */
struct queue_read {
    struct run *run;
    struct queue_marks *m;
};

static int addr_in(const char *addr, const struct queue_msg *qm)
{
    for (size_t i = 0; i < qm->nrcpts; i++)
        if (!strcasecmp(addr, qm->rcpts[i]))
            return 1;
    return 0;
}

static void on_queued(void *arg, const struct queue_msg *qm)
{
    struct queue_read *q = arg;
    struct run *r = q->run;
    char run_id[MSG_RUNID_LEN + 1];
    uint64_t seq;
    unsigned nrcpt;
    if (!qm->id || msg_parse_id(qm->id, qm->idlen, run_id, &seq, &nrcpt) < 0 || strcmp(run_id, r->run_id))
        return;
    size_t mapped = 0;
    for (unsigned i = 0; qm->rcpts_known && i < nrcpt; i++) {
        const struct ledger_entry *e = ledger_get(&r->ledger, seq + i);
        mapped += e && e->user < r->users.n && ledger_msg_seq(seq + i, e) == seq &&
                  addr_in(r->users.v[e->user].addr, qm);
    }
    if (!qm->rcpts_known || mapped < qm->nrcpts) {
        mark_queued(q->m, seq, nrcpt);
        return;
    }
    for (unsigned i = 0; i < nrcpt; i++) {
        const struct ledger_entry *e = ledger_get(&r->ledger, seq + i);
        if (e && e->user < r->users.n && addr_in(r->users.v[e->user].addr, qm)) {
            int owed = ledger_mark_queued_rcpt(&r->ledger, seq, i);
            q->m->owed += owed > 0;
        }
    }
}

/* The server's queue, per message: each of this run's message ids it holds marks
 * its ledger entries (pending_queued). fresh (a pass starts) clears the previous
 * marks; later readings add theirs, so an entry the queue held at any reading since
 * the proving pass began stays pending: it may have reached its mailbox after the
 * pass read it. Returns how many owed entries the queue holds, or -1 when it cannot
 * be read per message (no spool_dir, or a queued message that could not be read: it
 * may be one of ours), when only the spool's count can hold back the verdict
 * (queue_settled). Opens every queued message: called at the sweep's passes and at
 * the end, never per sample. */
static int read_queue(struct controller *ct, int fresh)
{
    if (!ct->queue)
        return -1;
    struct queue_marks m = { &ct->run->ledger, 0 };
    struct queue_read q = { ct->run, &m };
    struct queue_totals t = { 0 };
    if (fresh)
        ledger_queued_clear(m.l);
    spool_scan(ct->queue, on_queued, &q, &t);
    return t.unreadable ? -1 : (int)m.owed;
}

/* Whether what the server's queue holds can no longer change a verdict. Read per
 * message, it always can: the entries it holds are pending_queued, and one it did
 * not hold when the pass began cannot reach a mailbox later (an MTA removes a queue
 * file only after the delivery), so even while other mail stays queued a message in
 * neither the queue nor its mailbox is lost. Counted only, the spool must be empty;
 * with no spool known, only the mailboxes can tell (1). */
static int queue_settled(struct controller *ct, int fresh)
{
    if (read_queue(ct, fresh) >= 0)
        return 1;
    struct series_now cn;
    servers_now(ct->srv, &cn);
    return !cn.has.spool || cn.spool == 0;
}

static void start_pass(struct controller *ct, uint64_t now)
{
    struct run *r = ct->run;
    struct sweep_state *sw = &ct->sw;
    sw->pass_start = now;
    sw->ended = 0;
    sw->gains = atomic_load(&r->sweep_gains);
    int settled = queue_settled(ct, 1);      /* read at every pass start: fresh marks */
    sw->qualifies = now >= sw->quiet_since + r->cfg->settle && settled;
    atomic_fetch_add_explicit(&r->sweep_pass, 1, memory_order_release);
    atomic_store_explicit(&r->sweep_cursor, 0, memory_order_release);
}

/* The current pass proves what it did not find: it began after the server settled
 * and met no new mail, and the queue, read per message, marked what it still holds
 * (or, only counted, is empty). */
static int pass_proves(struct controller *ct)
{
    return ct->sw.qualifies && atomic_load(&ct->run->sweep_gains) == ct->sw.gains && queue_settled(ct, 0);
}

/* The sweep, in passes over the mailboxes that still owe messages. A pass that
 * finds new mail, or begins before the mailboxes were quiet for `settle` (and the
 * queue held none of the owed mail), proves nothing: another follows, at most one
 * a second, until one proves or sweep_timeout ends the sweep. */
static int sweep_step(struct controller *ct, uint64_t now, uint64_t phase_start)
{
    struct run *r = ct->run;
    const struct config *cfg = r->cfg;
    struct sweep_state *sw = &ct->sw;
    if (now - phase_start >= cfg->sweep_timeout)
        return PH_STOP;
    if (!sw->ended) {
        int pass_done = atomic_load_explicit(&r->sweep_cursor, memory_order_acquire) >= r->users.n &&
                        atomic_load_explicit(&r->sweep_active, memory_order_acquire) <= 0;
        if (!pass_done)
            return PH_SWEEP;
        if (pass_proves(ct)) {
            r->ledger.proof_pass = atomic_load(&r->sweep_pass);
            return PH_STOP;
        }
        sw->ended = 1;
        if (atomic_load(&r->sweep_gains) != sw->gains)
            sw->quiet_since = now;
        if (atomic_load(&r->ledger.owed_total) <= 0)
            return PH_STOP;          /* everything was read: nothing to prove */
    }
    uint64_t gap = cfg->settle < 1000 * NS_PER_MS ? cfg->settle : 1000 * NS_PER_MS;
    if (now >= sw->pass_start + gap)
        start_pass(ct, now);
    return PH_SWEEP;
}

/* The run window: send for the duration (or N messages), drain until the
 * mailboxes owe nothing and the server's queue is empty (within the drain time),
 * sweep until the server settled (within the sweep time), stop. */
static int next_phase(struct controller *ct, int phase, uint64_t now, uint64_t phase_start)
{
    struct run *r = ct->run;
    const struct config *cfg = r->cfg;
    if (phase == PH_SEND) {
        int over = now - r->t0 >= cfg->duration || (cfg->messages && atomic_load(&r->accepted) >= cfg->messages);
        if (!cfg->senders)
            over = now - r->t0 >= cfg->duration;   /* a readers-only run reads for the duration */
        return !over ? PH_SEND : cfg->readers ? PH_DRAIN : PH_STOP;
    }
    if (phase == PH_DRAIN) {
        /* While the server's queue holds mail its mailboxes are not final. */
        struct series_now cn;
        servers_now(ct->srv, &cn);
        int queue_busy = cn.has.spool && cn.spool > 0;
        int done = senders_open(ct) == 0 && atomic_load(&r->ledger.owed_total) <= 0 && !queue_busy;
        if (!done && now - phase_start < cfg->drain)
            return PH_DRAIN;
        if (!cfg->sweep || atomic_load(&r->ledger.owed_total) <= 0)
            return PH_STOP;
        r->ledger.swept = 1;
        ct->sw.quiet_since = now;    /* mail may have arrived unseen until now */
        start_pass(ct, now);
        return PH_SWEEP;
    }
    if (phase == PH_SWEEP)
        return sweep_step(ct, now, phase_start);
    return PH_STOP;
}

static void merge_totals(struct run_result *res, struct worker *w, unsigned nw)
{
    for (unsigned i = 0; i < nw; i++) {
        for (unsigned x = 0; x < w[i].st.corrupt.n; x++)
            stats_example(&res->corrupt, w[i].st.max_examples, "%s", w[i].st.corrupt.text[x]);
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

static void lost_example(void *arg, uint64_t seq, const struct ledger_entry *e)
{
    struct run_result *res = arg;
    enum pending_reason why;
    if (res->nlost_ex >= LOST_EXAMPLES_MAX || res->nlost_ex >= res->cfg->error_examples ||
        ledger_verdict(&res->run->ledger, e, &why) != V_LOST)
        return;
    res->lost_ex[res->nlost_ex++] = (struct lost_example){
        ledger_msg_seq(seq, e), e->user, e->accepted_ms,
        atomic_load_explicit(&res->run->ledger.visit_ms[e->user], memory_order_relaxed),
    };
}

/* Settings that are valid one by one but not together, or files that must open:
 * found before any load is sent. 0, or 2 with the reason printed. */
/* Everything the workers share, before they start: addresses, users, sizes, the
 * seed and run id, the text pool, the ledger. 0, 1 (out of memory) or 2. */
static int setup_run(struct run *r, const struct config *cfg, unsigned nw)
{
    char err[400];
    r->cfg = cfg;
    if (resolve_all(&cfg->smtp_targets, "smtp.target", &r->smtp, &r->nsmtp, resolve) < 0 ||
        resolve_all(&cfg->pop3_targets, "pop3.target", &r->pop3, &r->npop3, resolve) < 0 ||
        resolve_all(&cfg->smtp_bind, "smtp.bind", &r->smtp_bind, &r->nsmtp_bind, resolve_bind) < 0 ||
        resolve_all(&cfg->pop3_bind, "pop3.bind", &r->pop3_bind, &r->npop3_bind, resolve_bind) < 0 ||
        setup_users(r, cfg) < 0)
        return 2;
    if (size_model_init(&r->sizes, (enum size_dist)cfg->size_dist, cfg->size, cfg->size_median, cfg->size_spread,
                        cfg->size_file, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak: %s\n", err);
        return 2;
    }
    r->seed = cfg->seed;
    if (!r->seed && getrandom(&r->seed, sizeof r->seed, 0) != sizeof r->seed)
        r->seed = (uint64_t)time(NULL);
    /* 53 bits, so the seed survives a round trip through any JSON reader */
    if (!cfg->seed)
        r->seed = (r->seed & ((1ull << 53) - 1)) | 1;
    /* The run id must differ between runs with the same seed, or a rerun would
     * mistake the previous run's leftovers for its own. */
    uint64_t x = r->seed ^ (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    snprintf(r->run_id, sizeof r->run_id, "%08x", (unsigned)(splitmix64(&x) & 0xffffffffu));
    r->poolsize = 1 << 16;
    r->pool = msg_pool_new(r->seed, r->poolsize);
    r->nworkers = nw;
    r->mailbox_busy = calloc(r->users.n, sizeof *r->mailbox_busy);
    if (!r->pool || !r->mailbox_busy || ledger_init(&r->ledger, nw, r->users.n) < 0 ||
        foreign_init(&r->foreign, r->users.n) < 0) {
        fprintf(stderr, "mailsoak: out of memory\n");
        return 1;
    }
    return 0;
}

static int run_soak(const struct config *cfg)
{
    struct run *r = calloc(1, sizeof *r);
    struct run_result *res = calloc(1, sizeof *res);
    struct controller ct = { 0 };
    int rc = 1;
    if (!r || !res) {
        free(r);
        free(res);
        return 1;
    }
    char err[400];
    unsigned nw = (unsigned)(cfg->workers ? cfg->workers : (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
    if (nw < 1)
        nw = 1;
    if (config_check(cfg, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak: %s\n", err);
        rc = 2;
        goto out;
    }
    if ((rc = setup_run(r, cfg, nw)) != 0)
        goto out;
    rc = 1;
    raise_nofile(cfg->senders + cfg->readers);
    atomic_store(&r->send_budget, (int64_t)cfg->messages);

    struct worker *w = calloc(nw, sizeof *w);
    ct.run = r;
    ct.w = w;
    ct.nw = nw;
    ct.timeline = json_array();
    ct.lat = calloc(LAT_COUNT, sizeof *ct.lat);
    ct.lat_cum = calloc(LAT_COUNT, sizeof *ct.lat_cum);
    if (!ct.lat || !ct.lat_cum)
        goto out;
    res->events = json_array();
    r->t0 = mono_ns();
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    r->t0_unix_ms = (uint64_t)rt.tv_sec * 1000 + (uint64_t)rt.tv_nsec / 1000000;
    /* The server side is sampled on its own thread, on the same clock. */
    res->srv = ct.srv = servers_start(cfg, r->t0, err, sizeof err);
    if (!res->srv) {
        fprintf(stderr, "mailsoak: %s\n", err);
        rc = 2;
        goto out;
    }
    /* The queue read per message, in this thread: an instance apart from the
     * collector's, which counts it on its own thread. */
    if (cfg->server.spool_dirs.n)
        ct.queue = spool_new(&cfg->server, err, sizeof err);
    if (cfg->metrics[0]) {
        if (!(ct.metrics = metrics_start(cfg->metrics, cfg->metrics_token, err, sizeof err))) {
            fprintf(stderr, "mailsoak: run.metrics: %s\n", err);
            rc = 2;
            goto out;
        }
        fprintf(stderr, "mailsoak: metrics on http://%s/metrics\n", metrics_address(ct.metrics));
        publish_metrics(&ct, PH_SEND);   /* zeros until the first interval */
    }
    struct tm tm;
    gmtime_r(&rt.tv_sec, &tm);
    strftime(res->start_time, sizeof res->start_time, "%Y-%m-%dT%H:%M:%SZ", &tm);
    for (unsigned i = 0; i < nw; i++) {
        unsigned ns = (unsigned)(cfg->senders / nw + (i < cfg->senders % nw));
        unsigned np = (unsigned)(cfg->readers / nw + (i < cfg->readers % nw));
        unsigned sb = (unsigned)(cfg->senders / nw * i + (i < cfg->senders % nw ? i : cfg->senders % nw));
        unsigned pb = (unsigned)(cfg->readers / nw * i + (i < cfg->readers % nw ? i : cfg->readers % nw));
        if (worker_init(&w[i], i, r, ns, np, sb, pb) < 0) {
            fprintf(stderr, "mailsoak: cannot set up worker %u\n", i);
            goto out;
        }
    }

    /* Workers must not take the signals: the controller owns the run's end. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    signal(SIGPIPE, SIG_IGN);
    ct.prev_t = r->t0;
    unsigned started = 0;
    for (; started < nw; started++)
        if (pthread_create(&w[started].thread, NULL, worker_main, &w[started]))
            break;
    pthread_sigmask(SIG_SETMASK, &old, NULL);

    int phase = PH_SEND, phase_was_sweep = 0;
    uint64_t phase_start = r->t0, send_end = 0, next_iv = r->t0 + cfg->interval;
    if (started < nw) {
        fprintf(stderr, "mailsoak: cannot start worker threads\n");
        phase = PH_STOP;
        set_phase(r, &ct, PH_STOP);
    }
    while (phase != PH_STOP) {
        usleep(20000);
        uint64_t now = mono_ns();
        int next = stop_signal ? PH_STOP : next_phase(&ct, phase, now, phase_start);
        if (stop_signal && !res->interrupted) {
            res->interrupted = 1;
            fprintf(stderr, "mailsoak: %s: ending the run early\n", strsignal(stop_signal));
        }
        if (next == phase && now < next_iv)
            continue;
        if (phase == PH_SEND && next != PH_SEND)
            send_end = now;
        if (next == PH_STOP) {
            phase_was_sweep = phase == PH_SWEEP;
            servers_stop(ct.srv);
        }  /* its last sample belongs in the last interval */
        if (next != phase || now >= next_iv) {
            interval(&ct, phase, 1);
            publish_metrics(&ct, next);
            next_iv = now + cfg->interval;
        }
        if (next != phase) {
            /* For the senders' sake, the drain starts only after the switch: a
             * sender mid-transaction finishes it and QUITs. */
            phase = next;
            phase_start = now;
            set_phase(r, &ct, phase);
        }
    }
    if (!send_end)
        send_end = mono_ns();
    for (unsigned i = 0; i < started; i++)
        pthread_join(w[i].thread, NULL);

    res->cfg = cfg;
    res->run = r;
    res->duration_s = (double)(send_end - r->t0) / 1e9;
    res->elapsed_s = (double)(mono_ns() - r->t0) / 1e9;
    res->timeline = ct.timeline;
    merge_totals(res, w, nw);
    struct probe_events pe;
    servers_events(res->srv, &pe);
    probe_json_events(&pe, res->events);
    probe_events_free(&pe);
    /* The verdicts: a pass that began after the server settled proves what it did
     * not find. A sweep cut short by its time proves with what it read of such a
     * pass; a signal proves nothing. */
    if (phase_was_sweep && !res->interrupted && !r->ledger.proof_pass && !ct.sw.ended && pass_proves(&ct))
        r->ledger.proof_pass = atomic_load(&r->sweep_pass);
    /* What the queue still holds is pending_queued. With a proving pass the marks
     * since it began must stay (they keep what reached a mailbox after its visit
     * from being lost); without one nothing can be lost, and a fresh reading makes
     * pending_queued exactly what the queue holds at the end. */
    read_queue(&ct, !r->ledger.proof_pass);
    res->settled = r->ledger.proof_pass != 0;
    res->sweep_passes = atomic_load(&r->sweep_pass);
    ledger_outcome(&r->ledger, &res->lo);
    if (res->lo.lost)
        ledger_each(&r->ledger, lost_example, res);
    result_table(stdout, res);
    rc = 0;
    if (cfg->ledger_csv[0] && write_ledger_csv(cfg->ledger_csv, res, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak: %s\n", err);
        rc = 1;
    }
    if (cfg->json[0]) {
        json_t *root = result_json(res);
        if (write_json_atomic(cfg->json, root, err, sizeof err) < 0) {
            fprintf(stderr, "mailsoak: %s\n", err);
            rc = 1;
        }
        json_decref(root);
    }
    if (res->interrupted && rc == 0)
        rc = 128 + stop_signal;
out:
    /* workers may be partly set up on an error path: worker_free copes */
    for (unsigned i = 0; ct.w && i < ct.nw; i++)
        worker_free(&ct.w[i]);
    free(ct.w);
    free(ct.lat);
    metrics_stop(ct.metrics);
    free(ct.lat_cum);
    servers_free(res->srv);
    spool_free(ct.queue);
    json_decref(ct.timeline);
    json_decref(res->events);
    ledger_free(&r->ledger);
    users_free(&r->users);
    free(r->smtp);
    free(r->pop3);
    free(r->smtp_bind);
    free(r->pop3_bind);
    size_model_free(&r->sizes);
    free(r->pool);
    free((void *)r->mailbox_busy);
    foreign_free(&r->foreign);
    free(r);
    free(res);
    return rc;
}

static int duration_on_command_line(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (!strncmp(argv[i], "--duration", 10) || strstr(argv[i], "run.duration="))
            return 1;
    return 0;
}

int cmd_run(int argc, char **argv)
{
    struct config cfg;
    struct embedded demo = { 0 };
    int rc = config_from_args(&cfg, argc, argv);
    /* From here on SIGINT and SIGTERM end the run in order, the preflight too
     * (which takes up to 15 s against a server that does not answer). */
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (rc == 0 && !cfg.smtp_targets.n && !cfg.pop3_targets.n &&
        embedded_start(&cfg, &demo, !duration_on_command_line(argc, argv)) < 0)
        rc = 1;
    if (rc == 0 && cfg.check) {
        /* an independent look (libcurl) at every target before any load: a typo
         * in a port or a password is one line here, not ten minutes of errors */
        int c = check_config(&cfg, 3, stderr, &stop_signal);
        if (stop_signal) {
            fprintf(stderr, "mailsoak: %s: interrupted during the preflight check; no load was sent\n",
                    strsignal(stop_signal));
            rc = 128 + stop_signal;
        } else if (c != 0) {
            fprintf(stderr, "mailsoak: the preflight check found problems (above); no load was sent. "
                            "Fix them, or skip the check with --no-check.\n");
            rc = 3;
        }
    }
    if (rc == 0)
        rc = run_soak(&cfg);
    else if (rc == 1 && !demo.dir[0])
        rc = 0;                      /* --help */
    embedded_stop(&demo);
    config_free(&cfg);
    return rc;
}
