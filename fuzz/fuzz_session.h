/* fuzz_session.h: what the session fuzzers (fuzz_imap_session.c,
 * fuzz_pop3_session.c) share: one reader session of the real engine code, run
 * against the fuzzer's input as the server's side, over a socketpair its dial
 * gives instead of TCP, on a loop clock of its own (no time passes but when the
 * input says so, so nothing waits for the wall clock). A small run's ledger
 * holds four of our messages for user 0 (three accepted, one not yet), so reads
 * are committed for real, and the invariants the ledger promises whatever a
 * server says are checked after each of the server's turns and at the end.
 *
 * The input is the server's bytes, with escapes: "@|" ends a turn (what came
 * before is written, the session runs until it waits), "@T" ends one and lets
 * time pass to the session's next timer (a timeout, a renewal, the next
 * session's start), "@X" hangs up, "@P" moves the run to its next phase (send,
 * drain, sweep, stop), "@0".."@3" is our message 0..3 as the protocol carries
 * it (fz_ops.body), "@@" an '@'. */
#ifndef MS_FUZZ_SESSION_H
#define MS_FUZZ_SESSION_H

#include <errno.h>
#include <strings.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/session.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/conn.h"
#include "run/setup.h"
#include "settings/config.h"

#include "fuzz.h"

#define FZ_MSGS 4
#define FZ_ACCEPTED 3                /* messages 0..2 accepted; 3 not yet (pushed before its 250) */
#define FZ_MSG_MAX 16384

struct fz {
    struct config cfg;
    struct run *run;
    struct wstats *st;
    struct msg_gen gen;
    struct loop *loop;
    uint64_t now;                    /* the loop's clock */
    struct session_env env;
    struct session_set set;
    int peer;                        /* the server's end of the connection, -1 */
    unsigned dials;
    size_t line;                     /* the length of the client's line so far */
    char cmd[64];                    /* its start */
    int trace;                       /* FUZZ_TRACE set: both sides to stderr (a seed's replay) */
    char msg[FZ_MSGS][FZ_MSG_MAX];   /* each message as SMTP's DATA carries it */
    size_t msglen[FZ_MSGS];
    unsigned served[FZ_MSGS];        /* how often the server handed out message k */
    uint64_t expunges;               /* how often "EXPUNGE" came in the server's bytes (written) */
    char *out;                       /* the turn being gathered */
    size_t outlen, outcap;
    int phase;
    /* the protocol's part */
    size_t (*body)(struct fz *f, unsigned k, char *out, size_t n);  /* message k as served */
    size_t max_line;                 /* the longest command line the client may send */
    void (*check)(struct fz *f);     /* the session's own invariants, after each turn */
    void (*said)(struct fz *f, const char *cmd);   /* each line the client sent (its start) */
    uint64_t sent[4];                /* the protocol's counts of the commands it cares for */
    uint64_t read_at_dial;           /* the worker's reads when this connection began */
};

static inline int fz_dial(struct session_env *env, struct conn *c, const struct target *t, const struct target *b)
{
    struct fz *f = env->dial_ctx;
    int sv[2];
    (void)t;
    (void)b;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv))
        abort();
    if (f->peer >= 0)
        close(f->peer);
    f->peer = sv[1];
    f->line = 0;
    f->dials++;
    f->read_at_dial = f->st->c.read;
    return conn_connect_fd(c, sv[0]);
}

/* What the client sent: lines of printable ASCII (a server's bytes never echoed
 * into a command), none longer than the protocol's commands. */
static inline void fz_take(struct fz *f)
{
    static char in[1 << 16];
    ssize_t r;
    while (f->peer >= 0 && (r = read(f->peer, in, sizeof in)) > 0) {
        if (f->trace)
            fprintf(stderr, "C> %.*s", (int)r, in);
        for (ssize_t i = 0; i < r; i++) {
            unsigned char ch = (unsigned char)in[i];
            if (ch == '\n') {
                f->cmd[f->line < sizeof f->cmd - 1 ? f->line : sizeof f->cmd - 1] = 0;
                if (f->said)
                    f->said(f, f->cmd);
                f->line = 0;
                continue;
            }
            if ((ch < 0x20 && ch != '\r') || ch > 0x7e || ++f->line > f->max_line)
                abort();
            if (f->line < sizeof f->cmd)
                f->cmd[f->line - 1] = (char)ch;
        }
    }
}

