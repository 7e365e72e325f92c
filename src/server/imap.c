/* imap: the server side of IMAP4rev1 (RFC 3501) with IDLE (RFC 2177), UIDPLUS's
 * UID EXPUNGE (RFC 4315), LITERAL+ (RFC 7888) and SASL-IR, over INBOX only. One
 * command runs at a time; a command waiting for the store holds the rest of the
 * input. A delivery to a mailbox marks its selected sessions, and those in IDLE list
 * it again at once and push EXISTS. Commands are bounded: a line by the session's
 * max_line, a command with its literals by IMAP_CMD_MAX (a larger literal is read
 * and dropped, and the command refused). */
#include "server/imap.h"
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
#define IMAP_OUT_HIGH (256 * 1024)   /* FETCH waits for the client to read below this */

enum { DLY_CMD, DLY_BANNER };
enum { I_NOAUTH, I_AUTH, I_SELECTED };
enum { W_NONE, W_SELECT, W_SYNC, W_FETCH, W_EXPUNGE, W_DRAIN };

struct view {
    uint32_t uid;
    uint32_t item;                   /* index in req.items */
};

struct imap {
    struct srv_sess b;               /* first: freed as one block */
    int state, readonly, tls, idling, idle_silent, auth_wait, dirty, wait, uidcmd;
    int closecmd;                    /* the EXPUNGE out is CLOSE's: no untagged answers */
    int starttls;                    /* STARTTLS answered: the handshake follows */
    int greeted;                     /* implicit TLS: the greeting waits for the handshake */
    char tag[64];
    char user[256];
    long box;                        /* the selected user's index, -1 when none */
    struct imap *snext, *sprev;      /* on the box's list of selected sessions */
    struct srv_req req;              /* one request out at a time; the listing lives here */
    struct view *view;
    size_t nview, capview;
    uint32_t maxuid;                 /* highest UID this session has shown */
    struct buf cmd;                  /* the command being gathered, literals included */
    uint64_t lit_left;               /* literal bytes still to come */
    int lit_drop;                    /* ... to be dropped: the command is too long */
    char *pending;                   /* a command run again once the mailbox is listed */
    size_t npending;
    struct imap_fetch *fetch;        /* FETCH in progress */
    struct imap_set *set;
    size_t fpos;
    const struct srv_cmd_fault *again;   /* kind = again struck this FETCH */
    const struct srv_cmd_fault *undone;  /* kind = undone struck this EXPUNGE */
    struct buf msg;                  /* the fetched message with CRLF line ends */
};

static void process(struct imap *s);
static void execute(struct imap *s, const char *p, size_t n, int faults, int synced);
static void fetch_step(struct imap *s);
static void fetch_got(struct imap *s);

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

static void reply(struct imap *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(struct imap *s, const char *fmt, ...)
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
    default:
        break;
    }
    return srv_sess_apply_fault(&s->b, f, at_connect ? DLY_BANNER : DLY_CMD, line, len, rep, rlog, bye,
                                where, at_connect, st == ST_IMAP_CONNECT);
}

/* --- the mailbox --- */

static struct imap_box *box(struct imap *s)
{
    return srv_imap_box(s->b.srv, (size_t)s->box);
}

static void submit(struct imap *s, enum srv_op op, int wait)
{
    s->req.op = op;
    s->req.ud = s;
    s->req.user = (size_t)s->box;
    s->req.imap = 1;
    s->wait = wait;
    s->b.waiting = 1;
    s->b.tmode = TM_NONE;
    conn_deadline(&s->b.c, 0);
    srv_store_submit(s->b.srv->store, &s->req);
}

static void unselect(struct imap *s)
{
    if (s->state != I_SELECTED)
        return;
    struct imap_box *b = box(s);
    if (s->sprev)
        s->sprev->snext = s->snext;
    else if (b->sel == s)
        b->sel = s->snext;
    if (s->snext)
        s->snext->sprev = s->sprev;
    s->snext = s->sprev = NULL;
    s->nview = 0;
    s->maxuid = 0;
    s->state = I_AUTH;
}

