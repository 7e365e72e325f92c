/* imap: the server side of IMAP4rev1 (RFC 3501) with IDLE (RFC 2177), UIDPLUS's
 * UID EXPUNGE (RFC 4315), LITERAL+ (RFC 7888) and SASL-IR, over INBOX only: the
 * session, reading commands with their literals, the faults, login and the
 * commands' dispatch (the selected mailbox's commands are imap_mailbox.c's). One
 * command runs at a time; a command waiting for the store holds the rest of the
 * input. A delivery to a mailbox marks its selected sessions, and those in IDLE list
 * it again at once and push EXISTS. Commands are bounded: a line by the session's
 * max_line, a command with its literals by IMAP_CMD_MAX (a larger literal is read
 * and dropped, and the command refused). */
#include "server/imap.h"
#include "server/imap_mailbox.h"
#include "server/imap_proto.h"
#include "server/proto.h"
#include "server/server.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "lib/alloc.h"
#include "lib/tls.h"

#define IMAP_CMD_MAX (64 * 1024)     /* a command and its literals (Dovecot's imap_max_line_length) */

static const char *capability(const struct imap *s)
{
    int tls = s->b.srv->imap_tls && !s->tls && s->state == I_NOAUTH;
    return tls ? "IMAP4rev1 SASL-IR LITERAL+ IDLE UIDPLUS ID NAMESPACE UNSELECT STARTTLS AUTH=PLAIN"
               : "IMAP4rev1 SASL-IR LITERAL+ IDLE UIDPLUS ID NAMESPACE UNSELECT AUTH=PLAIN";
}

static void banner(struct imap *s)
{
    conn_printf(&s->b.c, "* OK [CAPABILITY %s] mailsoak-server ready.\r\n", capability(s));
}

