/* remote: pulling a probe (see remote.h). libcurl does the HTTP: an easy handle
 * per probe keeps its connection open between pulls. The response is bounded
 * and checked (probe/wire.c); a failed pull is counted and the next one asks from
 * the same place, so an outage loses no sample the probe still keeps. */
#include "run/remote.h"

#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/alloc.h"
#include "lib/clock.h"
#include "probe/wire.h"

enum {
    MAX_BODY = 16 << 20,             /* WIRE_MAX_SAMPLES samples with their lines fit many times */
    CONNECT_TIMEOUT_MS = 3000,
    TIMEOUT_MS = 10000,              /* a fresh sample may walk a large store first */
    CLOCK_PULLS = 5,                 /* exchanges before the baseline */
};

void clock_est_add(struct clock_est *c, uint64_t sent, uint64_t recv, uint64_t remote)
{
    if (recv < sent)
        return;
    uint64_t rtt = recv - sent;
    c->x[c->next].rtt = rtt;
    c->x[c->next].offset = (int64_t)(remote - (sent + rtt / 2));
    c->next = (c->next + 1) % CLOCK_EXCHANGES;
    if (c->n < CLOCK_EXCHANGES)
        c->n++;
}

int clock_est_best(const struct clock_est *c, int64_t *offset, uint64_t *rtt)
{
    if (!c->n)
        return 0;
    unsigned b = 0;
    for (unsigned i = 1; i < c->n; i++)
        if (c->x[i].rtt < c->x[b].rtt)
            b = i;
    *offset = c->x[b].offset;
    *rtt = c->x[b].rtt;
    return 1;
}

int remote_parse(const char *spec, char *label, size_t labellen, char *url, size_t urllen, char *err, size_t errlen)
{
    const char *eq = strchr(spec, '='), *u = spec;
    size_t ll = 0;
    if (eq && !memchr(spec, ':', (size_t)(eq - spec)) && !memchr(spec, '/', (size_t)(eq - spec))) {
        ll = (size_t)(eq - spec);
        u = eq + 1;
        if (!ll || ll >= labellen || strspn(spec, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") < ll) {
            snprintf(err, errlen, "'%s': a label is letters, digits, '.', '_' and '-'", spec);
            return -1;
        }
    }
    const char *rest = !strncmp(u, "http://", 7) ? u + 7 : !strncmp(u, "https://", 8) ? u + 8 : NULL;
    size_t hl = rest ? strcspn(rest, "/?#") : 0;
    if (!rest || !hl || (rest[hl] && strcmp(rest + hl, "/"))) {
        snprintf(err, errlen, "'%s': expected [LABEL=]http://HOST:PORT", spec);
        return -1;
    }
    if ((size_t)(rest + hl - u) >= urllen) {
        snprintf(err, errlen, "'%s': too long", spec);
        return -1;
    }
    snprintf(url, urllen, "%.*s", (int)(rest + hl - u), u);
    if (ll)
        snprintf(label, labellen, "%.*s", (int)ll, spec);
    else
        snprintf(label, labellen, "%.*s", (int)hl, rest);
    return 0;
}

struct body {
    char *p;
    size_t n, cap;
};

struct remote {
    char label[64], url[512];
    CURL *h;
    struct curl_slist *headers;
    struct body b;
    struct wire_state w;             /* w.series is read by other threads: it locks itself */
    uint64_t interval;

    pthread_mutex_t mu;              /* what follows, between the puller and the readers */
    pthread_cond_t cv;
    pthread_t thread;
    int running, stopping;
    /* remote_refresh: pulls with a fresh sample asked for, done, and when the last
     * one began (mono ns): the probe walked after that */
    uint64_t fresh_wanted, fresh_done, fresh_t;
    int fresh_ok;
    struct clock_est clock;
    uint64_t pulls, errors;
    char last_error[256];
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    struct body *b = ud;
    size_t k = sz * n;
    if (b->n + k > MAX_BODY)
        return 0;                    /* libcurl fails the transfer: CURLE_WRITE_ERROR */
    b->p = grow(b->p, &b->cap, b->n, k + 1, 1);
    memcpy(b->p + b->n, p, k);
    b->n += k;
    b->p[b->n] = 0;
    return k;
}

/* GET url+path into r->b; 0, or -1 with the reason in err. *sent and *recv frame it. */
static int get(struct remote *r, const char *path, uint64_t *sent, uint64_t *recv, char *err, size_t errlen)
{
    char url[700];
    snprintf(url, sizeof url, "%s%s", r->url, path);
    r->b.n = 0;
    curl_easy_setopt(r->h, CURLOPT_URL, url);
    *sent = mono_ns();
    CURLcode rc = curl_easy_perform(r->h);
    *recv = mono_ns();
    long status = 0;
    curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s: %s", r->url, rc == CURLE_WRITE_ERROR ? "response too large" : curl_easy_strerror(rc));
        return -1;
    }
    if (status != 200) {
        snprintf(err, errlen, "%s: HTTP %ld%s", r->url, status,
                 status == 401 ? " (wrong or missing server.probe_token)" : "");
        return -1;
    }
    return 0;
}

