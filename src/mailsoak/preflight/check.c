/* check: the preflight. Each SMTP target gets one curl session (greeting, EHLO, TLS, AUTH,
 * MAIL, RCPT, DATA, then an abort before any message byte, so nothing is delivered); each
 * POP3 target a login and STAT per sampled user, each IMAP target (readers.protocol =
 * imap) a login and EXAMINE INBOX. All run at once; every outcome is read from curl's
 * result and the server's own replies, and explained in one line. */
#include "preflight/check.h"

#include "preflight/diagnose.h"

#include <curl/curl.h>
#include <errno.h>
#include <openssl/x509.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/printable.h"
#include "lib/users.h"

#define TOTAL_TIMEOUT_S 15

const char *const check_smtp_mechs[] = { NULL, "PLAIN", "LOGIN", "CRAM-MD5", NULL };
const char *const check_proto_names[] = { "smtp", "pop3", "imap" };

/* ---- the transcript ---- */


/* A line that can open a session of the protocol: SMTP's "220 ..." (any code: a
 * refusal is diagnosed as one), POP3's "+OK" or "-ERR". */
static int greeting_shaped(int proto, const char *s, size_t n)
{
    if (proto == P_SMTP)
        return n >= 3 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9' &&
               (n == 3 || s[3] == ' ' || s[3] == '-');
    if (proto == P_IMAP)             /* "* OK", "* PREAUTH" or "* BYE" */
        return (n >= 4 && !memcmp(s, "* OK", 4)) || (n >= 9 && !memcmp(s, "* PREAUTH", 9)) ||
               (n >= 5 && !memcmp(s, "* BYE", 5));
    return (n >= 3 && !memcmp(s, "+OK", 3)) || (n >= 4 && !memcmp(s, "-ERR", 4));
}

static void keep_line(struct target_check *p, char dir, const char *s, size_t n)
{
    while (n && (s[n - 1] == '\r' || s[n - 1] == '\n'))
        n--;
    if (!n || p->nlines >= MAX_LINES)
        return;
    if (dir == '<' && !check_first_reply(p))
        p->not_proto = !greeting_shaped(p->proto, s, n);
    if (dir == '>' && p->nlines && p->dir[p->nlines - 1] == '<' &&
        (!strncmp(p->lines[p->nlines - 1], "334", 3) || !strncmp(p->lines[p->nlines - 1], "+ ", 2))) {
        s = "AUTH";                  /* a SASL answer: credentials, never kept */
        n = 4;
    } else if (dir == '>') {         /* the verb, or "AUTH MECH" */
        if (p->proto == P_IMAP) {    /* after the tag: "A002 LOGIN user pass" keeps LOGIN */
            size_t t = strcspn(s, " ");
            if (t < n) {
                s += t + 1;
                n -= t + 1;
            }
        }
        size_t v = strcspn(s, " ");
        if (v < n && v == 4 && !strncasecmp(s, "AUTH", 4))
            v += 1 + strcspn(s + v + 1, " \r\n");
        n = v < n ? v : n;
    }
    /* the server's words end up on the operator's terminal: made printable here,
     * where they are kept, and cut between characters */
    printable(p->lines[p->nlines], LINE_LEN, s, utf8_cut(s, n, LINE_LEN - 1));
    p->dir[p->nlines++] = dir;
}

static int on_debug(CURL *h, curl_infotype type, char *data, size_t size, void *ud)
{
    struct target_check *p = ud;
    static const char tls_prefix[] = "SSL connection using ";
    (void)h;
    if (type == CURLINFO_TEXT && size > sizeof tls_prefix &&
        !strncmp(data, tls_prefix, sizeof tls_prefix - 1)) {
        const char *v = data + sizeof tls_prefix - 1;
        size_t n = strcspn(v, " /\r\n");
        snprintf(p->tls, sizeof p->tls, "%.*s", (int)n, v);
        return 0;
    }
    if (type != CURLINFO_HEADER_IN && type != CURLINFO_HEADER_OUT)
        return 0;
    while (size) {
        const char *nl = memchr(data, '\n', size);
        size_t n = nl ? (size_t)(nl - data) + 1 : size;
        keep_line(p, type == CURLINFO_HEADER_IN ? '<' : '>', data, n);
        data += n;
        size -= n;
    }
    return 0;
}

static size_t discard(char *buf, size_t size, size_t n, void *ud)
{
    (void)buf; (void)ud;
    return size * n;                 /* EXAMINE's untagged responses: read from the transcript */
}

