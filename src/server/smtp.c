/* smtp: the server side of ESMTP (RFC 5321, PIPELINING, SIZE, 8BITMIME, AUTH PLAIN,
 * LOGIN and CRAM-MD5). Every complete line in the input buffer is answered in order before
 * one flush; the session pauses while the store holds its message or a delay fault
 * runs, and resumes on the input still buffered. */
#include "server/smtp.h"
#include "server/server.h"
#include "server/proto.h"
#include "server/rate.h"

#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "lib/alloc.h"

enum { DLY_CMD, DLY_EOD, DLY_BANNER };
enum { A_NONE, A_PLAIN, A_LOGIN_USER, A_LOGIN_PASS, A_CRAM };

struct smtp {
    struct srv_sess b;               /* first: freed as one block */
    char helo[128];
    int greeted, has_mail, in_data, auth_ok, auth;
    char auth_user[256];
    char chal[512];                  /* CRAM-MD5: the challenge sent */
    size_t *rcpts, nrcpts, caprcpts;
    struct srv_data data;
    struct buf msg;
    struct srv_req req;
    char qid[32];
};

static void process(struct smtp *s);
static void command(struct smtp *s, char *line, size_t len, int faults);

static void reset_tx(struct smtp *s)
{
    s->has_mail = 0;
    s->nrcpts = 0;
    s->msg.off = s->msg.len = 0;
    if (s->msg.cap > 256 * 1024)
        buf_free(&s->msg);           /* one big message must not pin memory for good */
}

static const char *stage_word(enum srv_stage st)
{
    switch (st) {
    case ST_SMTP_CONNECT: return "CONNECT";
    case ST_SMTP_BANNER: return "CONNECT";
    case ST_SMTP_EHLO: return "EHLO";
    case ST_SMTP_AUTH: return "AUTH";
    case ST_SMTP_MAIL: return "MAIL";
    case ST_SMTP_RCPT: return "RCPT";
    case ST_SMTP_DATA: return "DATA";
    case ST_SMTP_EOD: return "END-OF-MESSAGE";
    case ST_SMTP_RSET: return "RSET";
    case ST_SMTP_NOOP: return "NOOP";
    case ST_SMTP_QUIT: return "QUIT";
    default: return "COMMAND";
    }
}

/* A reply line for a temp/perm fault: the stage's usual words, or the config's. */
static void fault_reply(struct smtp *s, const struct srv_cmd_fault *f, enum srv_stage st, char *out, size_t n)
{
    int perm = f->kind == SF_PERM;
    const char *text;
    int code;
    switch (st) {
    case ST_SMTP_MAIL:
        code = perm ? 553 : 451;
        text = perm ? "5.7.1 Sender address rejected: Access denied" : "4.3.0 Error: queue file write error";
        break;
    case ST_SMTP_RCPT:
        code = perm ? 550 : 450;
        text = perm ? "5.7.1 Recipient address rejected: Access denied"
                    : "4.2.0 Recipient address rejected: Temporary lookup failure";
        break;
    case ST_SMTP_DATA:
    case ST_SMTP_EOD:
        code = perm ? 554 : 451;
        text = perm ? "5.7.1 Message rejected: Content policy violation" : "4.3.0 Error: queue file write error";
        break;
    case ST_SMTP_AUTH:
        code = perm ? 535 : 454;
        text = perm ? "5.7.8 Error: authentication failed" : "4.7.0 Temporary authentication failure";
        break;
    case ST_SMTP_BANNER:
    case ST_SMTP_CONNECT:
        code = perm ? 554 : 421;
        text = perm ? "5.7.1 No SMTP service here" : "4.3.2 Service not available, try again later";
        break;
    default:
        code = perm ? 554 : 451;
        text = perm ? "5.5.0 Command rejected" : "4.3.0 Temporary failure, try again later";
        break;
    }
    if (f->code)
        code = f->code;
    snprintf(out, n, "%d %s", code, f->text ? f->text : text);
    (void)s;
}

