/* pop3: the server side of POP3 (RFC 1939, CAPA and RESP-CODES from RFC 2449/3206).
 * PASS takes the mailbox lock through the store; DELE only marks; QUIT commits the
 * marks and releases the lock; a dropped connection releases it without deleting.
 * Pipelined commands are answered in order (RETR waits for the store). */
#include "server/pop3.h"
#include "server/server.h"
#include "server/proto.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

enum { DLY_CMD, DLY_BANNER };
enum { P_AUTH, P_TRANS };

struct pop3 {
    struct srv_sess b;               /* first: freed as one block */
    int state;
    char user[256];
    long box;                        /* the locked mailbox, -1 when none */
    struct srv_req req;              /* one request out at a time; items live here */
    unsigned char *del;
    long top;                        /* the fetch in flight: -1 RETR, else TOP's lines */
    const struct srv_cmd_fault *forge;   /* kind = forge struck this RETR */
};

static void process(struct pop3 *s);
static void command(struct pop3 *s, char *line, size_t len, int faults);

static const char *stage_word(enum srv_stage st)
{
    const char *n = srv_stage_names[st];
    return n + 5;                    /* past "pop3." */
}

/* "-ERR [CODE] text" for a temp/perm fault: resp overrides the code, "none" drops it. */
static void fault_reply(const struct srv_cmd_fault *f, enum srv_stage st, char *out, size_t n)
{
    int perm = f->kind == SF_PERM;
    const char *code = f->resp ? f->resp : perm ? "SYS/PERM" : "SYS/TEMP";
    const char *text = f->text;
    if (!text) {
        if (st == ST_POP3_PASS)
            text = perm ? "Authentication failed: account disabled" : "Temporary authentication failure, try again later";
        else if (st == ST_POP3_RETR || st == ST_POP3_TOP)
            text = perm ? "Message is corrupted" : "Can't open message: Input/output error";
        else if (perm)
            text = "Internal error occurred. Refer to server log for more information.";
        else
            text = "Temporary server failure, try again later";
    }
    if (!strcasecmp(code, "none"))
        snprintf(out, n, "-ERR %s", text);
    else
        snprintf(out, n, "-ERR [%s] %s", code, text);
}

static int apply_fault(struct pop3 *s, const struct srv_cmd_fault *f, enum srv_stage st,
                       const char *line, size_t len)
{
    char reply[512], rlog[1200], where[700], bye[300];
    int at_connect = st == ST_POP3_BANNER || st == ST_POP3_CONNECT;
    const char *who = s->user[0] ? s->user : "?";
    fault_reply(f, st, reply, sizeof reply);
    snprintf(rlog, sizeof rlog, "pop3(%s): Error: %s failed: %s (%s)", who, stage_word(st), reply + 5, s->b.peer);
    snprintf(where, sizeof where, "pop3(%s): %s from %s", who, stage_word(st), s->b.peer);
    snprintf(bye, sizeof bye, "-ERR [SYS/TEMP] %s", f->text ? f->text : "Server shutting down.");
    if (f->kind == SF_FORGE) {
        srv_fault_log(&s->b, f, "warning: RETR: X-Mailsoak-Id forged");
        s->forge = f;
    }
    return srv_sess_apply_fault(&s->b, f, at_connect ? DLY_BANNER : DLY_CMD, line, len, reply, rlog,
                                bye, where, at_connect, st == ST_POP3_CONNECT);
}

static void banner(struct pop3 *s)
{
    conn_puts(&s->b.c, "+OK mailsoak-server ready.\r\n");
}

static size_t nitems(const struct pop3 *s)
{
    return s->req.items.n;
}

/* "N" naming a message that exists and is not deleted: its index, else -1 with a reply. */
static long msgno(struct pop3 *s, const char *arg, const char **rest)
{
    char *end;
    if (!isdigit((unsigned char)*arg)) {
        conn_puts(&s->b.c, "-ERR Invalid message number\r\n");
        return -1;
    }
    unsigned long n = strtoul(arg, &end, 10);
    if (*end && *end != ' ') {
        conn_puts(&s->b.c, "-ERR Invalid message number\r\n");
        return -1;
    }
    if (n < 1 || n > nitems(s)) {
        conn_printf(&s->b.c, "-ERR There's no message %lu.\r\n", n);
        return -1;
    }
    if (s->del[n - 1]) {
        conn_puts(&s->b.c, "-ERR Message is deleted.\r\n");
        return -1;
    }
    if (rest)
        *rest = end;
    return (long)n - 1;
}