void imap_reply(struct imap *s, const char *fmt, ...)
{
    char text[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    conn_printf(&s->b.c, "%s %s\r\n", s->tag[0] ? s->tag : "*", text);
}

/* --- faults --- */

static enum srv_stage stage_of(const char *v, size_t n)
{
    static const struct { const char *w; enum srv_stage st; } t[] = {
        { "CAPABILITY", ST_IMAP_CAPABILITY }, { "LOGIN", ST_IMAP_LOGIN }, { "AUTHENTICATE", ST_IMAP_LOGIN },
        { "SELECT", ST_IMAP_SELECT }, { "EXAMINE", ST_IMAP_SELECT }, { "SEARCH", ST_IMAP_SEARCH },
        { "FETCH", ST_IMAP_FETCH }, { "STORE", ST_IMAP_STORE }, { "EXPUNGE", ST_IMAP_EXPUNGE },
        { "IDLE", ST_IMAP_IDLE }, { "NOOP", ST_IMAP_NOOP }, { "CHECK", ST_IMAP_NOOP },
        { "LOGOUT", ST_IMAP_LOGOUT },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strlen(t[i].w) == n && !strncasecmp(v, t[i].w, n))
            return t[i].st;
    return ST_COUNT;
}

static int apply_fault(struct imap *s, const struct srv_cmd_fault *f, enum srv_stage st,
                       const char *line, size_t len)
{
    char rep[512], rlog[1200], where[700], bye[300];
    int at_connect = st == ST_IMAP_BANNER || st == ST_IMAP_CONNECT;
    const char *who = s->user[0] ? s->user : "?";
    const char *word = srv_stage_names[st] + 5;
    const char *code = f->resp ? f->resp : f->kind == SF_PERM ? "SERVERBUG" : "UNAVAILABLE";
    const char *text = f->text ? f->text : f->kind == SF_PERM ? "Internal error occurred. Refer to server log for more information."
                                                              : "Temporary failure, try again later";
    if (at_connect)
        snprintf(rep, sizeof rep, "* BYE %s", text);
    else if (!strcasecmp(code, "none"))
        snprintf(rep, sizeof rep, "%s NO %s", s->tag, text);
    else
        snprintf(rep, sizeof rep, "%s NO [%s] %s", s->tag, code, text);
    snprintf(rlog, sizeof rlog, "imap(%s): Error: %s failed: %s (%s)", who, word, text, s->b.peer);
    snprintf(where, sizeof where, "imap(%s): %s from %s", who, word, s->b.peer);
    snprintf(bye, sizeof bye, "* BYE %s", f->text ? f->text : "Server shutting down.");
    switch (f->kind) {
    case SF_UNDONE:
        s->undone = f;
        return 0;
    case SF_SILENT:
        snprintf(rlog, sizeof rlog, "imap(%s): Warning: IDLE: mailbox notifications lost: no EXISTS will be sent (%s)",
                 who, s->b.peer);
        srv_fault_log(&s->b, f, rlog);
        s->idle_silent = 1;
        return 0;
    case SF_AGAIN:
        s->again = f;
        return 0;
    case SF_APPLIED:
        s->applied = f;
        return 0;
    default:
        break;
    }
    return srv_sess_apply_fault(&s->b, f, at_connect ? DLY_BANNER : DLY_CMD, line, len, rep, rlog, bye,
                                where, at_connect, st == ST_IMAP_CONNECT);
}

/* --- commands --- */

static void cmd_login(struct imap *s, const char *user, size_t ulen, const char *pass, size_t plen,
                      const char *method)
{
    struct srv *srv = s->b.srv;
    /* A literal can carry any byte: a name with control bytes (a forged log line
     * after a newline) is nobody's, and is not written to the log. */
    for (size_t i = 0; i < ulen; i++)
        if ((unsigned char)user[i] < 0x20 || user[i] == 0x7f) {
            srv_log("imap-login: Disconnected (auth failed, 1 attempts): user=<(control bytes)>, method=%s, rip=%s",
                    method, s->b.peer);
            imap_reply(s, "NO [AUTHENTICATIONFAILED] Authentication failed.");
            return;
        }
    snprintf(s->user, sizeof s->user, "%.*s", (int)ulen, user);
    long u = srv_check_login(srv, user, ulen, pass, plen);
    if (u < 0) {
        srv_log("imap-login: Disconnected (auth failed, 1 attempts): user=<%s>, method=%s, rip=%s",
                s->user, method, s->b.peer);
        imap_reply(s, "NO [AUTHENTICATIONFAILED] Authentication failed.");
        s->user[0] = 0;
        return;
    }
    s->box = u;
    s->state = I_AUTH;
    if (srv->cfg->log_sessions)
        srv_log("imap-login: Login: user=<%s>, method=%s, rip=%s%s", s->user, method, s->b.peer,
                s->tls ? ", TLS" : "");
    imap_reply(s, "OK [CAPABILITY %s] Logged in", capability(s));
}

static void sasl_plain(struct imap *s, const char *b64, size_t n)
{
    char dec[1024];
    size_t dn;
    const char *u, *p;
    size_t ul, pl;
    if (srv_b64_decode(b64, n, dec, sizeof dec, &dn) < 0 || srv_sasl_plain(dec, dn, &u, &ul, &p, &pl) < 0) {
        imap_reply(s, "BAD Invalid base64 data in continued response");
        return;
    }
    cmd_login(s, u, ul, p, pl, "PLAIN");
}

static int is_inbox(const char *name)
{
    return !strcasecmp(name, "INBOX");
}

static void cmd_list(struct imap *s, struct imap_cur *c, const char *verb)
{
    char ref[256], pat[256];
    size_t rl, pl;
    if (imap_astring(c, ref, sizeof ref, &rl) < 0 || imap_sp(c) < 0 || imap_astring(c, pat, sizeof pat, &pl) < 0) {
        imap_reply(s, "BAD Error in IMAP command %s: Invalid arguments.", verb);
        return;
    }
    if (!pl)
        conn_printf(&s->b.c, "* %s (\\Noselect) \"/\" \"\"\r\n", verb);
    else if (!strcmp(pat, "*") || !strcmp(pat, "%") || is_inbox(pat))
        conn_printf(&s->b.c, "* %s (\\HasNoChildren) \"/\" INBOX\r\n", verb);
    imap_reply(s, "OK %s completed.", verb);
}

/* Commands of the selected state; synced: the mailbox was just listed for it. */
static void selected(struct imap *s, const char *v, size_t vn, struct imap_cur *c,
                     const char *p, size_t n, int synced)
{
#define IS(w) (vn == strlen(w) && !strncasecmp(v, w, vn))
    if (IS("SEARCH")) {
        /* Plain SEARCH answers in sequence numbers, which an EXPUNGE must not move
         * under it: only UID SEARCH looks for news first. */
        if (s->uidcmd && s->dirty && !synced)
            goto sync;
        imap_cmd_search(s, c);
    } else if (IS("FETCH")) {
        const char *w, *why;
        size_t wn;
        struct imap_set *set = xmalloc(sizeof *set);
        struct imap_fetch *f = xmalloc(sizeof *f);
        if (imap_atom(c, &w, &wn) < 0 || imap_set_parse(w, wn, set) < 0 || imap_sp(c) < 0) {
            why = "Invalid sequence set";
            goto bad_fetch;
        }
        if (imap_fetch_parse(c, f, &why) < 0)
            goto bad_fetch;
        if (s->uidcmd)
            f->what |= FA_UID;
        s->fetch = f;
        s->set = set;
        s->fpos = 0;
        imap_fetch_step(s);
        return;
    bad_fetch:
        free(set);
        free(f);
        s->again = NULL;
        imap_reply(s, "BAD Error in IMAP command FETCH: %s", why);
    } else if (IS("STORE")) {
        imap_cmd_store(s, c);
    } else if (IS("EXPUNGE")) {
        if (s->readonly) {
            imap_reply(s, "NO Mailbox is read-only.");
            return;
        }
        if (s->uidcmd) {
            const char *w;
            size_t wn;
            struct imap_set set;
            if (imap_atom(c, &w, &wn) < 0 || imap_set_parse(w, wn, &set) < 0) {
                imap_reply(s, "BAD Error in IMAP command UID EXPUNGE: Invalid sequence set");
                return;
            }
            imap_cmd_expunge(s, &set, 0);
        } else {
            imap_cmd_expunge(s, NULL, 0);
        }
    } else if (IS("CLOSE") && !s->uidcmd) {
        if (s->readonly) {
            imap_unselect(s);
            imap_reply(s, "OK Close completed.");
        } else {
            imap_cmd_expunge(s, NULL, 1);
        }
    } else if (IS("UNSELECT") && !s->uidcmd) {
        imap_unselect(s);
        imap_reply(s, "OK Unselect completed.");
    } else if ((IS("NOOP") || IS("CHECK")) && !s->uidcmd) {
        if (s->dirty && !synced)
            goto sync;
        imap_reply(s, "OK %.*s completed.", (int)vn, v);
    } else if (IS("IDLE") && !s->uidcmd) {
        s->idling = 1;
        conn_puts(&s->b.c, "+ idling\r\n");
        if (s->dirty && !s->idle_silent)
            imap_list_box(s, W_SYNC);
    } else {
        imap_reply(s, "BAD Error in IMAP command %s%.*s: Unknown command.", s->uidcmd ? "UID " : "", (int)vn, v);
    }
    return;
sync:
    free(s->pending);
    s->pending = xmalloc(n ? n : 1);
    memcpy(s->pending, p, n);
    s->npending = n;
    imap_list_box(s, W_SYNC);
#undef IS
}

/* One whole command (its literals inline). faults: command faults may strike (not
 * on a delayed command's second run); synced: see selected(). */
/* Commands of every state; 1 when v was one of them. */
static int any_state(struct imap *s, const char *v, size_t vn)
{
#define IS(w) (vn == strlen(w) && !strncasecmp(v, w, vn))
    if (IS("CAPABILITY")) {
        conn_printf(&s->b.c, "* CAPABILITY %s\r\n", capability(s));
        imap_reply(s, "OK Capability completed.");
    } else if (IS("LOGOUT")) {
        conn_puts(&s->b.c, "* BYE Logging out\r\n");
        imap_reply(s, "OK Logout completed.");
        if (s->b.srv->cfg->log_sessions && s->user[0])
            srv_log("imap(%s): Disconnected: Logged out", s->user);
        srv_sess_close_after_flush(&s->b);
    } else if (IS("NOOP") && s->state != I_SELECTED) {
        imap_reply(s, "OK NOOP completed.");
    } else if (IS("ID")) {
        conn_puts(&s->b.c, "* ID (\"name\" \"mailsoak-server\")\r\n");
        imap_reply(s, "OK ID completed.");
    } else if (IS("STARTTLS")) {
        if (!s->b.srv->imap_tls || s->tls) {
            imap_reply(s, s->tls ? "BAD TLS is already active." : "BAD TLS support isn't enabled.");
        } else if (s->state != I_NOAUTH) {
            imap_reply(s, "BAD STARTTLS can't be used after login.");
        } else {
            imap_reply(s, "OK Begin TLS negotiation now.");
            s->starttls = 1;
            s->b.waiting = 1;        /* nothing sent after it is read in the clear */
        }
    } else {
        return 0;
    }
    return 1;
}

static void not_authenticated(struct imap *s, const char *v, size_t vn, struct imap_cur *c)
{
    if (IS("LOGIN")) {
        char user[256], pass[256];
        size_t ul, pl;
        if (imap_astring(c, user, sizeof user, &ul) < 0 || imap_sp(c) < 0 ||
            imap_astring(c, pass, sizeof pass, &pl) < 0) {
            imap_reply(s, "BAD Error in IMAP command LOGIN: Invalid arguments.");
            return;
        }
        cmd_login(s, user, ul, pass, pl, "PLAIN");
    } else if (IS("AUTHENTICATE")) {
        const char *m, *ir;
        size_t mn, irn;
        if (imap_atom(c, &m, &mn) < 0 || mn != 5 || strncasecmp(m, "PLAIN", 5)) {
            imap_reply(s, "NO Unsupported authentication mechanism.");
            return;
        }
        if (imap_sp(c) == 0 && imap_atom(c, &ir, &irn) == 0) {
            sasl_plain(s, irn == 1 && ir[0] == '=' ? "" : ir, irn == 1 && ir[0] == '=' ? 0 : irn);
            return;
        }
        s->auth_wait = 1;
        conn_puts(&s->b.c, "+ \r\n");
    } else {
        imap_reply(s, "BAD Error in IMAP command %.*s: Unknown command or not allowed before login.", (int)vn, v);
    }
}

static void cmd_select(struct imap *s, struct imap_cur *c, int examine)
{
    char name[256];
    size_t nl;
    if (imap_astring(c, name, sizeof name, &nl) < 0) {
        imap_reply(s, "BAD Error in IMAP command %s: Invalid arguments.", examine ? "EXAMINE" : "SELECT");
        return;
    }
    if (s->state == I_SELECTED) {
        imap_unselect(s);
        conn_puts(&s->b.c, "* OK [CLOSED] Previous mailbox closed.\r\n");
    }
    if (!is_inbox(name)) {
        int plain = nl <= 100;       /* echoed only when short and printable */
        for (size_t i = 0; i < nl && plain; i++)
            plain = (unsigned char)name[i] >= 0x20 && (unsigned char)name[i] < 0x7f;
        imap_reply(s, "NO [NONEXISTENT] Mailbox doesn't exist: %s", plain ? name : "(not shown)");
        return;
    }
    struct imap_box *b = imap_box_of(s);
    s->readonly = examine;
    s->state = I_SELECTED;
    s->snext = b->sel;
    if (b->sel)
        b->sel->sprev = s;
    b->sel = s;
    imap_list_box(s, W_SELECT);
}

/* Commands once logged in; selected: see selected(). */
static void authenticated(struct imap *s, const char *v, size_t vn, struct imap_cur *c,
                          const char *p, size_t n, int synced)
{
    if (IS("LOGIN") || IS("AUTHENTICATE")) {
        imap_reply(s, "BAD Already logged in.");
    } else if (IS("SELECT") || IS("EXAMINE")) {
        cmd_select(s, c, IS("EXAMINE"));
    } else if (IS("LIST") || IS("LSUB")) {
        char verb[8];
        snprintf(verb, sizeof verb, "%.*s", (int)vn, v);
        for (char *q = verb; *q; q++)
            *q = (char)toupper((unsigned char)*q);
        cmd_list(s, c, verb);
    } else if (IS("NAMESPACE")) {
        conn_puts(&s->b.c, "* NAMESPACE ((\"\" \"/\")) NIL NIL\r\n");
        imap_reply(s, "OK Namespace completed.");
    } else if (IS("ENABLE")) {
        conn_puts(&s->b.c, "* ENABLED\r\n");
        imap_reply(s, "OK Enabled.");
    } else if (s->state == I_SELECTED) {
        selected(s, v, vn, c, p, n, synced);
    } else {
        imap_reply(s, "BAD Error in IMAP command %.*s: Unknown command or no mailbox selected.", (int)vn, v);
    }
#undef IS
}

void imap_execute(struct imap *s, const char *p, size_t n, int faults, int synced)
{
    struct imap_cur c = { .p = p, .n = n };
    const char *t, *v;
    size_t tn, vn;
    s->tag[0] = 0;
    s->uidcmd = 0;
    if (imap_atom(&c, &t, &tn) < 0 || tn >= sizeof s->tag || memchr(t, '+', tn) || memchr(t, '*', tn)) {
        conn_puts(&s->b.c, "* BAD Error in IMAP command received by server.\r\n");
        return;
    }
    memcpy(s->tag, t, tn);
    s->tag[tn] = 0;
    if (imap_sp(&c) < 0 || imap_atom(&c, &v, &vn) < 0) {
        imap_reply(s, "BAD Error in IMAP command received by server.");
        return;
    }
    if (vn == 3 && !strncasecmp(v, "UID", 3)) {
        s->uidcmd = 1;
        if (imap_sp(&c) < 0 || imap_atom(&c, &v, &vn) < 0) {
            imap_reply(s, "BAD Error in IMAP command UID: Missing command.");
            return;
        }
    }
    imap_sp(&c);
    enum srv_stage st = stage_of(v, vn);
    if (faults && st != ST_COUNT) {
        const struct srv_cmd_fault *f = srv_sess_fault(&s->b, st);
        if (f && apply_fault(s, f, st, p, n))
            return;
    }
    if (s->uidcmd && s->state != I_SELECTED)
        imap_reply(s, "BAD No mailbox selected.");
    else if (any_state(s, v, vn))
        return;
    else if (s->state == I_NOAUTH)
        not_authenticated(s, v, vn, &c);
    else
        authenticated(s, v, vn, &c, p, n, synced);
}

/* A literal's bytes: kept in the command, or dropped when it is too long. */
static int pump_raw(struct srv_sess *b)
{
    struct imap *s = (struct imap *)b;
    if (!s->lit_left)
        return -1;
    size_t k = conn_avail(&b->c);
    if (k > s->lit_left)
        k = (size_t)s->lit_left;
    if (!s->lit_drop)
        buf_append(&s->cmd, conn_peek(&b->c), k);
    b->c.in.off += k;
    s->lit_left -= k;
    return 1;
}

/* "{n}" or "{n+}" ending a line: n, and whether it is LITERAL+'s. -1 when none. */
static int literal_at_end(const char *l, size_t n, uint64_t *size, int *plus)
{
    if (!n || l[n - 1] != '}')
        return -1;
    size_t i = n - 1;
    *plus = i && l[i - 1] == '+';
    if (*plus)
        i--;
    size_t end = i;
    while (i && isdigit((unsigned char)l[i - 1]))
        i--;
    if (i == end || !i || l[i - 1] != '{' || end - i > 12)
        return -1;
    *size = strtoull(l + i, NULL, 10);
    return 0;
}

static void pump_line(struct srv_sess *b, char *l, size_t n)
{
    struct imap *s = (struct imap *)b;
    if (s->idling) {
        s->idling = 0;
        s->idle_silent = 0;
        if (n == 4 && !strncasecmp(l, "DONE", 4))
            imap_reply(s, "OK Idle completed.");
        else
            imap_reply(s, "BAD Expected DONE.");
        return;
    }
    if (s->auth_wait) {
        s->auth_wait = 0;
        if (n == 1 && l[0] == '*')
            imap_reply(s, "BAD Authentication aborted by client.");
        else
            sasl_plain(s, l, n);
        return;
    }
    uint64_t lit;
    int plus;
    int has_lit = literal_at_end(l, n, &lit, &plus) == 0;
    if (!s->lit_drop && s->cmd.len + n + 2 + (has_lit ? lit : 0) > IMAP_CMD_MAX) {
        s->lit_drop = 1;
        if (has_lit && !plus) {      /* synchronising: refused before the client sends it */
            s->cmd.len = s->cmd.off = 0;
            s->lit_drop = 0;
            conn_puts(&b->c, "* BAD Literal too long.\r\n");
            return;
        }
    }
    if (!s->lit_drop) {
        buf_append(&s->cmd, l, n);
        buf_append(&s->cmd, "\r\n", 2);
    }
    if (has_lit) {
        s->lit_left = lit;
        if (!plus)
            conn_puts(&b->c, "+ OK\r\n");
        return;
    }
    if (s->lit_drop) {
        s->lit_drop = 0;
        s->cmd.len = s->cmd.off = 0;
        conn_puts(&b->c, "* BAD Command too long.\r\n");
        return;
    }
    size_t len = s->cmd.len - 2;     /* without the last CRLF */
    s->cmd.len = s->cmd.off = 0;
    imap_execute(s, s->cmd.p, len, 1, 0);
    if (s->cmd.cap > IMAP_CMD_MAX * 2)
        buf_free(&s->cmd);
}

void imap_process(struct imap *s)
{
    srv_sess_pump(&s->b, pump_raw, pump_line, "* BYE Input line too long.\r\n");
    if (s->idling && !s->b.waiting && !s->b.dead && !s->b.closing)
        conn_trim(&s->b.c);          /* thousands wait in IDLE: no buffers while they do */
    if (s->starttls && !s->b.dead && !s->b.closing) {
        s->starttls = 0;
        s->b.waiting = 0;
        s->tls = 1;
        srv_sess_flush(&s->b);
        if (tls_start(&s->b.c, s->b.srv->imap_tls, NULL, 0) < 0) {
            srv_log("imap-login: Error: STARTTLS failed: %s (%s)", s->b.c.errmsg, s->b.peer);
            srv_sess_drop(&s->b);
        }
    }
}

static void on_delay(struct srv_sess *b)
{
    struct imap *s = (struct imap *)b;
    if (b->delayed_what == DLY_BANNER)
        banner(s);
    else
        imap_execute(s, b->delayed, strlen(b->delayed), 0, 0);
    if (!b->waiting)
        imap_process(s);
}

static void on_conn(struct conn *c, enum conn_event ev, void *ud)
{
    struct imap *s = ud;
    if (ev == CONN_TIMEOUT && s->wait == W_DRAIN) {
        s->wait = W_NONE;            /* a client that stopped reading its FETCH */
        s->b.waiting = 0;
        c->on_drain = NULL;
        srv_sess_drop(&s->b);
        return;
    }
    if (srv_sess_event(&s->b, ev))
        return;
    if (ev == CONN_TIMEOUT) {
        srv_sess_idle_timeout(&s->b, "* BYE Disconnected for inactivity.\r\n");
        return;
    }
    if ((ev == CONN_TLS_UP || ev == CONN_UP) && !s->greeted) {
        s->greeted = 1;              /* implicit TLS: the greeting comes over it */
        banner(s);
    }
    if (ev == CONN_DATA || ev == CONN_TLS_UP)
        imap_process(s);
}

static void on_free(struct srv_sess *b)
{
    struct imap *s = (struct imap *)b;
    if (b->srv->cfg->log_sessions && s->user[0] && s->state != I_NOAUTH)
        srv_log("imap(%s): Disconnected: Connection closed", s->user);
    imap_unselect(s);
    srv_items_free(&s->req.items);
    buf_free(&s->req.out);
    free(s->req.del);
    free(s->view);
    buf_free(&s->cmd);
    buf_free(&s->msg);
    free(s->pending);
    free(s->fetch);
    free(s->set);
}

void srv_imap_accept(struct srv *srv, int fd, int tls)
{
    struct imap *s = xcalloc(1, sizeof *s);
    s->box = -1;
    s->req.done = imap_req_done;
    s->b.on_timer = on_delay;
    s->b.on_free = on_free;
    srv_sess_start(srv, &s->b, SRV_IMAP, fd, on_conn);
    if (s->b.dead)
        return;
    s->b.c.in_min = 1024;            /* commands are short; a longer one grows the buffer */
    if (tls) {
        s->tls = 1;
        if (tls_start(&s->b.c, srv->imap_tls, NULL, 1) < 0) {
            srv_log("imap-login: Error: TLS: %s (%s)", s->b.c.errmsg, s->b.peer);
            srv_sess_drop(&s->b);
            return;
        }
    }
    const struct srv_cmd_fault *f = srv_sess_fault(&s->b, ST_IMAP_CONNECT);
    enum srv_stage st = ST_IMAP_CONNECT;
    if (!f) {
        f = srv_sess_fault(&s->b, ST_IMAP_BANNER);
        st = ST_IMAP_BANNER;
    }
    if (f && apply_fault(s, f, st, "", 0))
        return;
    if (!tls) {
        s->greeted = 1;
        banner(s);
    }
    if (!s->b.dead && !s->b.closing)
        srv_sess_flush(&s->b);
}