/* Runs the loop at the current clock until nothing is ready. */
static inline void fz_idle(struct fz *f)
{
    for (unsigned i = 0;; i++) {
        if (i == 100000)
            abort();                 /* never idle: the session spins */
        int ran = loop_run_at(f->loop, f->now);
        fz_take(f);
        if (!ran)
            return;
    }
}

static inline void fz_checks(struct fz *f);

/* Writes the turn gathered, the session reading between writes; a session that
 * stops reading (it closed, or its buffer is full) drops the rest. */
static inline void fz_flush(struct fz *f)
{
    size_t off = 0;
    /* what the server's bytes could have reported removed: an upper bound */
    for (size_t i = 0; i + 7 <= f->outlen; i++)
        f->expunges += !strncasecmp(f->out + i, "EXPUNGE", 7);
    for (unsigned full = 0; f->peer >= 0 && off < f->outlen;) {
        ssize_t w = send(f->peer, f->out + off, f->outlen - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            off += (size_t)w;
            full = 0;
            continue;
        }
        if (w < 0 && errno == EAGAIN && ++full < 4) {
            fz_idle(f);
            continue;
        }
        break;
    }
    if (f->trace)
        fprintf(stderr, "S> %.*s(%zu of %zu written)\n", (int)f->outlen, f->out, off, f->outlen);
    f->outlen = 0;
    fz_idle(f);
    fz_checks(f);
}

static inline void fz_put(struct fz *f, const char *p, size_t n)
{
    if (f->outlen + n > f->outcap) {
        f->outcap = (f->outlen + n) * 2;
        f->out = xrealloc(f->out, f->outcap);
    }
    memcpy(f->out + f->outlen, p, n);
    f->outlen += n;
}

/* One of our messages for user 0 into f->msg[k]; accepted when accepted. */
static inline void fz_message(struct fz *f, unsigned k, int accepted)
{
    struct run *r = f->run;
    uint8_t digest[MSG_DIGEST_LEN];
    struct msg_params p = {
        .run_id = r->run_id, .from = "mailsoak@test.local", .to = r->users.v[0].addr,
        .body_size = 200 + 50 * k, .body_seed = 7 + k, .nrcpt = 1,
    };
    size_t blen = msg_body(&f->gen, &p, digest);
    uint64_t d8;
    memcpy(&d8, digest, sizeof d8);
    uint64_t idx = ledger_add(&r->ledger, 0, 0, (uint32_t)blen, d8, 0);
    p.seq = ledger_seq(0, idx);
    if (accepted)
        ledger_accept(&r->ledger, ledger_get(&r->ledger, p.seq), 0);
    if (msg_wire_max(&f->gen, &p, blen) >= FZ_MSG_MAX)
        abort();
    f->msglen[k] = msg_write(&f->gen, &p, blen, digest, f->msg[k]);
}

/* A run of one reader session of ops under settings argv (NULL-terminated). */
static inline void fz_new(struct fz *f, const struct session_ops *ops, const char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    f->peer = -1;
    f->trace = getenv("FUZZ_TRACE") != NULL;
    if (config_from_args(&f->cfg, argc, (char **)argv))
        abort();
    f->run = xcalloc(1, sizeof *f->run);
    if (setup_run(f->run, &f->cfg, 1))
        abort();
    f->run->t0 = mono_ns();
    f->st = xcalloc(1, sizeof *f->st);
    stats_init(f->st, 5);
    if (msg_gen_init(&f->gen, f->run->pool, f->run->poolsize) || !(f->loop = loop_new()))
        abort();
    for (unsigned k = 0; k < FZ_MSGS; k++)
        fz_message(f, k, k < FZ_ACCEPTED);
    f->now = loop_now(f->loop);
    f->env = (struct session_env){
        .loop = f->loop, .run = f->run, .st = f->st, .gen = &f->gen, .dial = fz_dial, .dial_ctx = f,
    };
    session_set_init(&f->set, ops, &f->env, 1, 0);
    session_set_start(&f->set);
    fz_idle(f);
}

