/* session_script: runs one protocol session (smtp.c or pop3.c) against a scripted
 * server in the test itself. The session's environment dials a socketpair instead
 * of TCP; the test holds the other end, reads what the session sent and writes the
 * server's replies, driving the session's loop in between. The loop runs on a
 * clock of the test's (loop_run_at): it runs until nothing is ready, and time
 * passes only when the test says so (script_run), timer by timer. So no step waits
 * on the wall clock, and a loaded machine cannot make one late. Included by
 * test_smtp.c and test_pop3.c. */
#ifndef SESSION_SCRIPT_H
#define SESSION_SCRIPT_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/session.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/conn.h"
#include "settings/config.h"
#include "run/setup.h"

struct script {
    struct config cfg;
    struct run *run;
    struct wstats *st;
    struct msg_gen gen;
    struct loop *loop;
    uint64_t now;                    /* the loop's clock, moved by script_run only */
    struct session_env env;
    struct session_set set;
    int peer;                        /* the server's end of the current connection, -1 */
    unsigned dials;
    char in[1 << 16];                /* what the session sent and the test has not taken */
    size_t inlen;
};

static inline int script_dial(struct session_env *env, struct conn *c, const struct target *t, const struct target *b)
{
    struct script *sc = env->dial_ctx;
    int sv[2];
    (void)t;
    (void)b;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
    if (sc->peer >= 0)
        close(sc->peer);
    sc->peer = sv[1];
    sc->inlen = 0;
    sc->dials++;
    return conn_connect_fd(c, sv[0]);
}

/* Runs the session's loop without moving its clock until nothing is ready (no
 * event, no timer due, nothing more sent), taking what the session sent. A
 * socketpair's bytes are ready to the other end as soon as write() returns, so
 * idle means the session waits for the server or for time. */
static inline void script_idle(struct script *sc)
{
    for (unsigned i = 0;; i++) {
        if (i == 100000)
            fail_msg("the session is never idle");
        int ran = loop_run_at(sc->loop, sc->now);
        size_t had = sc->inlen;
        ssize_t r;
        while (sc->peer >= 0 && sc->inlen < sizeof sc->in &&
               (r = read(sc->peer, sc->in + sc->inlen, sizeof sc->in - sc->inlen)) > 0)
            sc->inlen += (size_t)r;
        if (!ran && sc->inlen == had)
            return;
    }
}

/* One session of ops under mailsoak run's settings argv (targets are never dialled),
 * started: what it did at once has run. */
static inline struct script *script_new(const struct session_ops *ops, int argc, const char **argv)
{
    struct script *sc = xcalloc(1, sizeof *sc);
    sc->peer = -1;
    assert_int_equal(config_from_args(&sc->cfg, argc, (char **)argv), 0);
    sc->run = xcalloc(1, sizeof *sc->run);
    assert_int_equal(setup_run(sc->run, &sc->cfg, 1), 0);
    sc->run->t0 = mono_ns();
    sc->st = xcalloc(1, sizeof *sc->st);
    stats_init(sc->st, 5);
    assert_int_equal(msg_gen_init(&sc->gen, sc->run->pool, sc->run->poolsize), 0);
    assert_non_null(sc->loop = loop_new());
    sc->now = loop_now(sc->loop);
    sc->env = (struct session_env){
        .loop = sc->loop, .run = sc->run, .st = sc->st, .gen = &sc->gen, .dial = script_dial, .dial_ctx = sc,
    };
    session_set_init(&sc->set, ops, &sc->env, 1, 0);
    session_set_start(&sc->set);
    script_idle(sc);
    return sc;
}

/* script_new over a NULL-terminated list of settings. */
#define SCRIPT_NEW(ops, ...) script_new_args(ops, (const char *[]){ __VA_ARGS__, NULL })
static inline struct script *script_new_args(const struct session_ops *ops, const char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return script_new(ops, argc, argv);
}

static inline void script_free(struct script *sc)
{
    session_set_free(&sc->set);
    if (sc->peer >= 0)
        close(sc->peer);
    msg_gen_free(&sc->gen);
    /* what a worker frees of its env: deferred messages and the clients' checks */
    retryq_free(&sc->env.retry);
    dueheap_free(&sc->env.polls);
    loop_free(sc->loop);
    run_free(sc->run);
    config_free(&sc->cfg);
    free(sc->st);
    free(sc);
}