static void submit(struct pop3 *s, enum srv_op op)
{
    s->req.op = op;
    s->req.ud = s;
    s->req.user = (size_t)s->box;
    s->b.waiting = 1;
    s->b.tmode = TM_NONE;
    conn_deadline(&s->b.c, 0);
    srv_store_submit(s->b.srv->store, &s->req);
}

static void req_done(struct srv_req *r)
{
    struct pop3 *s = r->ud;
    struct conn *c = &s->b.c;
    if (r->op == SOP_OPEN && r->status == SS_OK)
        s->state = P_TRANS;          /* the store holds the lock for us now */
    else if (r->op == SOP_OPEN)
        s->box = -1;
    if (r->op == SOP_COMMIT)
        s->box = -1;                 /* committed or not, the lock is gone */
    s->b.waiting = 0;
    if (srv_sess_reap(&s->b) || s->b.dead)
        return;
    switch (r->op) {
    case SOP_OPEN:
        if (r->status == SS_OK) {
            free(s->del);
            s->del = xcalloc(nitems(s) ? nitems(s) : 1, 1);
            conn_puts(c, "+OK Logged in.\r\n");
            if (s->b.srv->cfg->log_sessions)
                srv_log("pop3-login: Login: user=<%s>, method=PLAIN, rip=%s", s->user, s->b.peer);
        } else if (r->status == SS_IN_USE) {
            conn_printf(c, "-ERR [IN-USE] %s\r\n", r->err);
        } else {
            conn_printf(c, "-ERR [SYS/TEMP] %s\r\n", r->err);
        }
        break;
    case SOP_FETCH:
        if (r->status == SS_OK) {
            const struct srv_item *it = r->item;
            if (s->forge)
                srv_forge_id(&r->out, s->forge->text);
            s->forge = NULL;
            conn_printf(c, "+OK %llu octets\r\n", (unsigned long long)it->size);
            srv_pop3_stuff(&c->out, r->out.p ? r->out.p : "", r->out.len, s->top);
        } else {
            conn_printf(c, "-ERR [SYS/TEMP] %s\r\n", r->err);
        }
        r->out.off = r->out.len = 0;
        if (r->out.cap > 256 * 1024)
            buf_free(&r->out);
        break;
    case SOP_COMMIT:
        if (r->status == SS_OK)
            conn_puts(c, "+OK Logging out.\r\n");
        else
            conn_printf(c, "-ERR [SYS/TEMP] %s\r\n", r->err);
        srv_sess_close_after_flush(&s->b);
        return;
    default:
        break;
    }
    process(s);
}

static void cmd_pass(struct pop3 *s, const char *arg)
{
    struct srv *srv = s->b.srv;
    if (!s->user[0]) {
        conn_puts(&s->b.c, "-ERR No username given.\r\n");
        return;
    }
    long u = srv_check_login(srv, s->user, strlen(s->user), arg, strlen(arg));
    if (u < 0) {
        srv_log("pop3-login: Disconnected (auth failed, 1 attempts): user=<%s>, method=PLAIN, rip=%s",
                s->user, s->b.peer);
        conn_puts(&s->b.c, "-ERR [AUTH] Authentication failed.\r\n");
        return;
    }
    const struct srv_user_faults *uf = &srv->cfg->faults.user;
    if (uf->lock.n && srv_addr_matches(&uf->lock, srv->users.v[u].addr)) {
        srv_log("pop3(%s): Error: Couldn't lock mailbox: Timeout while waiting for lock (%s)",
                s->user, s->b.peer);
        conn_puts(&s->b.c, "-ERR [IN-USE] Couldn't lock mailbox, try again later.\r\n");
        return;
    }
    s->box = u;
    srv_items_free(&s->req.items);
    submit(s, SOP_OPEN);
}