/* The store's listing merged into the box, then this session's view brought to it:
 * EXPUNGE for what left (highest first, so each number is the one the client
 * knows), EXISTS when something came. A message back under a UID the session has
 * passed (an EXPUNGE that was not done) waits for the next SELECT: UIDs only grow
 * within a view. */
static void sync_view(struct imap *s, int announce)
{
    struct imap_box *b = box(s);
    imap_box_merge(b, &s->req.items, (uint64_t)time(NULL));
    /* item index of each sid: the items are sorted by sid now */
    size_t n = 0, old = s->nview;
    for (size_t i = old; i-- > 0;) {
        if (!imap_box_find(b, s->view[i].uid)) {
            if (announce)
                conn_printf(&s->b.c, "* %zu EXPUNGE\r\n", i + 1);
            memmove(&s->view[i], &s->view[i + 1], (s->nview - i - 1) * sizeof *s->view);
            s->nview--;
        }
    }
    for (size_t i = 0; i < b->n; i++)
        if (b->v[i].uid > s->maxuid) {
            s->view = grow(s->view, &s->capview, s->nview, 1, sizeof *s->view);
            s->view[s->nview++].uid = b->v[i].uid;
            s->maxuid = b->v[i].uid;
            n++;
        }
    /* each view entry's item, by binary search over the sorted listing */
    const struct srv_items *it = &s->req.items;
    for (size_t i = 0; i < s->nview; i++) {
        const struct imap_ent *e = imap_box_find(b, s->view[i].uid);
        size_t lo = 0, hi = it->n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            int c = strcmp(e->sid, it->v[mid].uid);
            if (!c) {
                lo = mid;
                break;
            }
            if (c < 0)
                hi = mid;
            else
                lo = mid + 1;
        }
        s->view[i].item = (uint32_t)lo;
    }
    if (announce && (n || s->nview != old))
        conn_printf(&s->b.c, "* %zu EXISTS\r\n", s->nview);
    s->dirty = 0;
}

static void list_box(struct imap *s, int wait)
{
    srv_items_free(&s->req.items);
    submit(s, SOP_LIST, wait);
}

static void select_done(struct imap *s)
{
    struct conn *c = &s->b.c;
    struct imap_box *b = box(s);
    sync_view(s, 0);
    uint32_t unseen = 0;
    for (size_t i = 0; i < s->nview && !unseen; i++) {
        const struct imap_ent *e = imap_box_find(b, s->view[i].uid);
        if (!(e->flags & IF_SEEN))
            unseen = (uint32_t)i + 1;
    }
    conn_puts(c, "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n"
                 "* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)] Flags permitted.\r\n");
    conn_printf(c, "* %zu EXISTS\r\n* 0 RECENT\r\n", s->nview);
    if (unseen)
        conn_printf(c, "* OK [UNSEEN %u] First unseen.\r\n", unseen);
    conn_printf(c, "* OK [UIDVALIDITY %u] UIDs valid\r\n* OK [UIDNEXT %u] Predicted next UID\r\n",
                s->b.srv->imap_uidvalidity, b->uidnext);
    reply(s, "OK [%s] Select completed.", s->readonly ? "READ-ONLY" : "READ-WRITE");
}