static int pull_time(struct remote *r, char *err, size_t errlen)
{
    uint64_t sent, recv;
    if (get(r, "/time", &sent, &recv, err, errlen) < 0)
        return -1;
    uint64_t now;
    if (wire_time_decode(r->b.p, r->b.n, &now) < 0) {
        snprintf(err, errlen, "%s/time: not a mailsoak probe's answer", r->url);
        return -1;
    }
    pthread_mutex_lock(&r->mu);
    clock_est_add(&r->clock, sent, recv, now);
    pthread_mutex_unlock(&r->mu);
    return 0;
}

/* The samples since the last pull (fresh: the probe samples first), in as many
 * requests as a puller that fell behind (an outage) needs to catch up. */
static int pull_once(struct remote *r, int fresh, char *err, size_t errlen);

static int pull(struct remote *r, int fresh, char *err, size_t errlen)
{
    int rc = pull_once(r, fresh, err, errlen);
    for (int i = 0; rc == 0 && r->w.more && i < 1000; i++)
        rc = pull_once(r, 0, err, errlen);
    return rc;
}

static int pull_once(struct remote *r, int fresh, char *err, size_t errlen)
{
    char path[160];
    const struct wire_query *q = &r->w.next;
    int n = snprintf(path, sizeof path, "/samples?fresh=%d", fresh);
    if (q->has_since)
        n += snprintf(path + n, sizeof path - (size_t)n, "&since=%llu", (unsigned long long)q->since);
    if (q->has_events)
        snprintf(path + n, sizeof path - (size_t)n, "&events=%llu", (unsigned long long)q->events);
    uint64_t sent, recv;
    char why[300];
    int rc = get(r, path, &sent, &recv, err, errlen);
    if (rc == 0 && wire_decode(&r->w, r->b.p ? r->b.p : "", r->b.n, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s: %s", r->url, why);
        rc = -1;
    }
    pthread_mutex_lock(&r->mu);
    r->pulls++;
    if (rc < 0) {
        r->errors++;
        snprintf(r->last_error, sizeof r->last_error, "%s", err);
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

/* Between pulls, one /time exchange keeps the clock estimate current. A pull with a
 * fresh sample (remote_refresh) goes at once, between the pulls at their pace. */
static void *puller(void *arg)
{
    struct remote *r = arg;
    char err[400];
    int down = 0;
    pthread_mutex_lock(&r->mu);
    uint64_t next = mono_ns() + r->interval;
    while (!r->stopping) {
        struct timespec ts = { (time_t)(next / 1000000000ull), (long)(next % 1000000000ull) };
        if (r->fresh_wanted == r->fresh_done)
            pthread_cond_timedwait(&r->cv, &r->mu, &ts);
        uint64_t want = r->fresh_wanted, began = mono_ns();
        int fresh = want > r->fresh_done;
        if (r->stopping || (!fresh && began < next))
            continue;
        pthread_mutex_unlock(&r->mu);
        int ok = pull_time(r, err, sizeof err) == 0 && pull(r, fresh, err, sizeof err) == 0;
        /* an outage is one event when it starts and one when it ends, not one per pull */
        if ((!ok) != down && r->w.series) {
            int64_t off = remote_offset(r);
            series_event(r->w.series, (uint64_t)((int64_t)mono_ns() + off), down ? "probe_back" : "probe_failing",
                         down ? "the probe answers again" : err);
            down = !ok;
        }
        uint64_t now = mono_ns();
        while (next <= now)
            next += r->interval;
        pthread_mutex_lock(&r->mu);
        if (fresh) {
            r->fresh_done = want;
            r->fresh_ok = ok;
            if (ok)
                r->fresh_t = began;
            pthread_cond_broadcast(&r->cv);
        }
    }
    pthread_cond_broadcast(&r->cv);      /* a refresh still waiting: the puller is gone */
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int remote_refresh(struct remote *r, uint64_t min_age_ns, uint64_t timeout_ns)
{
    if (!r)
        return -1;
    uint64_t deadline = mono_ns() + timeout_ns;
    struct timespec ts = { (time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull) };
    pthread_mutex_lock(&r->mu);
    if (r->fresh_t && mono_ns() - r->fresh_t < min_age_ns) {
        pthread_mutex_unlock(&r->mu);
        return 0;
    }
    uint64_t want = ++r->fresh_wanted;
    pthread_cond_broadcast(&r->cv);
    int rc = 0;
    while (r->running && !r->stopping && r->fresh_done < want && rc == 0)
        rc = pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    int ok = r->fresh_done >= want && r->fresh_ok;
    pthread_mutex_unlock(&r->mu);
    return ok ? 0 : -1;
}

struct remote *remote_start(const char *spec, const char *token, size_t examples, uint64_t interval_ns,
                            char *err, size_t errlen)
{
    struct remote *r = xcalloc(1, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    r->w.examples = examples;
    r->interval = interval_ns ? interval_ns : 1000000000ull;
    if (remote_parse(spec, r->label, sizeof r->label, r->url, sizeof r->url, err, errlen) < 0) {
        remote_free(r);
        return NULL;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    r->h = curl_easy_init();
    if (!r->h) {
        snprintf(err, errlen, "%s: libcurl cannot start", r->url);
        remote_free(r);
        return NULL;
    }
    if (token && token[0]) {
        char *auth = xmalloc(strlen(token) + 32);
        sprintf(auth, "Authorization: Bearer %s", token);
        r->headers = curl_slist_append(NULL, auth);
        free(auth);
        curl_easy_setopt(r->h, CURLOPT_HTTPHEADER, r->headers);
    }
    curl_easy_setopt(r->h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(r->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(r->h, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
    curl_easy_setopt(r->h, CURLOPT_TIMEOUT_MS, (long)TIMEOUT_MS);
    curl_easy_setopt(r->h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(r->h, CURLOPT_WRITEDATA, &r->b);
    for (int i = 0; i < CLOCK_PULLS; i++)
        if (pull_time(r, err, errlen) < 0) {
            remote_free(r);
            return NULL;
        }
    /* The baseline: a sample the probe takes now, and the events from now on. */
    if (pull(r, 1, err, errlen) < 0) {
        remote_free(r);
        return NULL;
    }
    /* Signals are the run controller's. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&r->thread, NULL, puller, r);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        snprintf(err, errlen, "%s: cannot start a thread", r->url);
        remote_free(r);
        return NULL;
    }
    r->running = 1;
    return r;
}

void remote_stop(struct remote *r)
{
    if (!r || !r->running)
        return;
    pthread_mutex_lock(&r->mu);
    r->stopping = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    r->running = 0;
    char err[400];
    /* The window's last sample is taken now, as the local collector's is; the
     * samples since the last pull come with it. */
    pull(r, 1, err, sizeof err);
}

void remote_free(struct remote *r)
{
    if (!r)
        return;
    remote_stop(r);
    if (r->h) {
        curl_easy_cleanup(r->h);
        curl_global_cleanup();       /* pairs remote_start's curl_global_init */
    }
    curl_slist_free_all(r->headers);
    free(r->b.p);
    wire_state_free(&r->w);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

const char *remote_label(const struct remote *r)
{
    return r->label;
}

struct series *remote_series(struct remote *r)
{
    return r->w.series;
}

int64_t remote_offset(struct remote *r)
{
    int64_t off = 0;
    uint64_t rtt;
    pthread_mutex_lock(&r->mu);
    clock_est_best(&r->clock, &off, &rtt);
    pthread_mutex_unlock(&r->mu);
    return off;
}

void remote_view(struct remote *r, struct run_source *o)
{
    int64_t off = 0;
    uint64_t rtt = 0;
    pthread_mutex_lock(&r->mu);
    clock_est_best(&r->clock, &off, &rtt);
    o->remote = 1;
    o->url = xstrdup(r->url);
    o->host = xstrdup(r->w.host);
    o->clock_offset_ms = (double)off / 1e6;
    o->clock_error_ms = (double)rtt / 2e6;
    o->pulls = r->pulls;
    o->pull_errors = r->errors;
    o->last_error = r->last_error[0] ? xstrdup(r->last_error) : NULL;
    o->restarts = r->w.restarts;
    o->gaps = r->w.gaps;
    pthread_mutex_unlock(&r->mu);
}