/* Applies a fault that struck; returns 1 when the command must not run now. */
static int apply_fault(struct smtp *s, const struct srv_cmd_fault *f, enum srv_stage st,
                       const char *line, size_t len)
{
    char reply[512], rlog[800], where[160], bye[300];
    int at_connect = st == ST_SMTP_BANNER || st == ST_SMTP_CONNECT;
    fault_reply(s, f, st, reply, sizeof reply);
    snprintf(rlog, sizeof rlog, "NOQUEUE: reject: %s from %s: %s; proto=ESMTP helo=<%s>",
             stage_word(st), s->b.peer, reply, s->helo);
    snprintf(where, sizeof where, "%s from %s", stage_word(st), s->b.peer);
    snprintf(bye, sizeof bye, "421 %s", f->text ? f->text : "4.3.2 Service shutting down, closing transmission channel");
    return srv_sess_apply_fault(&s->b, f, st == ST_SMTP_EOD ? DLY_EOD : at_connect ? DLY_BANNER : DLY_CMD,
                                line, len, reply, rlog, bye, where, at_connect, st == ST_SMTP_CONNECT);
}

static void banner(struct smtp *s)
{
    conn_printf(&s->b.c, "220 %s ESMTP mailsoak-server\r\n", s->b.srv->cfg->hostname);
}

static void deliver_done(struct srv_req *r)
{
    struct smtp *s = r->ud;
    s->b.waiting = 0;
    if (srv_sess_reap(&s->b) || s->b.dead)
        return;
    switch (r->status) {
    case SS_OK:
        conn_printf(&s->b.c, "250 2.0.0 Ok: queued as %s\r\n", s->qid);
        if (s->b.srv->cfg->log_sessions)
            srv_log("%s: from=<>, size=%zu, nrcpt=%zu (queue active)", s->qid, s->msg.len, s->nrcpts);
        break;
    case SS_IN_USE:
        conn_printf(&s->b.c, "451 4.2.0 Mailbox temporarily locked: %s\r\n", r->err);
        srv_log("%s: reject: END-OF-MESSAGE from %s: 451 4.2.0 Mailbox temporarily locked: %s",
                s->qid, s->b.peer, r->err);
        break;
    case SS_TEMP:
        conn_printf(&s->b.c, "451 4.3.0 Error: %s\r\n", r->err);
        srv_log("%s: reject: END-OF-MESSAGE from %s: 451 4.3.0 Error: %s", s->qid, s->b.peer, r->err);
        break;
    case SS_PERM:
        conn_printf(&s->b.c, "554 5.3.0 Error: %s\r\n", r->err);
        break;
    }
    reset_tx(s);
    process(s);
}

static void deliver(struct smtp *s)
{
    struct srv_req *r = &s->req;
    memset(r, 0, sizeof *r);
    r->op = SOP_DELIVER;
    r->rcpts = s->rcpts;
    r->nrcpts = s->nrcpts;
    r->data = s->msg.p ? s->msg.p : "";
    r->len = s->msg.len;
    snprintf(r->qid, sizeof r->qid, "%s", s->qid);
    r->done = deliver_done;
    r->ud = s;
    s->b.waiting = 1;
    s->b.tmode = TM_NONE;
    conn_deadline(&s->b.c, 0);       /* the store decides how long this takes */
    srv_store_submit(s->b.srv->store, r);
}

/* [fault.rate]: 1 when the message goes to the store now; 0 when the rate took
 * it (queued and answered 250, or refused with 451 / 452) and the reply is out. */
