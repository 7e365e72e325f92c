/* session: the sets of sessions the worker walks through their protocol's table,
 * and what the SMTP and POP3 sessions share: dialling, the backoff after failures,
 * round robin over source addresses, and the error classes of a failed connection
 * or of input nobody asked for. */
#include "engine/session.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/conn.h"
#include "lib/units.h"

static void *nth(const struct session_set *set, unsigned i)
{
    return set->v + (size_t)i * set->ops->size;
}

void session_set_init(struct session_set *set, const struct session_ops *ops, struct session_env *env,
                      unsigned n, unsigned base)
{
    set->ops = ops;
    set->n = n;
    set->v = xcalloc(n, ops->size);
    for (unsigned i = 0; i < n; i++)
        ops->init(nth(set, i), env, base + i);
}

void session_set_start(struct session_set *set)
{
    for (unsigned i = 0; i < set->n; i++)
        set->ops->start(nth(set, i));
}

void session_set_phase(struct session_set *set, int phase)
{
    for (unsigned i = 0; i < set->n; i++)
        set->ops->phase(nth(set, i), phase);
}

unsigned session_set_open(const struct session_set *set)
{
    unsigned n = 0;
    for (unsigned i = 0; i < set->n; i++)
        n += set->ops->is_open(nth(set, i)) != 0;
    return n;
}

void session_set_free(struct session_set *set)
{
    for (unsigned i = 0; set->v && i < set->n; i++)
        set->ops->free(nth(set, i));
    free(set->v);
    set->v = NULL;
    set->n = 0;
}

int session_dial(struct session_env *env, struct conn *c, const struct target *t, const struct target *bind)
{
    (void)env;
    return conn_connect(c, (const struct sockaddr *)&t->sa, t->len, bind ? (const struct sockaddr *)&bind->sa : NULL,
                        bind ? bind->len : 0);
}

uint64_t backoff_ms(unsigned fails, int refused)
{
    uint64_t cap = refused ? 10000 : 1000;
    uint64_t ms = fails ? 50ull << (fails < 8 ? fails : 8) : 0;
    return ms < cap ? ms : cap;
}

const struct target *next_bind(struct session_env *env, const struct target *v, unsigned n)
{
    return n ? &v[env->rr_bind++ % n] : NULL;
}

void count_conn_error(struct session_env *env, const char *proto, const char *stage, const struct conn *c)
{
    static const char *const kind[] = {
        [CE_NONE] = "closed", [CE_EOF] = "closed", [CE_REFUSED] = "refused", [CE_RESET] = "reset",
        [CE_CONNECT_TIMEOUT] = "timeout", [CE_UNREACHABLE] = "unreachable", [CE_TLS] = "tls",
        [CE_IO] = "io", [CE_OVERLONG] = "protocol",
    };
    char name[ERR_NAME_LEN];
    /* A reset or an EOF proves the connection was made: if it comes before we saw
     * the connect complete, it belongs to the wait for the banner. */
    if (!strcmp(stage, "connect") && (c->err == CE_RESET || c->err == CE_EOF))
        stage = "banner";
    snprintf(name, sizeof name, "%s_%s_%s", proto, stage, kind[c->err]);
    stats_error(env->st, name, c->errmsg[0] ? c->errmsg : NULL);
}

void count_unanswered(struct session_env *env, const char *proto, const char *stage, const struct conn *c,
                      uint64_t timeout)
{
    if (!conn_is_open(c) || !c->deadline)
        return;
    uint64_t asked = c->deadline - timeout, heard = c->last_in > asked ? c->last_in : asked;
    if (loop_now(env->loop) - heard < UNANSWERED_NS)
        return;
    char name[ERR_NAME_LEN];
    snprintf(name, sizeof name, "%s_%s_unanswered", proto, stage);
    stats_error(env->st, name, NULL);
}

/* What a stage waits for, in words after "no": "connection", "greeting", "reply to
 * RETR". */