static size_t abort_upload(char *buf, size_t size, size_t n, void *ud)
{
    (void)buf; (void)size; (void)n; (void)ud;
    return CURL_READFUNC_ABORT;      /* after "354": the server gets no message */
}

static void set_tls(CURL *h, int mode, const char *ca, int verify)
{
    curl_easy_setopt(h, CURLOPT_USE_SSL, (long)(mode == TLSM_UPGRADE ? CURLUSESSL_ALL : CURLUSESSL_NONE));
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, verify ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, verify ? 2L : 0L);
    if (ca && *ca) {
        /* Only this CA, as the engine does, not the system store besides. */
        struct stat st;
        int dir = stat(ca, &st) == 0 && S_ISDIR(st.st_mode);
        curl_easy_setopt(h, CURLOPT_CAINFO, dir ? NULL : ca);
        curl_easy_setopt(h, CURLOPT_CAPATH, dir ? ca : NULL);
    }
}

static int probe_start(struct target_check *p, const struct config *cfg, CURLM *m)
{
    int smtp = p->proto == P_SMTP, imap = p->proto == P_IMAP;
    int mode = smtp ? cfg->smtp_tls : imap ? cfg->imap_tls : cfg->pop3_tls;
    CURL *h = p->h = curl_easy_init();
    if (!h)
        return -1;
    snprintf(p->url, sizeof p->url, "%s%s://%s/%s", check_proto_names[p->proto],
             mode == TLSM_IMPLICIT ? "s" : "", p->target, smtp ? cfg->helo : "");
    curl_easy_setopt(h, CURLOPT_URL, p->url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "smtp,smtps,pop3,pop3s,imap,imaps");
    curl_easy_setopt(h, CURLOPT_PRIVATE, p);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, p->errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_TIMEOUT_S);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)TOTAL_TIMEOUT_S);
    curl_easy_setopt(h, CURLOPT_VERBOSE, 1L);            /* feeds on_debug, prints nothing */
    curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, on_debug);
    curl_easy_setopt(h, CURLOPT_DEBUGDATA, p);
    if (p->bind) {
        /* from the address the run will use: a server (or firewall) that admits only
         * some clients must be checked from the right one. "host!" makes curl take it
         * as an address, never as an interface's name; brackets off an IPv6 one. */
        char iface[160];
        size_t len = strlen(p->bind);
        if (p->bind[0] == '[' && len > 2 && p->bind[len - 1] == ']')
            snprintf(iface, sizeof iface, "host!%.*s", (int)(len - 2), p->bind + 1);
        else
            snprintf(iface, sizeof iface, "host!%s", p->bind);
        curl_easy_setopt(h, CURLOPT_INTERFACE, iface);
    }
    if (smtp)
        set_tls(h, mode, cfg->smtp_tls_ca, cfg->smtp_tls_verify);
    else if (imap)
        set_tls(h, mode, cfg->imap_tls_ca, cfg->imap_tls_verify);
    else
        set_tls(h, mode, cfg->pop3_tls_ca, cfg->pop3_tls_verify);
    if (p->user && !p->own_login) {
        curl_easy_setopt(h, CURLOPT_USERNAME, p->user->addr);
        curl_easy_setopt(h, CURLOPT_PASSWORD, p->user->pass);
    }
    /* curl has no option for IMAP's LOGIN command alone: with imap.auth = login
     * (or auto) it logs in as it sees fit, SASL or LOGIN, and the line says so */
    if (p->user && !p->own_login && !(imap && cfg->imap_auth != IMAP_AUTH_PLAIN)) {
        char opt[40];
        if (smtp)
            snprintf(opt, sizeof opt, "AUTH=%s", check_smtp_mechs[cfg->smtp_auth] ? check_smtp_mechs[cfg->smtp_auth] : "*");
        else if (imap)
            snprintf(opt, sizeof opt, "AUTH=PLAIN");
        else
            snprintf(opt, sizeof opt, "AUTH=%s", cfg->pop3_auth == POP3_AUTH_APOP    ? "+APOP"
                                                 : cfg->pop3_auth == POP3_AUTH_PLAIN ? "PLAIN"
                                                                                     : "*");
        curl_easy_setopt(h, CURLOPT_LOGIN_OPTIONS, opt);
    }
    if (smtp) {
        char from[300], to[300];
        snprintf(from, sizeof from, "<%s>", cfg->mail_from);
        snprintf(to, sizeof to, "<%s>", p->rcpt);
        p->rcpts = curl_slist_append(NULL, to);
        curl_easy_setopt(h, CURLOPT_MAIL_FROM, from);
        curl_easy_setopt(h, CURLOPT_MAIL_RCPT, p->rcpts);
        curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, abort_upload);
    } else if (imap) {
        /* read-only: the count the readers will find, nothing changed */
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "EXAMINE INBOX");
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    } else if (p->own_login) {
        /* curl cannot be told to use USER/PASS when the server offers SASL too: it
         * does the greeting, CAPA and STLS, then hands us the connection. */
        curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
    } else {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "STAT");
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);             /* STAT answers in one line */
    }
    return curl_multi_add_handle(m, h) == CURLM_OK ? 0 : -1;
}