static void req_done(struct srv_req *r)
{
    struct imap *s = r->ud;
    int wait = s->wait;
    s->wait = W_NONE;
    s->b.waiting = 0;
    if (srv_sess_reap(&s->b) || s->b.dead)
        return;
    switch (wait) {
    case W_SELECT:
        if (r->status != SS_OK) {
            unselect(s);
            reply(s, "NO [%s] %s", r->status == SS_IN_USE ? "INUSE" : "UNAVAILABLE", r->err);
        } else {
            select_done(s);
        }
        break;
    case W_SYNC:
        if (r->status == SS_OK && s->state == I_SELECTED)
            sync_view(s, 1);
        if (s->pending) {
            char *p = s->pending;
            s->pending = NULL;
            execute(s, p, s->npending, 0, 1);
            free(p);
        }
        break;
    case W_FETCH:
        if (r->status != SS_OK) {
            reply(s, "NO [%s] %s", r->status == SS_PERM ? "EXPUNGEISSUED" : "UNAVAILABLE", r->err);
            free(s->fetch);
            free(s->set);
            s->fetch = NULL;
            s->set = NULL;
            s->again = NULL;
            r->out.off = r->out.len = 0;
        } else {
            fetch_got(s);            /* may submit r again: r is not touched after it */
        }
        break;
    case W_EXPUNGE:
        if (r->status != SS_OK) {
            if (s->closecmd)
                unselect(s);
            reply(s, "NO [%s] Expunge failed: %s", r->status == SS_IN_USE ? "INUSE" : "UNAVAILABLE", r->err);
        } else {
            struct imap_box *b = box(s);
            for (size_t i = 0; i < r->ndel; i++)
                for (size_t j = 0; j < s->nview; j++)
                    if (&s->req.items.v[s->view[j].item] == r->del[i]) {
                        imap_box_remove(b, s->view[j].uid);
                        break;
                    }
            for (size_t i = s->nview; i-- > 0;)
                if (!imap_box_find(b, s->view[i].uid)) {
                    if (!s->closecmd)
                        conn_printf(&s->b.c, "* %zu EXPUNGE\r\n", i + 1);
                    memmove(&s->view[i], &s->view[i + 1], (s->nview - i - 1) * sizeof *s->view);
                    s->nview--;
                }
            for (struct imap *o = b->sel; o; o = o->snext)
                if (o != s) {
                    o->dirty = 1;
                    if (o->idling && !o->b.waiting && !o->idle_silent)
                        list_box(o, W_SYNC);
                }
            if (s->closecmd)
                unselect(s);
            reply(s, s->closecmd ? "OK Close completed." : "OK Expunge completed.");
        }
        s->closecmd = 0;
        free(r->del);
        r->del = NULL;
        r->ndel = 0;
        break;
    default:
        break;
    }
    process(s);
}

void srv_imap_delivered(void *ud, size_t user)
{
    struct srv *srv = ud;
    if (!srv->imap_boxes || !srv->imap_boxes[user])
        return;
    for (struct imap *s = srv->imap_boxes[user]->sel; s; s = s->snext) {
        s->dirty = 1;
        if (s->idling && !s->idle_silent && !s->b.waiting && !s->b.dead)
            list_box(s, W_SYNC);
    }
}

/* --- FETCH --- */

static void fetch_one(struct imap *s, size_t seq, const struct imap_ent *e, const char *m, size_t len)
{
    struct buf o = { 0 };
    const struct imap_fetch *f = s->fetch;
    const struct srv_item *it = &s->req.items.v[s->view[seq].item];
    char tmp[80];
    int sp = 0;
    unsigned flags = e->flags;
    if (imap_fetch_sets_seen(f) && !s->readonly && !(flags & IF_SEEN)) {
        ((struct imap_ent *)e)->flags |= IF_SEEN;
        flags |= IF_SEEN;
    }
#define SEP() do { if (sp++) buf_append(&o, " ", 1); } while (0)
    snprintf(tmp, sizeof tmp, "* %zu FETCH (", seq + 1);
    buf_append(&o, tmp, strlen(tmp));
    if (f->what & FA_UID) {
        SEP();
        snprintf(tmp, sizeof tmp, "UID %u", e->uid);
        buf_append(&o, tmp, strlen(tmp));
    }
    if ((f->what & FA_FLAGS) || (flags != e->flags) || (imap_fetch_sets_seen(f) && !s->readonly)) {
        SEP();
        buf_append(&o, "FLAGS ", 6);
        imap_flags_write(&o, flags);
    }
    if (f->what & FA_SIZE) {
        SEP();
        snprintf(tmp, sizeof tmp, "RFC822.SIZE %llu", (unsigned long long)it->size);
        buf_append(&o, tmp, strlen(tmp));
    }
    if (f->what & FA_DATE) {
        struct tm tm;
        time_t t = (time_t)e->date;
        gmtime_r(&t, &tm);
        SEP();
        strftime(tmp, sizeof tmp, "INTERNALDATE \"%d-%b-%Y %H:%M:%S +0000\"", &tm);
        buf_append(&o, tmp, strlen(tmp));
    }
    if (f->what & FA_ENVELOPE) {
        SEP();
        buf_append(&o, "ENVELOPE ", 9);
        imap_envelope(&o, m, len);
    }
    if (f->what & (FA_BODYSTRUCTURE | FA_BODY)) {
        for (int k = 0; k < 2; k++) {
            if (!(f->what & (k ? FA_BODY : FA_BODYSTRUCTURE)))
                continue;
            SEP();
            buf_append(&o, k ? "BODY " : "BODYSTRUCTURE ", k ? 5 : 14);
            imap_bodystructure(&o, m, len);
        }
    }
    for (size_t i = 0; i < f->nsec; i++) {
        const struct imap_att *a = &f->sec[i];
        struct buf sec = { 0 };
        imap_section(&sec, m, len, a);
        size_t off = 0, n = sec.len;
        if (a->partial) {
            off = a->off < n ? (size_t)a->off : n;
            n = a->len < n - off ? (size_t)a->len : n - off;
        }
        SEP();
        buf_append(&o, a->label, strlen(a->label));
        snprintf(tmp, sizeof tmp, " {%zu}\r\n", n);
        buf_append(&o, tmp, strlen(tmp));
        buf_append(&o, sec.p ? sec.p + off : "", n);
        buf_free(&sec);
    }
#undef SEP
    buf_append(&o, ")\r\n", 3);
    conn_write(&s->b.c, o.p, o.len);
    buf_free(&o);
}