static void awaited(char *buf, size_t n, const char *stage)
{
    if (!strcmp(stage, "connect"))
        snprintf(buf, n, "connection");
    else if (!strcmp(stage, "banner"))
        snprintf(buf, n, "greeting");
    else if (!strcmp(stage, "eod"))
        snprintf(buf, n, "reply to the end of data");
    else if (!strcmp(stage, "tls"))
        snprintf(buf, n, "TLS handshake");
    else {
        size_t k = (size_t)snprintf(buf, n, "reply to ");
        for (; *stage && k + 1 < n; stage++)
            buf[k++] = (char)toupper((unsigned char)*stage);
        buf[k < n ? k : n - 1] = 0;
    }
}

void count_timeout(struct session_env *env, const char *proto, const char *stage, const struct conn *c,
                   uint64_t timeout)
{
    char name[ERR_NAME_LEN], ex[ERR_EXAMPLE_LEN], what[48], t[32];
    awaited(what, sizeof what, stage);
    snprintf(name, sizeof name, "%s_%s_timeout", proto, stage);
    size_t k = (size_t)snprintf(ex, sizeof ex, "no %s within %s", what, fmt_duration(t, sizeof t, timeout));
    if (conn_avail(c) && k < sizeof ex)
        snprintf(ex + k, sizeof ex - k, "; %zu bytes of it had come", conn_avail(c));
    stats_error(env->st, name, ex);
}

void count_unasked(struct session_env *env, const char *proto, const char *stage, const struct conn *c)
{
    char name[ERR_NAME_LEN], ex[ERR_EXAMPLE_LEN];
    const char *p = conn_peek(c), *nl = memchr(p, '\n', conn_avail(c));
    size_t n = nl ? (size_t)(nl - p) : conn_avail(c);
    int k = snprintf(ex, sizeof ex, "sent unasked: ");
    if (n > sizeof ex - (size_t)k)
        n = sizeof ex - (size_t)k;
    memcpy(ex + k, p, n);
    snprintf(name, sizeof name, "%s_%s_protocol", proto, stage);
    stats_error_text(env->st, name, ex, (size_t)k + n);
}

void session_judge_body(struct session_env *env, const struct msg_check *chk, enum msg_result v,
                        struct ledger_entry *e, uint32_t user)
{
    struct run *r = env->run;
    uint64_t d8;
    memcpy(&d8, chk->digest, sizeof d8);
    /* an empty body sent, one empty line served: the store's format, not damage */
    /* A copy of a compacted message (ledger_compact): what was sent is gone, so the
     * copy is judged by its own digest header alone. */
    int revived = (atomic_load_explicit(&e->state, memory_order_relaxed) & LS_REVIVED) != 0;
    int empty_as_line = v == MSG_EMPTY_AS_LINE && (revived || (d8 == e->digest8 && e->size == 0));
    if (empty_as_line)
        env->st->c.empty_body_as_line++;
    if (empty_as_line ? !r->cfg->strict_bodies
                      : v == MSG_OK && (revived || (d8 == e->digest8 && chk->body_bytes == e->size)))
        return;
    ledger_corrupt(e);
    unsigned k = env->st->corrupt.n;
    if (k < ERR_EXAMPLES_MAX)      /* the entry: the message's id plus its recipient's index */
        env->st->corrupt_entry[k] = chk->seq + (atomic_load_explicit(&e->state, memory_order_relaxed) >> LS_RCPT_SHIFT);
    char sent[40] = "size not kept (compacted)";
    if (!revived)
        snprintf(sent, sizeof sent, "%u", e->size);
    stats_example(&env->st->corrupt, env->st->max_examples, "%s-%llx for %s: body %llu bytes, sent %s; %s",
                  chk->run_id, (unsigned long long)chk->seq, r->users.v[user].addr,
                  (unsigned long long)chk->body_bytes, sent,
                  empty_as_line ? "empty body served as one empty line (run.strict_bodies)"
                  : v != MSG_OK ? (chk->bad_header ? "our headers mangled" : "body digest differs")
                                : "digest header differs from the one sent");
}
