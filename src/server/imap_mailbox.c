/* imap_mailbox: an IMAP session's mailbox. Its listing comes from the store
 * (unlocked: sessions share a mailbox) and is merged into the mailbox's UIDs
 * (imap_box.c); the session's view follows with EXPUNGE and EXISTS, at SELECT, at
 * NOOP or UID SEARCH when a delivery or another session changed it, and at once in
 * IDLE. FETCH goes to the store one message at a time and waits for the client
 * to read before the next when its answers pile up. */
#include "server/imap_mailbox.h"
#include "server/imap.h"
#include "server/imap_mime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/alloc.h"

static void fetch_got(struct imap *s);

struct imap_box *imap_box_of(struct imap *s)
{
    return srv_imap_box(s->b.srv, (size_t)s->box);
}

void imap_submit(struct imap *s, enum srv_op op, int wait)
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

void imap_unselect(struct imap *s)
{
    if (s->state != I_SELECTED)
        return;
    struct imap_box *b = imap_box_of(s);
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
    struct imap_box *b = imap_box_of(s);
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

void imap_list_box(struct imap *s, int wait)
{
    srv_items_free(&s->req.items);
    imap_submit(s, SOP_LIST, wait);
}

static void select_done(struct imap *s)
{
    struct conn *c = &s->b.c;
    struct imap_box *b = imap_box_of(s);
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
    imap_reply(s, "OK [%s] Select completed.", s->readonly ? "READ-ONLY" : "READ-WRITE");
}

void imap_req_done(struct srv_req *r)
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
            imap_unselect(s);
            imap_reply(s, "NO [%s] %s", r->status == SS_IN_USE ? "INUSE" : "UNAVAILABLE", r->err);
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
            imap_execute(s, p, s->npending, 0, 1);
            free(p);
        }
        break;
    case W_FETCH:
        if (r->status != SS_OK) {
            imap_reply(s, "NO [%s] %s", r->status == SS_PERM ? "EXPUNGEISSUED" : "UNAVAILABLE", r->err);
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
                imap_unselect(s);
            imap_reply(s, "NO [%s] Expunge failed: %s", r->status == SS_IN_USE ? "INUSE" : "UNAVAILABLE", r->err);
        } else {
            struct imap_box *b = imap_box_of(s);
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
                        imap_list_box(o, W_SYNC);
                }
            if (s->closecmd)
                imap_unselect(s);
            imap_reply(s, s->closecmd ? "OK Close completed." : "OK Expunge completed.");
        }
        s->closecmd = 0;
        free(r->del);
        r->del = NULL;
        r->ndel = 0;
        break;
    default:
        break;
    }
    imap_process(s);
}