static int over_rate(struct smtp *s)
{
    struct srv *srv = s->b.srv;
    const struct srv_rate_faults *f = &srv->cfg->faults.rate;
    const char *text;
    if (f->over == RATE_451) {
        if (srv_rate_admit(srv->rate))
            return 1;
        text = "451 4.3.2 Error: over the delivery rate limit, try again later";
    } else if (srv_rate_enqueue(srv->rate, s->rcpts, s->nrcpts, s->msg.p ? s->msg.p : "", s->msg.len, s->qid) == 0) {
        conn_printf(&s->b.c, "250 2.0.0 Ok: queued as %s\r\n", s->qid);
        reset_tx(s);
        return 0;
    } else {
        text = "452 4.3.1 Insufficient system storage";
    }
    conn_printf(&s->b.c, "%s\r\n", text);
    srv_log("%s: reject: END-OF-MESSAGE from %s: %s; delivery rate limit %.0f msg/s", s->qid, s->b.peer, text,
            f->limit);
    reset_tx(s);
    return 0;
}

static void end_of_data(struct smtp *s, int faults)
{
    if (s->data.overflow) {
        conn_puts(&s->b.c, "552 5.3.4 Error: message file too big\r\n");
        reset_tx(s);
        return;
    }
    if (faults) {
        const struct srv_cmd_fault *f = srv_sess_fault(&s->b, ST_SMTP_EOD);
        if (f && f->kind == SF_DROP && s->msg.len >= f->size) {
            /* docker-mailserver #974's 115 MB message: accepted, then never delivered */
            conn_printf(&s->b.c, "250 2.0.0 Ok: queued as %s\r\n", s->qid);
            char logl[200];
            snprintf(logl, sizeof logl, "warning: %s: message of %zu bytes accepted and dropped", s->qid, s->msg.len);
            srv_fault_log(&s->b, f, logl);
            reset_tx(s);
            return;
        }
        if (f && apply_fault(s, f, ST_SMTP_EOD, "", 0)) {
            if (f->kind != SF_DELAY && f->kind != SF_STALL)
                reset_tx(s);
            return;
        }
    }
    if (s->b.srv->rate && !over_rate(s))
        return;
    deliver(s);
}

static void on_delay(struct srv_sess *b)
{
    struct smtp *s = (struct smtp *)b;
    switch (b->delayed_what) {
    case DLY_BANNER:
        banner(s);
        break;
    case DLY_EOD:
        end_of_data(s, 0);
        break;
    default:
        command(s, b->delayed, strlen(b->delayed), 0);
        break;
    }
    if (!b->waiting)
        process(s);
}

static void start_data(struct smtp *s)
{
    const struct srv_config *cfg = s->b.srv->cfg;
    struct srv *srv = s->b.srv;
    snprintf(s->qid, sizeof s->qid, "%05llX%06llX", (unsigned long long)srv->start_wall & 0xfffff,
             (unsigned long long)++srv->next_qid);
    s->msg.off = s->msg.len = 0;
    if (cfg->received) {
        char date[64], hdr[1200];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S %z", &tm);
        int n = snprintf(hdr, sizeof hdr, "Received: from %s (%s)\r\n\tby %s (mailsoak-server) with ESMTP id %s\r\n"
                         "\tfor <%s>; %s\r\n", s->helo, s->b.peer, cfg->hostname, s->qid,
                         srv->users.v[s->rcpts[0]].addr, date);
        buf_append(&s->msg, hdr, n < (int)sizeof hdr ? (size_t)n : sizeof hdr - 1);
    }
    srv_data_init(&s->data, cfg->max_size);
    s->in_data = 1;
    conn_puts(&s->b.c, "354 End data with <CR><LF>.<CR><LF>\r\n");
}

static void auth_done(struct smtp *s, int ok)
{
    s->auth = A_NONE;
    if (ok) {
        s->auth_ok = 1;
        conn_puts(&s->b.c, "235 2.7.0 Authentication successful\r\n");
    } else {
        srv_log("warning: %s: SASL authentication failed: authentication failure", s->b.peer);
        conn_puts(&s->b.c, "535 5.7.8 Error: authentication failed: authentication failure\r\n");
    }
}

