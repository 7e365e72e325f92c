/* setup: the run's shared state before the workers start: every target and source
 * address resolved, the users (cut to this shard's), the size model, the seed and
 * the run id, the text pool and the ledger; and its release. */
#include "run/setup.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/rng.h"

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
    *out = xcalloc(l->n, sizeof **out);
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

/* 10,000 sessions need more descriptors than the usual soft limit of 1024; the
 * collector's kept /proc files come on top where the hard limit has room
 * (config_check_limits refused a run whose sessions it cannot hold). */
static void raise_nofile(uint64_t sessions)
{
    struct rlimit rl;
    uint64_t want = sessions + CONFIG_FD_RESERVE + CONFIG_FD_KEPT;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || want < rl.rlim_max ? want : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* smtp.rcpts_weights: "70,20,10" into the cumulative shares of 1, 2, 3 recipients. */
static int setup_rcpts(struct run *r, const char *spec, char *err, size_t errlen)
{
    double sum = 0, w[MAX_RCPTS];
    unsigned n = 0;
    const char *p = spec;
    while (*p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v >= 0) || n == MAX_RCPTS || (*end && *end != ',')) {
            snprintf(err, errlen, "smtp.rcpts_weights: '%s': expected up to %d weights >= 0, by commas", spec, MAX_RCPTS);
            return -1;
        }
        w[n++] = v;
        sum += v;
        p = *end ? end + 1 : end;
    }
    if (n && !(sum > 0)) {
        snprintf(err, errlen, "smtp.rcpts_weights: '%s': the weights add up to 0", spec);
        return -1;
    }
    double c = 0;
    for (unsigned i = 0; i < n; i++)
        r->rcpt_cdf[i] = (c += w[i]) / sum;
    r->nrcpt_w = n;
    return 0;
}

/* Everything the workers share, before they start: addresses, users, sizes, the
 * seed and run id, the text pool, the ledger. 0, 1 (out of memory) or 2. */
int setup_run(struct run *r, const struct config *cfg, unsigned nw)
{
    char err[400];
    r->cfg = cfg;
    if (resolve_all(&cfg->smtp_targets, "smtp.target", &r->smtp, &r->nsmtp, resolve) < 0 ||
        resolve_all(&cfg->pop3_targets, "pop3.target", &r->pop3, &r->npop3, resolve) < 0 ||
        resolve_all(&cfg->imap_targets, "imap.target", &r->imap, &r->nimap, resolve) < 0 ||
        resolve_all(&cfg->smtp_bind, "smtp.bind", &r->smtp_bind, &r->nsmtp_bind, resolve_bind) < 0 ||
        resolve_all(&cfg->pop3_bind, "pop3.bind", &r->pop3_bind, &r->npop3_bind, resolve_bind) < 0 ||
        setup_users(r, cfg) < 0)
        return 2;
    if (size_model_init(&r->sizes, (enum size_dist)cfg->size_dist, cfg->size, cfg->size_median, cfg->size_spread,
                        cfg->size_file, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak: %s\n", err);
        return 2;
    }
    if (setup_rcpts(r, cfg->rcpts_weights, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak: %s\n", err);
        return 2;
    }
    if (cfg->content == MSG_CORPUS && corpus_open(&r->corpus, cfg->corpus, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak: smtp.corpus: %s\n", cfg->corpus[0] ? err : "needed for content = corpus");
        return 2;
    }
    if (cfg->content == MSG_CORPUS && r->corpus.skipped)
        fprintf(stderr, "mailsoak: smtp.corpus: %llu messages of %s skipped (empty, or over 16 MiB)\n",
                (unsigned long long)r->corpus.skipped, cfg->corpus);
    r->ladder = cfg->size_dist == SIZE_LADDER;
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
    r->mailbox_busy = xcalloc(r->users.n, sizeof *r->mailbox_busy);
    imap_model_users(cfg, r->users.n, r->imap_users);
    r->imap_own = (unsigned)imap_idle_users(cfg, r->users.n);
    ledger_init(&r->ledger, nw, r->users.n);
    stage_clock_init(&r->stages, &cfg->profile);
    foreign_init(&r->foreign, r->users.n);
    uint64_t imap_keep = 0;
    if (cfg->pop3_leave || (cfg->reader_protocol == READERS_IMAP && imap_delete_parse(cfg->imap_delete, &imap_keep) == 0 &&
                            imap_keep))
        known_init(&r->seen, r->users.n);
    /* the delivery's split needs each mailbox's last listing: with polling, and with
     * the readers' back-off from empty mailboxes (both delay a retrieval) */
    if (cfg->poll_interval || (cfg->empty_backoff && cfg->readers))
        r->list_ms = xcalloc(r->users.n, sizeof *r->list_ms);
    if (cfg->empty_backoff && cfg->readers)
        r->empty_hold = xcalloc(r->users.n, sizeof *r->empty_hold);
    raise_nofile(cfg->senders + cfg->readers + r->imap_own);
    return 0;
}

void run_free(struct run *r)
{
    if (!r)
        return;
    ledger_free(&r->ledger);
    users_free(&r->users);
    free(r->smtp);
    free(r->pop3);
    free(r->imap);
    free(r->smtp_bind);
    free(r->pop3_bind);
    size_model_free(&r->sizes);
    free(r->pool);
    free((void *)r->mailbox_busy);
    foreign_free(&r->foreign);
    known_free(&r->seen);
    corpus_free(&r->corpus);
    free((void *)r->list_ms);
    free((void *)r->empty_hold);
    free(r);
}