/* ---- POP3 USER/PASS over the connections curl set up, all at once ---- */

static const char *const own_steps[] = { "USER", "PASS", "STAT", "QUIT" };

static uint64_t now_ms(void)
{
    return mono_ns() / NS_PER_MS;
}

static void own_send(struct target_check *p)
{
    const char *verb = own_steps[p->step];
    const char *arg = p->step == 0 ? p->user->addr : p->step == 1 ? p->user->pass : NULL;
    p->olen = (size_t)snprintf(p->obuf, sizeof p->obuf, "%s%s%s\r\n", verb, arg ? " " : "", arg ? arg : "");
    p->ooff = p->ilen = 0;
    keep_line(p, '>', verb, strlen(verb));
}

static void own_finish(struct target_check *p, CURLcode rc)
{
    p->rc = rc;
    p->step = -1;
}

/* One step of the USER, PASS, STAT, QUIT exchange when the socket is ready. */
static void own_advance(struct target_check *p)
{
    CURLcode r;
    size_t n = 0;
    if (p->ooff < p->olen) {
        r = curl_easy_send(p->h, p->obuf + p->ooff, p->olen - p->ooff, &n);
        if (r == CURLE_OK)
            p->ooff += n;
        else if (r != CURLE_AGAIN)
            own_finish(p, r);
        if (p->step == 3 && p->ooff == p->olen)
            own_finish(p, CURLE_OK);   /* QUIT sent: the answer changes nothing */
        return;
    }
    r = curl_easy_recv(p->h, p->ibuf + p->ilen, sizeof p->ibuf - 1 - p->ilen, &n);
    if (r == CURLE_AGAIN)
        return;
    if (r != CURLE_OK || n == 0) {
        own_finish(p, r != CURLE_OK ? r : CURLE_GOT_NOTHING);
        return;
    }
    p->ilen += n;
    if (!memchr(p->ibuf, '\n', p->ilen)) {
        if (p->ilen >= sizeof p->ibuf - 1)
            own_finish(p, CURLE_WEIRD_SERVER_REPLY);
        return;
    }
    keep_line(p, '<', p->ibuf, strcspn(p->ibuf, "\n"));
    if (p->ibuf[0] != '+')             /* STAT's -ERR comes after a login: no refusal */
        own_finish(p, p->step < 2 ? CURLE_LOGIN_DENIED : CURLE_WEIRD_SERVER_REPLY);
    else {
        p->step++;
        own_send(p);
    }
}

static int load_users(const struct config *cfg, struct users *u)
{
    char err[400];
    int rc = cfg->users_file[0] ? users_load_file(u, cfg->users_file, err, sizeof err)
                                : users_from_pattern(u, cfg->user_pattern, cfg->user_password,
                                                     (size_t)cfg->user_count, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "mailsoak check: %s\n", err);
    else if (!u->n)
        fprintf(stderr, "mailsoak check: no users to check with (users.file or users.count)\n");
    return rc < 0 || !u->n ? -1 : 0;
}

/* b failed as a did, at the same target: one line says both */
static int same_problem(const struct target_check *a, const struct target_check *b)
{
    return !a->ok && !b->ok && a->proto == b->proto && !strcmp(a->target, b->target) && !strcmp(a->result, b->result);
}

/* The checks: each SMTP target with the first user, each readers' target (POP3's,
 * or IMAP's with readers.protocol = imap) with k users of the list. */