void srv_imap_delivered(void *ud, size_t user)
{
    struct srv *srv = ud;
    if (!srv->imap_boxes || !srv->imap_boxes[user])
        return;
    for (struct imap *s = srv->imap_boxes[user]->sel; s; s = s->snext) {
        s->dirty = 1;
        if (s->idling && !s->idle_silent && !s->b.waiting && !s->b.dead)
            imap_list_box(s, W_SYNC);
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
    imap_reply(s, "OK Fetch completed.");
}

static void on_drain(struct conn *c, void *ud)
{
    struct imap *s = ud;
    c->on_drain = NULL;
    if (s->wait != W_DRAIN)
        return;
    s->wait = W_NONE;
    s->b.waiting = 0;
    imap_fetch_step(s);
    imap_process(s);
}

/* The store answered for the message at s->fpos: its answer, then the rest. */
static void fetch_got(struct imap *s)
{
    struct imap_box *b = imap_box_of(s);
    const struct imap_ent *e = imap_box_find(b, s->view[s->fpos].uid);
    s->msg.off = s->msg.len = 0;
    imap_crlf(&s->msg, s->req.out.p ? s->req.out.p : "", s->req.out.len);
    s->req.out.off = s->req.out.len = 0;
    if (s->req.out.cap > 256 * 1024)
        buf_free(&s->req.out);
    if (e) {
        fetch_one(s, s->fpos, e, s->msg.p ? s->msg.p : "", s->msg.len);
        if (s->again) {
            char logl[640];
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
    imap_fetch_step(s);
}

/* Answers the FETCH from s->fpos on; a message whose bytes are needed goes to the
 * store and the answer goes on from fetch_got. */
void imap_fetch_step(struct imap *s)
{
    struct imap_box *b = imap_box_of(s);
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
            imap_submit(s, SOP_FETCH, W_FETCH);
            return;
        }
        fetch_one(s, s->fpos, e, "", 0);
    }
    fetch_finish(s);
}

/* --- SEARCH, STORE, EXPUNGE --- */

void imap_cmd_search(struct imap *s, struct imap_cur *c)
{
    struct imap_search q;
    const char *why;
    if (imap_search_parse(c, &q, &why) < 0) {
        imap_reply(s, "BAD Error in IMAP command SEARCH: %s", why);
        return;
    }
    struct imap_box *b = imap_box_of(s);
    uint32_t maxuid = s->nview ? s->view[s->nview - 1].uid : 0;
    conn_puts(&s->b.c, "* SEARCH");
    for (size_t i = 0; i < s->nview; i++) {
        const struct imap_ent *e = imap_box_find(b, s->view[i].uid);
        if (e && imap_search_match(&q, (uint32_t)i + 1, e->uid, e->flags, (uint32_t)s->nview, maxuid))
            conn_printf(&s->b.c, " %u", s->uidcmd ? e->uid : (uint32_t)i + 1);
    }
    conn_puts(&s->b.c, "\r\n");
    imap_search_free(&q);
    imap_reply(s, "OK Search completed.");
}

void imap_cmd_store(struct imap *s, struct imap_cur *c)
{
    struct imap_set set;
    const char *w, *why = "bad syntax";
    size_t n;
    unsigned flags;
    if (imap_atom(c, &w, &n) < 0 || imap_set_parse(w, n, &set) < 0 || imap_sp(c) < 0 ||
        imap_atom(c, &w, &n) < 0 || imap_sp(c) < 0 || imap_flags_parse(c, &flags) < 0) {
        imap_reply(s, "BAD Error in IMAP command STORE: %s", why);
        return;
    }
    int op = w[0] == '+' ? 1 : w[0] == '-' ? -1 : 0;
    size_t base = op ? 1 : 0;
    int silent = n >= base + 12 && !strncasecmp(w + base + 5, ".SILENT", 7);
    if ((n != base + 5 && !silent) || strncasecmp(w + base, "FLAGS", 5)) {
        imap_reply(s, "BAD Error in IMAP command STORE: Invalid arguments.");
        return;
    }
    const struct srv_cmd_fault *applied = s->applied;
    s->applied = NULL;
    if (s->readonly) {
        imap_reply(s, "NO Mailbox is read-only.");
        return;
    }
    struct imap_box *b = imap_box_of(s);
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
    if (applied) {
        /* the flags are set; the answer says they are not */
        char logl[400];
        snprintf(logl, sizeof logl, "imap(%s): Error: Mailbox INBOX: store answered NO after its flags were "
                 "written", s->user);
        srv_fault_log(&s->b, applied, logl);
        imap_reply(s, "NO [SERVERBUG] Internal error occurred. Refer to server log for more information.");
        return;
    }
    imap_reply(s, "OK Store completed.");
}

/* EXPUNGE (set NULL) or UID EXPUNGE set; close: CLOSE's silent expunge. */
void imap_cmd_expunge(struct imap *s, const struct imap_set *set, int close)
{
    struct imap_box *b = imap_box_of(s);
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
        char logl[640];
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
            imap_unselect(s);
        imap_reply(s, close ? "OK Close completed." : "OK Expunge completed.");
        return;
    }
    s->undone = NULL;
    s->closecmd = close;
    if (!nd) {
        free(del);
        if (close)
            imap_unselect(s);
        imap_reply(s, close ? "OK Close completed." : "OK Expunge completed.");
        return;
    }
    free(s->req.del);
    s->req.del = del;
    s->req.ndel = nd;
    imap_submit(s, SOP_EXPUNGE, W_EXPUNGE);
}