static void cmd_list(struct pop3 *s, const char *arg, int uidl)
{
    struct conn *c = &s->b.c;
    const struct srv_items *l = &s->req.items;
    if (*arg) {
        long i = msgno(s, arg, NULL);
        if (i < 0)
            return;
        if (uidl)
            conn_printf(c, "+OK %ld %s\r\n", i + 1, l->v[i].uid);
        else
            conn_printf(c, "+OK %ld %llu\r\n", i + 1, (unsigned long long)l->v[i].size);
        return;
    }
    conn_puts(c, uidl ? "+OK\r\n" : "+OK scan listing follows\r\n");
    for (size_t i = 0; i < l->n; i++) {
        if (s->del[i])
            continue;
        if (uidl)
            conn_printf(c, "%zu %s\r\n", i + 1, l->v[i].uid);
        else
            conn_printf(c, "%zu %llu\r\n", i + 1, (unsigned long long)l->v[i].size);
    }
    conn_puts(c, ".\r\n");
}

static void cmd_fetch(struct pop3 *s, const char *arg, int top)
{
    const char *rest;
    long i = msgno(s, arg, &rest);
    if (i < 0)
        return;
    s->top = -1;
    if (top) {
        char *end;
        while (*rest == ' ')
            rest++;
        if (!isdigit((unsigned char)*rest)) {
            conn_puts(&s->b.c, "-ERR Invalid number of lines\r\n");
            return;
        }
        s->top = strtol(rest, &end, 10);
    }
    s->req.item = &s->req.items.v[i];
    submit(s, SOP_FETCH);
}

static void cmd_quit(struct pop3 *s)
{
    if (s->state != P_TRANS) {
        conn_puts(&s->b.c, "+OK Logging out.\r\n");
        srv_sess_close_after_flush(&s->b);
        return;
    }
    const struct srv_items *l = &s->req.items;
    free(s->req.del);
    s->req.del = xmalloc((l->n ? l->n : 1) * sizeof *s->req.del);
    s->req.ndel = 0;
    for (size_t i = 0; i < l->n; i++)
        if (s->del[i])
            s->req.del[s->req.ndel++] = &l->v[i];
    submit(s, SOP_COMMIT);
}

static enum srv_stage stage_of(enum srv_pop3_verb v)
{
    switch (v) {
    case PV_USER: return ST_POP3_USER;
    case PV_PASS: return ST_POP3_PASS;
    case PV_STAT: return ST_POP3_STAT;
    case PV_LIST: return ST_POP3_LIST;
    case PV_UIDL: return ST_POP3_UIDL;
    case PV_RETR: return ST_POP3_RETR;
    case PV_TOP: return ST_POP3_TOP;
    case PV_DELE: return ST_POP3_DELE;
    case PV_RSET: return ST_POP3_RSET;
    case PV_NOOP: return ST_POP3_NOOP;
    case PV_QUIT: return ST_POP3_QUIT;
    case PV_CAPA: return ST_POP3_CAPA;
    default: return ST_COUNT;
    }
}

static void command(struct pop3 *s, char *line, size_t len, int faults)
{
    struct conn *c = &s->b.c;
    const char *arg;
    enum srv_pop3_verb v = srv_pop3_verb(line, len, &arg);
    enum srv_stage st = stage_of(v);
    if (faults && st != ST_COUNT) {
        const struct srv_cmd_fault *f = srv_sess_fault(&s->b, st);
        if (f && apply_fault(s, f, st, line, len))
            return;
    }
    if (v == PV_CAPA) {
        conn_puts(c, "+OK Capability list follows\r\nCAPA\r\nTOP\r\nUIDL\r\nUSER\r\nPIPELINING\r\n"
                     "RESP-CODES\r\nAUTH-RESP-CODE\r\nIMPLEMENTATION mailsoak-server\r\n.\r\n");
        return;
    }
    if (v == PV_QUIT) {
        cmd_quit(s);
        return;
    }
    if (s->state == P_AUTH) {
        switch (v) {
        case PV_USER:
            if (!*arg) {
                conn_puts(c, "-ERR No username given.\r\n");
                return;
            }
            snprintf(s->user, sizeof s->user, "%s", arg);
            conn_puts(c, "+OK\r\n");
            return;
        case PV_PASS:
            cmd_pass(s, arg);
            return;
        case PV_APOP:
        case PV_AUTH:
            conn_puts(c, "-ERR [AUTH] Unsupported authentication mechanism.\r\n");
            return;
        case PV_STLS:
            conn_puts(c, "-ERR TLS support isn't enabled.\r\n");
            return;
        case PV_UNKNOWN:
            conn_puts(c, "-ERR Unknown command.\r\n");
            return;
        default:
            conn_puts(c, "-ERR Unknown command in AUTHORIZATION state.\r\n");
            return;
        }
    }
    switch (v) {
    case PV_STAT: {
        size_t n = 0;
        uint64_t bytes = 0;
        for (size_t i = 0; i < nitems(s); i++)
            if (!s->del[i]) {
                n++;
                bytes += s->req.items.v[i].size;
            }
        conn_printf(c, "+OK %zu %llu\r\n", n, (unsigned long long)bytes);
        break;
    }
    case PV_LIST: cmd_list(s, arg, 0); break;
    case PV_UIDL: cmd_list(s, arg, 1); break;
    case PV_RETR: cmd_fetch(s, arg, 0); break;
    case PV_TOP: cmd_fetch(s, arg, 1); break;
    case PV_DELE: {
        long i = msgno(s, arg, NULL);
        if (i >= 0) {
            s->del[i] = 1;
            conn_puts(c, "+OK Marked to be deleted.\r\n");
        }
        break;
    }
    case PV_RSET:
        memset(s->del, 0, nitems(s) ? nitems(s) : 1);
        conn_puts(c, "+OK\r\n");
        break;
    case PV_NOOP:
        conn_puts(c, "+OK\r\n");
        break;
    case PV_USER:
    case PV_PASS:
    case PV_APOP:
    case PV_AUTH:
        conn_puts(c, "-ERR Already logged in.\r\n");
        break;
    default:
        conn_puts(c, "-ERR Unknown command.\r\n");
        break;
    }
}