static void plan_checks(struct target_check *pr, const struct config *cfg, const struct users *u, size_t nsmtp,
                        size_t npop3, size_t k)
{
    int imap = cfg->reader_protocol == READERS_IMAP;
    const struct strlist *rt = imap ? &cfg->imap_targets : &cfg->pop3_targets;
    for (size_t i = 0; i < nsmtp; i++) {
        struct target_check *p = &pr[i];
        p->proto = P_SMTP;
        p->target = cfg->smtp_targets.v[i];
        p->rcpt = u->v[0].addr;
        p->user = cfg->smtp_auth != SMTP_AUTH_NONE ? &u->v[0] : NULL;
        /* the source addresses in turn, as the senders take them */
        p->bind = cfg->smtp_bind.n ? cfg->smtp_bind.v[i % cfg->smtp_bind.n] : NULL;
    }
    for (size_t t = 0; t < npop3; t++)
        for (size_t j = 0; j < k; j++) {
            struct target_check *p = &pr[nsmtp + t * k + j];
            p->proto = imap ? P_IMAP : P_POP3;
            p->target = rt->v[t];
            /* first, middle, last: spread over the list, where mistakes tend to differ */
            p->user = &u->v[k > 1 ? j * (u->n - 1) / (k - 1) : 0];
            p->own_login = !imap && cfg->pop3_auth == POP3_AUTH_USER;
            p->bind = cfg->pop3_bind.n ? cfg->pop3_bind.v[(t * k + j) % cfg->pop3_bind.n] : NULL;
        }
}

/* Runs every check at once until each is done, TOTAL_TIMEOUT_S passed or *stop:
 * curl's transfers and our own USER/PASS exchanges share one wait. */
static void run_checks(struct target_check *pr, size_t n, CURLM *m, volatile sig_atomic_t *stop)
{
    struct curl_waitfd *wfd = xcalloc(n, sizeof *wfd);
    struct target_check **who = xcalloc(n, sizeof *who);
    uint64_t t0 = now_ms(), deadline = t0 + TOTAL_TIMEOUT_S * 1000;
    int running = 1;
    for (;;) {
        if (curl_multi_perform(m, &running) != CURLM_OK)
            break;
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left)))
            if (msg->msg == CURLMSG_DONE) {
                struct target_check *p;
                curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&p);
                p->rc = msg->data.result;
                p->done = 1;
                if (p->own_login && p->rc == CURLE_OK) {
                    p->step = 0;
                    own_send(p);
                }
            }
        /* a greeting of another protocol: curl would wait out its timeout for a
         * reply it can parse; the check is over (no QUIT waited for) */
        for (size_t i = 0; i < n; i++)
            if (pr[i].not_proto && !pr[i].done) {
                curl_easy_setopt(pr[i].h, CURLOPT_TIMEOUT_MS, 1L);
                curl_multi_remove_handle(m, pr[i].h);
                pr[i].rc = CURLE_WEIRD_SERVER_REPLY;
                pr[i].done = 1;
            }
        unsigned nw = 0;
        for (size_t i = 0; i < n; i++) {
            curl_socket_t fd;
            if (pr[i].step < 0)
                continue;
            if (curl_easy_getinfo(pr[i].h, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK || fd == CURL_SOCKET_BAD) {
                own_finish(&pr[i], CURLE_GOT_NOTHING);
                continue;
            }
            /* A reply line is one TLS record: curl holds none of it decrypted while
             * the socket looks idle. */
            wfd[nw] = (struct curl_waitfd){ .fd = fd,
                                           .events = pr[i].ooff < pr[i].olen ? CURL_WAIT_POLLOUT : CURL_WAIT_POLLIN };
            who[nw++] = &pr[i];
        }
        uint64_t now = now_ms();
        if ((!running && !nw) || now >= deadline || (stop && *stop))
            break;
        curl_multi_poll(m, wfd, nw, (int)(deadline - now < 1000 ? deadline - now : 1000), NULL);
        for (unsigned j = 0; j < nw; j++)
            if (wfd[j].revents)
                own_advance(who[j]);
    }
    for (size_t i = 0; i < n; i++)
        if (pr[i].step >= 0) {
            own_finish(&pr[i], CURLE_OPERATION_TIMEDOUT);
            pr[i].own_secs = (int)((now_ms() - t0 + 500) / 1000);
        }
    free(wfd);
    free(who);
}