static void auth_result(struct smtp *s, const char *user, size_t ulen, const char *pass, size_t plen)
{
    auth_done(s, srv_check_login(s->b.srv, user, ulen, pass, plen) >= 0);
}

/* CRAM-MD5 (RFC 2195): "user hexdigest", the digest HMAC-MD5 of our challenge
 * under the user's password. */
static void auth_cram(struct smtp *s, const char *b64, size_t n)
{
    char dec[600], hex[33];
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    size_t dn;
    const char *sp;
    if (srv_b64_decode(b64, n, dec, sizeof dec, &dn) < 0 || !(sp = memchr(dec, ' ', dn)) ||
        dn - (size_t)(sp + 1 - dec) != 32) {
        s->auth = A_NONE;
        conn_puts(&s->b.c, "501 5.5.2 Error: malformed authentication response\r\n");
        return;
    }
    long u = srv_book_find(&s->b.srv->book, dec, (size_t)(sp - dec));
    const char *pass = u >= 0 ? s->b.srv->users.v[u].pass : "";
    if (!HMAC(EVP_md5(), pass, (int)strlen(pass), (const unsigned char *)s->chal, strlen(s->chal), mac, &maclen) ||
        maclen != 16) {
        auth_done(s, 0);
        return;
    }
    for (unsigned i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", mac[i]);
    auth_done(s, u >= 0 && !strncasecmp(hex, sp + 1, 32));
}

static void auth_plain(struct smtp *s, const char *b64, size_t n)
{
    char dec[1024];
    size_t dn;
    const char *u, *p;
    size_t ul, pl;
    if (srv_b64_decode(b64, n, dec, sizeof dec, &dn) < 0 || srv_sasl_plain(dec, dn, &u, &ul, &p, &pl) < 0) {
        s->auth = A_NONE;
        conn_puts(&s->b.c, "501 5.5.2 Error: malformed authentication response\r\n");
        return;
    }
    auth_result(s, u, ul, p, pl);
}

/* A line while AUTH waits for the client's next SASL response. */
static void auth_continue(struct smtp *s, const char *line, size_t len)
{
    if (len == 1 && line[0] == '*') {
        s->auth = A_NONE;
        conn_puts(&s->b.c, "501 5.7.0 Authentication aborted\r\n");
        return;
    }
    if (s->auth == A_PLAIN) {
        auth_plain(s, line, len);
        return;
    }
    if (s->auth == A_CRAM) {
        auth_cram(s, line, len);
        return;
    }
    char dec[512];
    size_t dn;
    if (srv_b64_decode(line, len, dec, sizeof dec - 1, &dn) < 0) {
        s->auth = A_NONE;
        conn_puts(&s->b.c, "501 5.5.2 Error: malformed authentication response\r\n");
        return;
    }
    if (s->auth == A_LOGIN_USER) {
        snprintf(s->auth_user, sizeof s->auth_user, "%.*s", (int)dn, dec);
        s->auth = A_LOGIN_PASS;
        conn_puts(&s->b.c, "334 UGFzc3dvcmQ6\r\n");
        return;
    }
    auth_result(s, s->auth_user, strlen(s->auth_user), dec, dn);
}

static void cmd_auth(struct smtp *s, const char *arg)
{
    if (s->b.srv->cfg->auth == SRV_AUTH_NONE) {
        conn_puts(&s->b.c, "503 5.5.1 Error: authentication not enabled\r\n");
        return;
    }
    if (s->auth_ok) {
        conn_puts(&s->b.c, "503 5.5.1 Error: already authenticated\r\n");
        return;
    }
    if (s->has_mail) {
        conn_puts(&s->b.c, "503 5.5.1 Error: MAIL transaction in progress\r\n");
        return;
    }
    const char *sp = strchr(arg, ' ');
    size_t ml = sp ? (size_t)(sp - arg) : strlen(arg);
    const char *ir = sp ? sp + 1 : NULL;
    if (ml == 5 && !strncasecmp(arg, "PLAIN", 5)) {
        s->auth = A_PLAIN;
        if (ir)
            auth_plain(s, ir, strcmp(ir, "=") ? strlen(ir) : 0);
        else
            conn_puts(&s->b.c, "334 \r\n");
    } else if (ml == 5 && !strncasecmp(arg, "LOGIN", 5)) {
        s->auth = A_LOGIN_USER;
        if (ir)
            auth_continue(s, ir, strlen(ir));
        else
            conn_puts(&s->b.c, "334 VXNlcm5hbWU6\r\n");
    } else if (ml == 8 && !strncasecmp(arg, "CRAM-MD5", 8) && !ir) {
        /* the host name is in it, so a long hostname makes a long challenge */
        char b64[800];
        snprintf(s->chal, sizeof s->chal, "<%llu.%lld@%s>", (unsigned long long)s->b.id, (long long)time(NULL),
                 s->b.srv->cfg->hostname);
        srv_b64_encode(s->chal, strlen(s->chal), b64);
        s->auth = A_CRAM;
        conn_printf(&s->b.c, "334 %s\r\n", b64);
    } else {
        conn_puts(&s->b.c, "535 5.7.8 Error: authentication failed: Invalid authentication mechanism\r\n");
    }
}

static void cmd_ehlo(struct smtp *s, const char *arg, int ehlo)
{
    const struct srv_config *cfg = s->b.srv->cfg;
    if (!*arg) {
        conn_printf(&s->b.c, "501 Syntax: %s hostname\r\n", ehlo ? "EHLO" : "HELO");
        return;
    }
    snprintf(s->helo, sizeof s->helo, "%s", arg);
    s->greeted = 1;
    reset_tx(s);
    if (!ehlo) {
        conn_printf(&s->b.c, "250 %s\r\n", cfg->hostname);
        return;
    }
    conn_printf(&s->b.c, "250-%s\r\n250-PIPELINING\r\n250-SIZE %llu\r\n250-8BITMIME\r\n%s"
                "250 ENHANCEDSTATUSCODES\r\n", cfg->hostname, (unsigned long long)cfg->max_size,
                cfg->auth != SRV_AUTH_NONE ? "250-AUTH PLAIN LOGIN CRAM-MD5\r\n" : "");
}

static void cmd_mail(struct smtp *s, const char *arg)
{
    const char *addr, *params, *why;
    size_t alen;
    struct srv_mail_params mp;
    if (!s->greeted) {
        conn_puts(&s->b.c, "503 5.5.1 Error: send HELO/EHLO first\r\n");
    } else if (s->b.srv->cfg->auth == SRV_AUTH_REQUIRED && !s->auth_ok) {
        conn_puts(&s->b.c, "530 5.7.0 Authentication required\r\n");
    } else if (s->has_mail) {
        conn_puts(&s->b.c, "503 5.5.1 Error: nested MAIL command\r\n");
    } else if (srv_smtp_path(arg, "FROM", &addr, &alen, &params) < 0) {
        conn_puts(&s->b.c, "501 5.5.4 Syntax: MAIL FROM:<address>\r\n");
    } else if (srv_mail_params(params, &mp, &why) < 0) {
        conn_printf(&s->b.c, "555 5.5.4 Unsupported option: %s\r\n", why);
    } else if (mp.size > s->b.srv->cfg->max_size) {
        conn_puts(&s->b.c, "552 5.3.4 Message size exceeds fixed limit\r\n");
    } else {
        s->has_mail = 1;
        s->nrcpts = 0;
        conn_puts(&s->b.c, "250 2.1.0 Ok\r\n");
    }
}

static void cmd_rcpt(struct smtp *s, const char *arg)
{
    const char *addr, *params;
    size_t alen;
    struct srv *srv = s->b.srv;
    const struct srv_user_faults *uf = &srv->cfg->faults.user;
    if (!s->has_mail) {
        conn_puts(&s->b.c, "503 5.5.1 Error: need MAIL command\r\n");
        return;
    }
    if (srv_smtp_path(arg, "TO", &addr, &alen, &params) < 0 || !alen) {
        conn_puts(&s->b.c, "501 5.5.4 Syntax: RCPT TO:<address>\r\n");
        return;
    }
    long u = srv_book_find(&srv->book, addr, alen);
    if (u < 0) {
        conn_printf(&s->b.c, "550 5.1.1 <%.*s>: Recipient address rejected: User unknown in local recipient table\r\n",
                    (int)alen, addr);
        return;
    }
    const char *a = srv->users.v[u].addr;
    if (uf->reject.n && srv_addr_matches(&uf->reject, a)) {
        const char *t = uf->reject_text ? uf->reject_text : "5.7.1 Recipient address rejected: Access denied";
        srv_log("NOQUEUE: reject: RCPT from %s: 550 <%s>: %s; to=<%s> proto=ESMTP helo=<%s>",
                s->b.peer, a, t, a, s->helo);
        conn_printf(&s->b.c, "550 %s\r\n", t);
        return;
    }
    if (uf->defer.n && srv_addr_matches(&uf->defer, a)) {
        const char *t = uf->defer_text ? uf->defer_text : "4.2.1 Mailbox temporarily unavailable, try again later";
        srv_log("NOQUEUE: reject: RCPT from %s: 450 <%s>: %s; to=<%s> proto=ESMTP helo=<%s>",
                s->b.peer, a, t, a, s->helo);
        conn_printf(&s->b.c, "450 %s\r\n", t);
        return;
    }
    for (size_t i = 0; i < s->nrcpts; i++)
        if (s->rcpts[i] == (size_t)u) {
            conn_puts(&s->b.c, "250 2.1.5 Ok\r\n");   /* one copy per mailbox, as Postfix does */
            return;
        }
    if (s->nrcpts >= srv->cfg->max_rcpts) {
        conn_puts(&s->b.c, "452 4.5.3 Error: too many recipients\r\n");
        return;
    }
    if (s->nrcpts == s->caprcpts) {
        size_t cap = s->caprcpts ? s->caprcpts * 2 : 4;
        size_t *v = xrealloc(s->rcpts, cap * sizeof *v);
        s->rcpts = v;
        s->caprcpts = cap;
    }
    s->rcpts[s->nrcpts++] = (size_t)u;
    conn_puts(&s->b.c, "250 2.1.5 Ok\r\n");
}

static enum srv_stage stage_of(enum srv_smtp_verb v)
{
    switch (v) {
    case SV_EHLO: case SV_HELO: return ST_SMTP_EHLO;
    case SV_AUTH: return ST_SMTP_AUTH;
    case SV_MAIL: return ST_SMTP_MAIL;
    case SV_RCPT: return ST_SMTP_RCPT;
    case SV_DATA: return ST_SMTP_DATA;
    case SV_RSET: return ST_SMTP_RSET;
    case SV_NOOP: return ST_SMTP_NOOP;
    case SV_QUIT: return ST_SMTP_QUIT;
    default: return ST_COUNT;
    }
}

static void command(struct smtp *s, char *line, size_t len, int faults)
{
    if (s->auth != A_NONE) {
        auth_continue(s, line, len);
        return;
    }
    const char *arg;
    enum srv_smtp_verb v = srv_smtp_verb(line, len, &arg);
    enum srv_stage st = stage_of(v);
    if (faults && st != ST_COUNT) {
        const struct srv_cmd_fault *f = srv_sess_fault(&s->b, st);
        if (f && apply_fault(s, f, st, line, len))
            return;
    }
    switch (v) {
    case SV_EHLO: cmd_ehlo(s, arg, 1); break;
    case SV_HELO: cmd_ehlo(s, arg, 0); break;
    case SV_AUTH: cmd_auth(s, arg); break;
    case SV_MAIL: cmd_mail(s, arg); break;
    case SV_RCPT: cmd_rcpt(s, arg); break;
    case SV_DATA:
        if (!s->has_mail)
            conn_puts(&s->b.c, "503 5.5.1 Error: need RCPT command\r\n");
        else if (!s->nrcpts)
            conn_puts(&s->b.c, "554 5.5.1 Error: no valid recipients\r\n");
        else
            start_data(s);
        break;
    case SV_RSET:
        reset_tx(s);
        conn_puts(&s->b.c, "250 2.0.0 Ok\r\n");
        break;
    case SV_NOOP:
        conn_puts(&s->b.c, "250 2.0.0 Ok\r\n");
        break;
    case SV_QUIT:
        conn_puts(&s->b.c, "221 2.0.0 Bye\r\n");
        srv_sess_close_after_flush(&s->b);
        break;
    case SV_VRFY:
        conn_puts(&s->b.c, "252 2.0.0 Send some mail, I'll try my best\r\n");
        break;
    case SV_STARTTLS:
    case SV_BDAT:
        conn_puts(&s->b.c, "502 5.5.1 Error: command not implemented\r\n");
        break;
    case SV_UNKNOWN:
        conn_puts(&s->b.c, "502 5.5.2 Error: command not recognized\r\n");
        break;
    }
}

static int pump_raw(struct srv_sess *b)
{
    struct smtp *s = (struct smtp *)b;
    struct conn *c = &b->c;
    if (!s->in_data)
        return -1;
    c->in.off += srv_data_feed(&s->data, c->in.p + c->in.off, conn_avail(c), &s->msg);
    if (!s->data.done)
        return 0;
    s->in_data = 0;
    end_of_data(s, 1);
    return 1;
}

static void pump_line(struct srv_sess *b, char *line, size_t len)
{
    command((struct smtp *)b, line, len, 1);
}

static void process(struct smtp *s)
{
    srv_sess_pump(&s->b, pump_raw, pump_line, "500 5.5.0 Error: line too long\r\n");
}

static void on_conn(struct conn *c, enum conn_event ev, void *ud)
{
    struct smtp *s = ud;
    (void)c;
    if (srv_sess_event(&s->b, ev))
        return;
    if (ev == CONN_TIMEOUT) {        /* idle */
        char bye[300];
        if (!s->b.stalled)
            srv_log("timeout after %s from %s", s->in_data ? "DATA" : "command", s->b.peer);
        snprintf(bye, sizeof bye, "421 4.4.2 %s Error: timeout exceeded\r\n", s->b.srv->cfg->hostname);
        srv_sess_idle_timeout(&s->b, bye);
        return;
    }
    if (ev == CONN_DATA)
        process(s);
}

static void on_free(struct srv_sess *b)
{
    struct smtp *s = (struct smtp *)b;
    buf_free(&s->msg);
    free(s->rcpts);
}

void srv_smtp_accept(struct srv *srv, int fd)
{
    struct smtp *s = xcalloc(1, sizeof *s);
    s->b.on_timer = on_delay;
    s->b.on_free = on_free;
    snprintf(s->helo, sizeof s->helo, "unknown");
    srv_sess_start(srv, &s->b, SRV_SMTP, fd, on_conn);
    if (s->b.dead)
        return;
    if (srv->cfg->log_sessions)
        srv_log("connect from %s", s->b.peer);
    const struct srv_cmd_fault *f = srv_sess_fault(&s->b, ST_SMTP_CONNECT);
    enum srv_stage st = ST_SMTP_CONNECT;
    if (!f) {
        f = srv_sess_fault(&s->b, ST_SMTP_BANNER);
        st = ST_SMTP_BANNER;
    }
    if (!f || !apply_fault(s, f, st, "", 0))
        banner(s);
    if (!s->b.dead && !s->b.closing)
        srv_sess_flush(&s->b);
}