static void fetch_finish(struct imap *s)
{
    s->again = NULL;                 /* it strikes a FETCH that served a body, or none */
    free(s->fetch);
    free(s->set);
    s->fetch = NULL;
    s->set = NULL;
    reply(s, "OK Fetch completed.");
}

static void on_drain(struct conn *c, void *ud)
{
    struct imap *s = ud;
    c->on_drain = NULL;
    if (s->wait != W_DRAIN)
        return;
    s->wait = W_NONE;
    s->b.waiting = 0;
    fetch_step(s);
    process(s);
}

/* The store answered for the message at s->fpos: its answer, then the rest. */
static void fetch_got(struct imap *s)
{
    struct imap_box *b = box(s);
    const struct imap_ent *e = imap_box_find(b, s->view[s->fpos].uid);
    s->msg.off = s->msg.len = 0;
    imap_crlf(&s->msg, s->req.out.p ? s->req.out.p : "", s->req.out.len);
    s->req.out.off = s->req.out.len = 0;
    if (s->req.out.cap > 256 * 1024)
        buf_free(&s->req.out);
    if (e) {
        fetch_one(s, s->fpos, e, s->msg.p ? s->msg.p : "", s->msg.len);
        if (s->again) {
            char logl[400];
            char sid[sizeof e->sid];
            memcpy(sid, e->sid, sizeof sid);     /* e moves with the renumbering */
            uint32_t old = e->uid, nu = imap_box_renumber(b, old);
            /* Dovecot's words when its maildir uidlist loses a message's UID */
            snprintf(logl, sizeof logl, "imap(%s): Warning: Mailbox INBOX: Expunged message reappeared, "
                     "giving a new UID (old uid=%u, new uid=%u, file=%s)", s->user, old, nu, sid);
            srv_fault_log(&s->b, s->again, logl);
            s->again = NULL;
            for (struct imap *o = b->sel; o; o = o->snext)
                o->dirty = 1;
        }
    }
    if (s->msg.cap > 256 * 1024)
        buf_free(&s->msg);
    s->fpos++;
    srv_sess_flush(&s->b);
    if (conn_pending_out(&s->b.c) > IMAP_OUT_HIGH && conn_is_open(&s->b.c)) {
        s->wait = W_DRAIN;
        s->b.waiting = 1;
        s->b.c.on_drain = on_drain;
        s->b.tmode = TM_IDLE;
        conn_deadline(&s->b.c, s->b.srv->cfg->imap_timeout);
        return;
    }
    fetch_step(s);
}

/* Answers the FETCH from s->fpos on; a message whose bytes are needed goes to the
 * store and the answer goes on from fetch_got. */