static inline void fz_free(struct fz *f)
{
    if (f->trace)
        for (unsigned i = 0; i < f->st->nerr; i++)
            fprintf(stderr, "-- error %s x%llu: %s\n", f->st->err[i].name, (unsigned long long)f->st->err[i].count,
                    f->st->ex[i].n ? f->st->ex[i].text[0] : "");
    if (f->trace)
        fprintf(stderr, "-- read %llu, dials %u\n", (unsigned long long)f->st->c.read, f->dials);
    session_set_free(&f->set);
    if (f->peer >= 0)
        close(f->peer);
    msg_gen_free(&f->gen);
    retryq_free(&f->env.retry);
    dueheap_free(&f->env.polls);
    loop_free(f->loop);
    run_free(f->run);
    config_free(&f->cfg);
    free(f->st);
    free(f->out);
}

/* Time passes to the next timer (none: an hour), and the session runs there. */
static inline void fz_time(struct fz *f)
{
    if (f->trace)
        fprintf(stderr, "-- time passes\n");
    uint64_t next = loop_next_timer(f->loop), cap = f->now + 3600 * NS_PER_S;
    f->now = next > f->now && next < cap ? next : next <= f->now ? f->now : cap;
    fz_idle(f);
    fz_checks(f);
}

static inline void fz_phase(struct fz *f, int phase)
{
    f->phase = phase;
    atomic_store(&f->run->phase, phase);
    session_set_phase(&f->set, phase);
    fz_idle(f);
    fz_checks(f);
}

/* What the ledger promises whatever the server said: each message read at most
 * as often as the server handed it out (no read the session did not fetch);
 * the worker's read count is the ledger's; what is owed is what was accepted
 * and never read, and never negative; a message read was seen (judged). */
static inline void fz_checks(struct fz *f)
{
    struct ledger *l = &f->run->ledger;
    uint64_t reads = 0;
    int64_t owed = 0;
    for (unsigned k = 0; k < FZ_MSGS; k++) {
        uint32_t s = atomic_load(&ledger_get(l, ledger_seq(0, k))->state);
        unsigned n = s & LS_READS;
        if (n > f->served[k] || (n && !(s & LS_SEEN)))
            abort();
        reads += n;
        owed += (s & LS_ACCEPTED) && !n;
    }
    if (f->st->c.read != reads || atomic_load(&l->owed_total) != owed || atomic_load(&l->owed[0]) != owed)
        abort();
    if (f->check)
        f->check(f);
}

/* The input after its settings byte, turn by turn; then the run stops. */
static inline void fz_play(struct fz *f, const uint8_t *d, size_t n)
{
    char lit[FZ_MSG_MAX + 32];
    for (size_t i = 0; i < n; i++) {
        if (d[i] != '@' || i + 1 == n) {
            fz_put(f, (const char *)d + i, 1);
            continue;
        }
        unsigned char e = d[++i];
        if (e == '|') {
            fz_flush(f);
        } else if (e == 'T') {
            fz_flush(f);
            fz_time(f);
        } else if (e == 'X') {
            fz_flush(f);
            if (f->peer >= 0)
                close(f->peer);
            f->peer = -1;
            fz_idle(f);
            fz_checks(f);
        } else if (e == 'P') {
            fz_flush(f);
            if (f->phase < PH_STOP)
                fz_phase(f, f->phase + 1);
        } else if (e >= '0' && e < '0' + FZ_MSGS) {
            unsigned k = e - '0';
            f->served[k]++;
            fz_put(f, lit, f->body(f, k, lit, sizeof lit));
        } else if (e == '@') {
            fz_put(f, "@", 1);
        } else {
            fz_put(f, (const char *)d + i - 1, 2);
        }
    }
    fz_flush(f);
    if (f->phase < PH_STOP)
        fz_phase(f, PH_STOP);
    fz_time(f);                      /* an EXPUNGE awaited at the stop times out */
}

#endif