static void pump_line(struct srv_sess *b, char *line, size_t len)
{
    command((struct pop3 *)b, line, len, 1);
}

static void process(struct pop3 *s)
{
    srv_sess_pump(&s->b, NULL, pump_line, "-ERR Input line too long.\r\n");
}

static void on_delay(struct srv_sess *b)
{
    struct pop3 *s = (struct pop3 *)b;
    if (b->delayed_what == DLY_BANNER)
        banner(s);
    else
        command(s, b->delayed, strlen(b->delayed), 0);
    if (!b->waiting)
        process(s);
}

static void on_conn(struct conn *c, enum conn_event ev, void *ud)
{
    struct pop3 *s = ud;
    (void)c;
    if (srv_sess_event(&s->b, ev))
        return;
    if (ev == CONN_TIMEOUT) {
        srv_sess_idle_timeout(&s->b, "-ERR Disconnected for inactivity.\r\n");
        return;
    }
    if (ev == CONN_DATA)
        process(s);
}

static void free_req(struct srv_req *r)
{
    free(r);
}

static void on_free(struct srv_sess *b)
{
    struct pop3 *s = (struct pop3 *)b;
    /* Dropped while holding the mailbox: unlock without deleting (RFC 1939 6). */
    if (s->box >= 0 && s->state == P_TRANS && b->srv->store) {
        struct srv_req *r = xcalloc(1, sizeof *r);
        r->op = SOP_CLOSE;
        r->user = (size_t)s->box;
        r->done = free_req;
        srv_store_submit(b->srv->store, r);
        if (b->srv->cfg->log_sessions)
            srv_log("pop3(%s): Disconnected: Connection closed, %zu messages kept", s->user, nitems(s));
    }
    srv_items_free(&s->req.items);
    buf_free(&s->req.out);
    free(s->req.del);
    free(s->del);
}

void srv_pop3_accept(struct srv *srv, int fd)
{
    struct pop3 *s = xcalloc(1, sizeof *s);
    s->box = -1;
    s->req.done = req_done;
    s->b.on_timer = on_delay;
    s->b.on_free = on_free;
    srv_sess_start(srv, &s->b, SRV_POP3, fd, on_conn);
    if (s->b.dead)
        return;
    const struct srv_cmd_fault *f = srv_sess_fault(&s->b, ST_POP3_CONNECT);
    enum srv_stage st = ST_POP3_CONNECT;
    if (!f) {
        f = srv_sess_fault(&s->b, ST_POP3_BANNER);
        st = ST_POP3_BANNER;
    }
    if (!f || !apply_fault(s, f, st, "", 0))
        banner(s);
    if (!s->b.dead && !s->b.closing)
        srv_sess_flush(&s->b);
}