static void fetch_step(struct imap *s)
{
    struct imap_box *b = box(s);
    int body = imap_fetch_needs_body(s->fetch);
    uint32_t star_seq = (uint32_t)s->nview, star_uid = s->nview ? s->view[s->nview - 1].uid : 0;
    for (; s->fpos < s->nview; s->fpos++) {
        uint32_t key = s->uidcmd ? s->view[s->fpos].uid : (uint32_t)s->fpos + 1;
        if (!imap_set_has(s->set, key, s->uidcmd ? star_uid : star_seq))
            continue;
        const struct imap_ent *e = imap_box_find(b, s->view[s->fpos].uid);
        if (!e)
            continue;
        if (body) {
            s->req.item = &s->req.items.v[s->view[s->fpos].item];
            s->req.out.off = s->req.out.len = 0;
            submit(s, SOP_FETCH, W_FETCH);
            return;
        }
        fetch_one(s, s->fpos, e, "", 0);
    }
    fetch_finish(s);
}

/* --- commands --- */

static void cmd_login(struct imap *s, const char *user, size_t ulen, const char *pass, size_t plen,
                      const char *method)
{
    struct srv *srv = s->b.srv;
    snprintf(s->user, sizeof s->user, "%.*s", (int)ulen, user);
    long u = srv_check_login(srv, user, ulen, pass, plen);
    if (u < 0) {
        srv_log("imap-login: Disconnected (auth failed, 1 attempts): user=<%s>, method=%s, rip=%s",
                s->user, method, s->b.peer);
        reply(s, "NO [AUTHENTICATIONFAILED] Authentication failed.");
        s->user[0] = 0;
        return;
    }
    s->box = u;
    s->state = I_AUTH;
    if (srv->cfg->log_sessions)
        srv_log("imap-login: Login: user=<%s>, method=%s, rip=%s%s", s->user, method, s->b.peer,
                s->tls ? ", TLS" : "");
    reply(s, "OK [CAPABILITY %s] Logged in", capability(s));
}

static void sasl_plain(struct imap *s, const char *b64, size_t n)
{
    char dec[1024];
    size_t dn;
    const char *u, *p;
    size_t ul, pl;
    if (srv_b64_decode(b64, n, dec, sizeof dec, &dn) < 0 || srv_sasl_plain(dec, dn, &u, &ul, &p, &pl) < 0) {
        reply(s, "BAD Invalid base64 data in continued response");
        return;
    }
    cmd_login(s, u, ul, p, pl, "PLAIN");
}

static void cmd_search(struct imap *s, struct imap_cur *c)
{
    struct imap_search q;
    const char *why;
    if (imap_search_parse(c, &q, &why) < 0) {
        reply(s, "BAD Error in IMAP command SEARCH: %s", why);
        return;
    }
    struct imap_box *b = box(s);
    uint32_t maxuid = s->nview ? s->view[s->nview - 1].uid : 0;
    conn_puts(&s->b.c, "* SEARCH");
    for (size_t i = 0; i < s->nview; i++) {
        const struct imap_ent *e = imap_box_find(b, s->view[i].uid);
        if (e && imap_search_match(&q, (uint32_t)i + 1, e->uid, e->flags, (uint32_t)s->nview, maxuid))
            conn_printf(&s->b.c, " %u", s->uidcmd ? e->uid : (uint32_t)i + 1);
    }
    conn_puts(&s->b.c, "\r\n");
    imap_search_free(&q);
    reply(s, "OK Search completed.");
}