/* Each check diagnosed and printed, one line per problem; the problems found. */
static unsigned report_checks(struct target_check *pr, size_t n, const struct config *cfg, FILE *out)
{
    unsigned problems = 0;
    for (size_t i = 0; i < n; i++) {
        struct target_check *p = &pr[i];
        char eb[CURL_ERROR_SIZE];    /* curl may quote the server */
        printable(eb, sizeof eb, p->errbuf, strlen(p->errbuf));
        memcpy(p->errbuf, eb, sizeof eb);
        if (!p->done)
            snprintf(p->result, sizeof p->result, "check did not finish (curl multi error)");
        else if (p->proto == P_SMTP)
            diagnose_smtp(p, cfg);
        else if (p->proto == P_IMAP)
            diagnose_imap(p, cfg);
        else
            diagnose_pop3(p, cfg);
        problems += !p->ok;
    }
    for (size_t i = 0; i < n; i++) {
        const struct target_check *p = &pr[i];
        const char *proto = check_proto_names[p->proto];
        if (p->ok) {
            fprintf(out, "OK %s %s: %s\n", proto, p->target, p->result);
            continue;
        }
        /* one line per problem: the sampled users of one unreachable target would
         * otherwise repeat the same line; it says how many checks it stands for, so
         * the count below adds up */
        int repeat = 0;
        for (size_t j = 0; j < i && !repeat; j++)
            repeat = same_problem(&pr[j], p);
        if (repeat)
            continue;
        unsigned same = 1;
        for (size_t j = i + 1; j < n; j++)
            same += same_problem(p, &pr[j]);
        if (same > 1)
            fprintf(out, "%s %s (%u checks, one per user sampled): %s\n", proto, p->target, same, p->result);
        else
            fprintf(out, "%s %s: %s\n", proto, p->target, p->result);
    }
    if (problems)
        fprintf(out, "%u of %zu check%s found a problem\n", problems, n, n == 1 ? "" : "s");
    else
        fprintf(out, "%zu check%s passed\n", n, n == 1 ? "" : "s");
    fflush(out);
    return problems;
}

int check_config(const struct config *cfg, unsigned sample, FILE *out, volatile sig_atomic_t *stop)
{
    struct users users = { 0 };
    /* the readers' targets: POP3's, or IMAP's with readers.protocol = imap */
    int imap = cfg->reader_protocol == READERS_IMAP;
    size_t nsmtp = cfg->smtp_targets.n, npop3 = imap ? cfg->imap_targets.n : cfg->pop3_targets.n;
    if (cfg->smtp_protocol == PROTO_LMTP) {
        /* curl speaks no LMTP; an SMTP probe of an LMTP port would only fail */
        for (size_t i = 0; i < nsmtp; i++)
            fprintf(out, "note smtp %s: not checked (LMTP)\n", cfg->smtp_targets.v[i]);
        nsmtp = 0;
        if (!npop3)
            return 0;
    }
    if (!nsmtp && !npop3) {
        fprintf(stderr, "mailsoak check: nothing to check: give --smtp HOST:PORT and/or --%s HOST:PORT\n",
                imap ? "imap" : "pop3");
        return 2;
    }
    if (load_users(cfg, &users) < 0)
        return 2;
    size_t k = sample ? sample : 1;
    if (k > users.n)
        k = users.n;
    size_t n = nsmtp + npop3 * k;
    struct target_check *pr = xcalloc(n, sizeof *pr);
    CURLM *m = curl_multi_init();
    int rc = 2;
    if (!m) {
        fprintf(stderr, "mailsoak check: cannot set up curl\n");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        pr[i].step = -1;
    plan_checks(pr, cfg, &users, nsmtp, npop3, k);
    for (size_t i = 0; i < n; i++)
        if (probe_start(&pr[i], cfg, m) < 0) {
            fprintf(stderr, "mailsoak check: cannot set up curl\n");
            goto out;
        }
    run_checks(pr, n, m, stop);
    if (stop && *stop)
        goto out;
    unsigned problems = report_checks(pr, n, cfg, out);
    rc = problems ? 3 : 0;
out:
    for (size_t i = 0; pr && i < n; i++) {
        if (pr[i].h) {
            /* Interrupted: removing a transfer still under way makes curl end the
             * session politely (SMTP QUIT) and wait for the reply until the 15 s
             * total, from a server that may never answer; with no time left it
             * does not wait. */
            if (stop && *stop && !pr[i].done)
                curl_easy_setopt(pr[i].h, CURLOPT_TIMEOUT_MS, 1L);
            curl_multi_remove_handle(m, pr[i].h);
            curl_easy_cleanup(pr[i].h);
        }
        curl_slist_free_all(pr[i].rcpts);
    }
    curl_multi_cleanup(m);
    free(pr);
    users_free(&users);
    return rc;
}