/* Lets ms pass on the loop's clock: it stands at each timer due on the way, and
 * the session runs until idle there, then at the end. */
static inline void script_run(struct script *sc, int ms)
{
    uint64_t end = sc->now + (uint64_t)ms * NS_PER_MS;
    script_idle(sc);
    for (uint64_t next; (next = loop_next_timer(sc->loop)) <= end;) {
        if (next > sc->now)
            sc->now = next;
        script_idle(sc);
    }
    sc->now = end;
    script_idle(sc);
}

/* Lets time pass on the loop's clock, timer by timer, until the session has sent a
 * whole line or ms have passed; how many ms passed. */
static inline uint64_t script_run_until_line(struct script *sc, int ms)
{
    uint64_t start = sc->now, end = sc->now + (uint64_t)ms * NS_PER_MS;
    script_idle(sc);
    for (uint64_t next; !memchr(sc->in, '\n', sc->inlen) && (next = loop_next_timer(sc->loop)) <= end;) {
        if (next > sc->now)
            sc->now = next;
        script_idle(sc);
    }
    return (sc->now - start) / NS_PER_MS;
}

/* Takes the next whole line the session sent, without its CRLF, into line. The
 * line must be there once the session is idle: no time passes (script_run). */
static inline void script_line(struct script *sc, char *line, size_t n)
{
    char *nl;
    if (!(nl = memchr(sc->in, '\n', sc->inlen))) {
        script_idle(sc);
        nl = memchr(sc->in, '\n', sc->inlen);
    }
    if (!nl)
        fail_msg("the session sent no line (have %zu bytes: '%.*s')", sc->inlen, (int)sc->inlen, sc->in);
    size_t len = (size_t)(nl - sc->in) + 1, l = len - 1;
    if (l && sc->in[l - 1] == '\r')
        l--;
    assert_true(l < n);
    memcpy(line, sc->in, l);
    line[l] = 0;
    memmove(sc->in, sc->in + len, sc->inlen - len);
    sc->inlen -= len;
}

/* The next line the session sent must begin with prefix. */
static inline void script_expect(struct script *sc, const char *prefix)
{
    char line[2048];
    script_line(sc, line, sizeof line);
    if (strncmp(line, prefix, strlen(prefix)))
        fail_msg("expected '%s...', the session sent '%s'", prefix, line);
}

/* Nothing more was sent within ms (of the loop's clock). */
static inline void script_quiet(struct script *sc, int ms)
{
    script_run(sc, ms);
    if (sc->inlen)
        fail_msg("the session sent more: '%.*s'", (int)sc->inlen, sc->in);
}

/* The scripted server says text (CRLFs included). */
static inline void script_say(struct script *sc, const char *text)
{
    size_t n = strlen(text), off = 0;
    for (unsigned full = 0; off < n;) {
        ssize_t w = write(sc->peer, text + off, n - off);
        if (w < 0 && errno == EAGAIN) {
            if (++full == 10000)
                fail_msg("the session reads no more (%zu of %zu bytes said)", off, n);
            script_idle(sc);         /* the session reads what it can */
            continue;
        }
        assert_true(w > 0);
        off += (size_t)w;
    }
}

/* A transcript, NULL-terminated: "S: text" the server says (CRLF added), "C: text"
 * the next line the session sends begins with. */
static inline void script_talk(struct script *sc, ...)
{
    va_list ap;
    va_start(ap, sc);
    for (const char *step; (step = va_arg(ap, const char *));) {
        assert_true((step[0] == 'S' || step[0] == 'C') && step[1] == ':' && step[2] == ' ');
        if (step[0] == 'C') {
            script_expect(sc, step + 3);
        } else {
            char line[2048];
            snprintf(line, sizeof line, "%s\r\n", step + 3);
            script_say(sc, line);
        }
    }
    va_end(ap);
}

/* The server closes the connection. */
static inline void script_hang_up(struct script *sc)
{
    close(sc->peer);
    sc->peer = -1;
}

/* How often the error class name was counted (0 when never). */
static inline uint64_t script_errors(const struct script *sc, const char *name)
{
    for (unsigned i = 0; i < sc->st->nerr; i++)
        if (!strcmp(sc->st->err[i].name, name))
            return sc->st->err[i].count;
    return 0;
}

#endif