static void cmd_store(struct imap *s, struct imap_cur *c)
{
    struct imap_set set;
    const char *w, *why = "bad syntax";
    size_t n;
    unsigned flags;
    if (imap_atom(c, &w, &n) < 0 || imap_set_parse(w, n, &set) < 0 || imap_sp(c) < 0 ||
        imap_atom(c, &w, &n) < 0 || imap_sp(c) < 0 || imap_flags_parse(c, &flags) < 0) {
        reply(s, "BAD Error in IMAP command STORE: %s", why);
        return;
    }
    int op = w[0] == '+' ? 1 : w[0] == '-' ? -1 : 0;
    size_t base = op ? 1 : 0;
    int silent = n >= base + 12 && !strncasecmp(w + base + 5, ".SILENT", 7);
    if ((n != base + 5 && !silent) || strncasecmp(w + base, "FLAGS", 5)) {
        reply(s, "BAD Error in IMAP command STORE: Invalid arguments.");
        return;
    }
    if (s->readonly) {
        reply(s, "NO Mailbox is read-only.");
        return;
    }
    struct imap_box *b = box(s);
    uint32_t maxuid = s->nview ? s->view[s->nview - 1].uid : 0;
    for (size_t i = 0; i < s->nview; i++) {
        struct imap_ent *e = imap_box_find(b, s->view[i].uid);
        if (!e || !imap_set_has(&set, s->uidcmd ? e->uid : (uint32_t)i + 1, s->uidcmd ? maxuid : (uint32_t)s->nview))
            continue;
        e->flags = op > 0 ? e->flags | flags : op < 0 ? e->flags & ~flags : flags;
        if (silent)
            continue;
        if (s->uidcmd)
            conn_printf(&s->b.c, "* %zu FETCH (UID %u FLAGS ", i + 1, e->uid);
        else
            conn_printf(&s->b.c, "* %zu FETCH (FLAGS ", i + 1);
        struct buf o = { 0 };
        imap_flags_write(&o, e->flags);
        conn_write(&s->b.c, o.p, o.len);
        buf_free(&o);
        conn_puts(&s->b.c, ")\r\n");
    }
    reply(s, "OK Store completed.");
}

/* EXPUNGE (set NULL) or UID EXPUNGE set; close: CLOSE's silent expunge. */
static void cmd_expunge(struct imap *s, const struct imap_set *set, int close)
{
    struct imap_box *b = box(s);
    uint32_t maxuid = s->nview ? s->view[s->nview - 1].uid : 0;
    const struct srv_item **del = xmalloc((s->nview ? s->nview : 1) * sizeof *del);
    size_t nd = 0;
    for (size_t i = 0; i < s->nview; i++) {
        struct imap_ent *e = imap_box_find(b, s->view[i].uid);
        if (e && (e->flags & IF_DELETED) && (!set || imap_set_has(set, e->uid, maxuid)))
            del[nd++] = &s->req.items.v[s->view[i].item];
    }
    if (s->undone && nd) {
        /* Answered, not done: the messages stay, their flags as if never set. */
        char logl[400];
        snprintf(logl, sizeof logl, "imap(%s): Error: Mailbox INBOX: expunge of %zu messages answered "
                 "but not done: index not written", s->user, nd);
        srv_fault_log(&s->b, s->undone, logl);
        s->undone = NULL;
        for (size_t i = s->nview; i-- > 0;) {
            struct imap_ent *e = imap_box_find(b, s->view[i].uid);
            if (!e || !(e->flags & IF_DELETED) || (set && !imap_set_has(set, e->uid, maxuid)))
                continue;
            e->flags &= ~(unsigned)(IF_DELETED | IF_SEEN);
            if (!close)
                conn_printf(&s->b.c, "* %zu EXPUNGE\r\n", i + 1);
            memmove(&s->view[i], &s->view[i + 1], (s->nview - i - 1) * sizeof *s->view);
            s->nview--;
        }
        free(del);
        if (close)
            unselect(s);
        reply(s, close ? "OK Close completed." : "OK Expunge completed.");
        return;
    }
    s->undone = NULL;
    s->closecmd = close;
    if (!nd) {
        free(del);
        if (close)
            unselect(s);
        reply(s, close ? "OK Close completed." : "OK Expunge completed.");
        return;
    }
    free(s->req.del);
    s->req.del = del;
    s->req.ndel = nd;
    submit(s, SOP_EXPUNGE, W_EXPUNGE);
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
        reply(s, "BAD Error in IMAP command %s: Invalid arguments.", verb);
        return;
    }
    if (!pl)
        conn_printf(&s->b.c, "* %s (\\Noselect) \"/\" \"\"\r\n", verb);
    else if (!strcmp(pat, "*") || !strcmp(pat, "%") || is_inbox(pat))
        conn_printf(&s->b.c, "* %s (\\HasNoChildren) \"/\" INBOX\r\n", verb);
    reply(s, "OK %s completed.", verb);
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
        cmd_search(s, c);
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
        fetch_step(s);
        return;
    bad_fetch:
        free(set);
        free(f);
        s->again = NULL;
        reply(s, "BAD Error in IMAP command FETCH: %s", why);
    } else if (IS("STORE")) {
        cmd_store(s, c);
    } else if (IS("EXPUNGE")) {
        if (s->readonly) {
            reply(s, "NO Mailbox is read-only.");
            return;
        }
        if (s->uidcmd) {
            const char *w;
            size_t wn;
            struct imap_set set;
            if (imap_atom(c, &w, &wn) < 0 || imap_set_parse(w, wn, &set) < 0) {
                reply(s, "BAD Error in IMAP command UID EXPUNGE: Invalid sequence set");
                return;
            }
            cmd_expunge(s, &set, 0);
        } else {
            cmd_expunge(s, NULL, 0);
        }
    } else if (IS("CLOSE") && !s->uidcmd) {
        if (s->readonly) {
            unselect(s);
            reply(s, "OK Close completed.");
        } else {
            cmd_expunge(s, NULL, 1);
        }
    } else if (IS("UNSELECT") && !s->uidcmd) {
        unselect(s);
        reply(s, "OK Unselect completed.");
    } else if ((IS("NOOP") || IS("CHECK")) && !s->uidcmd) {
        if (s->dirty && !synced)
            goto sync;
        reply(s, "OK %.*s completed.", (int)vn, v);
    } else if (IS("IDLE") && !s->uidcmd) {
        s->idling = 1;
        conn_puts(&s->b.c, "+ idling\r\n");
        if (s->dirty && !s->idle_silent)
            list_box(s, W_SYNC);
    } else {
        reply(s, "BAD Error in IMAP command %s%.*s: Unknown command.", s->uidcmd ? "UID " : "", (int)vn, v);
    }
    return;
sync:
    free(s->pending);
    s->pending = xmalloc(n ? n : 1);
    memcpy(s->pending, p, n);
    s->npending = n;
    list_box(s, W_SYNC);
#undef IS
}

/* One whole command (its literals inline). faults: command faults may strike (not
 * on a delayed command's second run); synced: see selected(). */
static void execute(struct imap *s, const char *p, size_t n, int faults, int synced)
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
        reply(s, "BAD Error in IMAP command received by server.");
        return;
    }
    if (vn == 3 && !strncasecmp(v, "UID", 3)) {
        s->uidcmd = 1;
        if (imap_sp(&c) < 0 || imap_atom(&c, &v, &vn) < 0) {
            reply(s, "BAD Error in IMAP command UID: Missing command.");
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
#define IS(w) (vn == strlen(w) && !strncasecmp(v, w, vn))
    if (s->uidcmd && s->state != I_SELECTED) {
        reply(s, "BAD No mailbox selected.");
    } else if (IS("CAPABILITY")) {
        conn_printf(&s->b.c, "* CAPABILITY %s\r\n", capability(s));
        reply(s, "OK Capability completed.");
    } else if (IS("LOGOUT")) {
        conn_puts(&s->b.c, "* BYE Logging out\r\n");
        reply(s, "OK Logout completed.");
        if (s->b.srv->cfg->log_sessions && s->user[0])
            srv_log("imap(%s): Disconnected: Logged out", s->user);
        srv_sess_close_after_flush(&s->b);
    } else if (IS("NOOP") && s->state != I_SELECTED) {
        reply(s, "OK NOOP completed.");
    } else if (IS("ID")) {
        conn_puts(&s->b.c, "* ID (\"name\" \"mailsoak-server\")\r\n");
        reply(s, "OK ID completed.");
    } else if (IS("STARTTLS")) {
        if (!s->b.srv->imap_tls || s->tls) {
            reply(s, s->tls ? "BAD TLS is already active." : "BAD TLS support isn't enabled.");
        } else if (s->state != I_NOAUTH) {
            reply(s, "BAD STARTTLS can't be used after login.");
        } else {
            reply(s, "OK Begin TLS negotiation now.");
            s->starttls = 1;
            s->b.waiting = 1;        /* nothing sent after it is read in the clear */
        }
    } else if (s->state == I_NOAUTH) {
        if (IS("LOGIN")) {
            char user[256], pass[256];
            size_t ul, pl;
            if (imap_astring(&c, user, sizeof user, &ul) < 0 || imap_sp(&c) < 0 ||
                imap_astring(&c, pass, sizeof pass, &pl) < 0) {
                reply(s, "BAD Error in IMAP command LOGIN: Invalid arguments.");
                return;
            }
            cmd_login(s, user, ul, pass, pl, "PLAIN");
        } else if (IS("AUTHENTICATE")) {
            const char *m, *ir;
            size_t mn, irn;
            if (imap_atom(&c, &m, &mn) < 0 || mn != 5 || strncasecmp(m, "PLAIN", 5)) {
                reply(s, "NO Unsupported authentication mechanism.");
                return;
            }
            if (imap_sp(&c) == 0 && imap_atom(&c, &ir, &irn) == 0) {
                sasl_plain(s, irn == 1 && ir[0] == '=' ? "" : ir, irn == 1 && ir[0] == '=' ? 0 : irn);
                return;
            }
            s->auth_wait = 1;
            conn_puts(&s->b.c, "+ \r\n");
        } else {
            reply(s, "BAD Error in IMAP command %.*s: Unknown command or not allowed before login.", (int)vn, v);
        }
    } else if (IS("LOGIN") || IS("AUTHENTICATE")) {
        reply(s, "BAD Already logged in.");
    } else if (IS("SELECT") || IS("EXAMINE")) {
        char name[256];
        size_t nl;
        if (imap_astring(&c, name, sizeof name, &nl) < 0) {
            reply(s, "BAD Error in IMAP command %.*s: Invalid arguments.", (int)vn, v);
            return;
        }
        if (s->state == I_SELECTED) {
            unselect(s);
            conn_puts(&s->b.c, "* OK [CLOSED] Previous mailbox closed.\r\n");
        }
        if (!is_inbox(name)) {
            reply(s, "NO [NONEXISTENT] Mailbox doesn't exist: %s", nl > 100 ? "(name too long)" : name);
            return;
        }
        struct imap_box *b = box(s);
        s->readonly = IS("EXAMINE");
        s->state = I_SELECTED;
        s->snext = b->sel;
        if (b->sel)
            b->sel->sprev = s;
        b->sel = s;
        list_box(s, W_SELECT);
    } else if (IS("LIST") || IS("LSUB")) {
        char verb[8];
        snprintf(verb, sizeof verb, "%.*s", (int)vn, v);
        for (char *q = verb; *q; q++)
            *q = (char)toupper((unsigned char)*q);
        cmd_list(s, &c, verb);
    } else if (IS("NAMESPACE")) {
        conn_puts(&s->b.c, "* NAMESPACE ((\"\" \"/\")) NIL NIL\r\n");
        reply(s, "OK Namespace completed.");
    } else if (IS("ENABLE")) {
        conn_puts(&s->b.c, "* ENABLED\r\n");
        reply(s, "OK Enabled.");
    } else if (s->state == I_SELECTED) {
        selected(s, v, vn, &c, p, n, synced);
    } else {
        reply(s, "BAD Error in IMAP command %.*s: Unknown command or no mailbox selected.", (int)vn, v);
    }
#undef IS
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
            reply(s, "OK Idle completed.");
        else
            reply(s, "BAD Expected DONE.");
        return;
    }
    if (s->auth_wait) {
        s->auth_wait = 0;
        if (n == 1 && l[0] == '*')
            reply(s, "BAD Authentication aborted by client.");
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
    execute(s, s->cmd.p, len, 1, 0);
    if (s->cmd.cap > IMAP_CMD_MAX * 2)
        buf_free(&s->cmd);
}

static void process(struct imap *s)
{
    srv_sess_pump(&s->b, pump_raw, pump_line, "* BYE Input line too long.\r\n");
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
        execute(s, b->delayed, strlen(b->delayed), 0, 0);
    if (!b->waiting)
        process(s);
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
        process(s);
}

static void on_free(struct srv_sess *b)
{
    struct imap *s = (struct imap *)b;
    if (b->srv->cfg->log_sessions && s->user[0] && s->state != I_NOAUTH)
        srv_log("imap(%s): Disconnected: Connection closed", s->user);
    unselect(s);
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
    s->req.done = req_done;
    s->b.on_timer = on_delay;
    s->b.on_free = on_free;
    srv_sess_start(srv, &s->b, SRV_IMAP, fd, on_conn);
    if (s->b.dead)
        return;
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
