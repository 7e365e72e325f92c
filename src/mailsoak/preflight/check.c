/* check: the preflight. Each SMTP target gets one curl session (greeting, EHLO, TLS, AUTH,
 * MAIL, RCPT, DATA, then an abort before any message byte, so nothing is delivered); each
 * POP3 target a login and STAT per sampled user. All run at once; every outcome is read
 * from curl's result and the server's own replies, and explained in one line. */
#include "preflight/check.h"

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

#define MAX_LINES 64
#define LINE_LEN 200
#define CONNECT_TIMEOUT_S 5
#define TOTAL_TIMEOUT_S 15

enum proto { P_SMTP, P_POP3 };

/* One check of one target: a curl session against an SMTP or POP3 target, as a
 * user or without AUTH, and what it saw. */
struct target_check {
    enum proto proto;
    const char *target;
    const struct user *user;         /* whose credentials; NULL = SMTP without AUTH */
    const char *rcpt;                /* SMTP: the recipient tried */
    const char *bind;                /* smtp.bind / pop3.bind: the source address, or NULL */
    CURL *h;
    struct curl_slist *rcpts;
    char url[400];
    char errbuf[CURL_ERROR_SIZE];
    /* The session as the server saw it: '<' its replies, '>' our command verbs
     * (never their arguments, which may hold credentials). */
    char lines[MAX_LINES][LINE_LEN];
    char dir[MAX_LINES];
    int nlines;
    char tls[40];                    /* "TLSv1.3" once negotiated */
    int done;
    int own_login;                   /* POP3 USER/PASS: curl connects, we log in */
    int step;                        /* of own_steps; -1 when finished */
    char obuf[600], ibuf[600];
    size_t olen, ooff, ilen;
    int own_secs;                    /* when our own exchange timed out: seconds taken */
    int not_proto;                   /* the first line was no greeting of the protocol (an SSH banner) */
    CURLcode rc;
    int ok;
    char result[700];
};

static const char *const smtp_mechs[] = { NULL, "PLAIN", "LOGIN", "CRAM-MD5", NULL };
static const char *const pop3_login_names[] = { "USER/PASS", "APOP", "AUTH PLAIN", NULL };

/* ---- the transcript ---- */

static const char *first_reply(const struct target_check *p);

/* A line that can open a session of the protocol: SMTP's "220 ..." (any code: a
 * refusal is diagnosed as one), POP3's "+OK" or "-ERR". */
static int greeting_shaped(int proto, const char *s, size_t n)
{
    if (proto == P_SMTP)
        return n >= 3 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9' &&
               (n == 3 || s[3] == ' ' || s[3] == '-');
    return (n >= 3 && !memcmp(s, "+OK", 3)) || (n >= 4 && !memcmp(s, "-ERR", 4));
}

static void keep_line(struct target_check *p, char dir, const char *s, size_t n)
{
    while (n && (s[n - 1] == '\r' || s[n - 1] == '\n'))
        n--;
    if (!n || p->nlines >= MAX_LINES)
        return;
    if (dir == '<' && !first_reply(p))
        p->not_proto = !greeting_shaped(p->proto, s, n);
    if (dir == '>' && p->nlines && p->dir[p->nlines - 1] == '<' &&
        (!strncmp(p->lines[p->nlines - 1], "334", 3) || !strncmp(p->lines[p->nlines - 1], "+ ", 2))) {
        s = "AUTH";                  /* a SASL answer: credentials, never kept */
        n = 4;
    } else if (dir == '>') {         /* the verb, or "AUTH MECH" */
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

static size_t abort_upload(char *buf, size_t size, size_t n, void *ud)
{
    (void)buf; (void)size; (void)n; (void)ud;
    return CURL_READFUNC_ABORT;      /* after "354": the server gets no message */
}

static const char *first_reply(const struct target_check *p)
{
    for (int i = 0; i < p->nlines; i++)
        if (p->dir[i] == '<')
            return p->lines[i];
    return NULL;
}

static const char *last_reply(const struct target_check *p)
{
    for (int i = p->nlines - 1; i >= 0; i--)
        if (p->dir[i] == '<')
            return p->lines[i];
    return NULL;
}

static const char *last_command(const struct target_check *p)
{
    for (int i = p->nlines - 1; i >= 0; i--)
        if (p->dir[i] == '>')
            return p->lines[i];
    return NULL;
}

/* Index of the first reply line to the last command starting with verb, or -1. */
static int replies_to(const struct target_check *p, const char *verb)
{
    size_t n = strlen(verb);
    for (int i = p->nlines - 1; i >= 0; i--)
        if (p->dir[i] == '>' && !strncasecmp(p->lines[i], verb, n))
            return i + 1 < p->nlines && p->dir[i + 1] == '<' ? i + 1 : -1;
    return -1;
}

/* In the reply block from index i: a line whose capability (after "250-"/"250 " for SMTP)
 * is word; returns the rest of that line (its parameters), or NULL. */
static const char *capability(const struct target_check *p, int i, const char *word)
{
    size_t n = strlen(word);
    for (; i >= 0 && i < p->nlines && p->dir[i] == '<'; i++) {
        const char *s = p->lines[i];
        if (p->proto == P_SMTP)
            s = strlen(s) > 4 ? s + 4 : "";
        if (!strncasecmp(s, word, n) && (s[n] == 0 || s[n] == ' '))
            return s[n] ? s + n + 1 : s + n;
    }
    return NULL;
}

/* The last 4xx/5xx reply (SMTP) and the command it answered; NULL if none. */
static const char *last_refusal(const struct target_check *p, const char **cmd)
{
    const char *verb = NULL, *found = NULL;
    for (int i = 0; i < p->nlines; i++) {
        if (p->dir[i] == '>')
            verb = p->lines[i];
        else if ((p->lines[i][0] == '4' || p->lines[i][0] == '5') && verb) {
            found = p->lines[i];
            *cmd = verb;
        }
    }
    return found;
}

static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *s = list; s && *s;) {
        s += strspn(s, " ");
        size_t w = strcspn(s, " ");
        if (w == n && !strncasecmp(s, word, n))
            return 1;
        s += w;
    }
    return 0;
}

/* ---- set-up ---- */

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
    int smtp = p->proto == P_SMTP;
    int mode = smtp ? cfg->smtp_tls : cfg->pop3_tls;
    CURL *h = p->h = curl_easy_init();
    if (!h)
        return -1;
    snprintf(p->url, sizeof p->url, "%s%s://%s/%s", smtp ? "smtp" : "pop3",
             mode == TLSM_IMPLICIT ? "s" : "", p->target, smtp ? cfg->helo : "");
    curl_easy_setopt(h, CURLOPT_URL, p->url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "smtp,smtps,pop3,pop3s");
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
    else
        set_tls(h, mode, cfg->pop3_tls_ca, cfg->pop3_tls_verify);
    if (p->user && !p->own_login) {
        char opt[40];
        curl_easy_setopt(h, CURLOPT_USERNAME, p->user->addr);
        curl_easy_setopt(h, CURLOPT_PASSWORD, p->user->pass);
        if (smtp)
            snprintf(opt, sizeof opt, "AUTH=%s", smtp_mechs[cfg->smtp_auth] ? smtp_mechs[cfg->smtp_auth] : "*");
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

/* ---- diagnosis ---- */

#define SAY(...) snprintf(p->result, sizeof p->result, __VA_ARGS__)

/* Failures before the protocol gets a word in; 1 when p->result says what happened. */
static int transport_problem(struct target_check *p, const char *proto, int mode, const char *ca)
{
    long os_errno = 0, verify_result = 0;
    curl_off_t connect_us = 0, total_us = 0;
    curl_easy_getinfo(p->h, CURLINFO_OS_ERRNO, &os_errno);
    curl_easy_getinfo(p->h, CURLINFO_SSL_VERIFYRESULT, &verify_result);
    curl_easy_getinfo(p->h, CURLINFO_CONNECT_TIME_T, &connect_us);
    curl_easy_getinfo(p->h, CURLINFO_TOTAL_TIME_T, &total_us);
    /* curl's connect timeout covers greeting, TLS and login too, so say how long it was */
    int secs = p->own_secs ? p->own_secs : (int)((total_us + 500000) / 1000000);
    const char *upgrade = p->proto == P_SMTP ? "STARTTLS" : "STLS";
    const char *upgrade_mode = p->proto == P_SMTP ? "starttls" : "stls";
    if (p->not_proto) {              /* as the engine's <proto>_banner_protocol */
        SAY("the greeting is not %s: %s (another service on this port?)", p->proto == P_SMTP ? "SMTP" : "POP3",
            first_reply(p));
        return 1;
    }
    switch (p->rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
        SAY("cannot resolve the host name (%s)", p->errbuf);
        return 1;
    case CURLE_COULDNT_CONNECT:
        if (os_errno == ECONNREFUSED)
            SAY("connection refused — is the server running?");
        else if (os_errno == ENETUNREACH || os_errno == EHOSTUNREACH)
            SAY("host unreachable (%s)", strerror((int)os_errno));
        else if (os_errno == ETIMEDOUT)
            SAY("no TCP connection within %d s (wrong address, or a firewall?)", CONNECT_TIMEOUT_S);
        else
            SAY("cannot connect (%s)", p->errbuf);
        return 1;
    case CURLE_OPERATION_TIMEDOUT:
        if (connect_us == 0)
            SAY("no TCP connection within %d s (wrong address, or a firewall?)", CONNECT_TIMEOUT_S);
        else if (!first_reply(p) && mode != TLSM_IMPLICIT)
            SAY("connected, but no greeting after %d s — an implicit-TLS port? then set %s.tls = implicit",
                secs, proto);
        else if (!first_reply(p))
            SAY("no TLS handshake and no greeting after %d s", secs);
        else if (last_command(p) && (!strncasecmp(last_command(p), "AUTH", 4) ||
                                     !strcasecmp(last_command(p), "PASS") || !strcasecmp(last_command(p), "APOP")))
            SAY("%s: no answer to %s after %d s — servers hold back their answer after failed logins: "
                "wrong password?", p->user ? p->user->addr : "?", last_command(p), secs);
        else
            SAY("no answer to %s after %d s", last_command(p) ? last_command(p) : "the greeting", secs);
        return 1;
    case CURLE_PEER_FAILED_VERIFICATION:
        if (verify_result == X509_V_OK)
            SAY("certificate does not match the host name (%s): connect by a name it was issued for, "
                "or set %s.tls_verify = no", p->errbuf, proto);
        else if (verify_result == X509_V_ERR_CERT_HAS_EXPIRED || verify_result == X509_V_ERR_CERT_NOT_YET_VALID)
            SAY("certificate outside its validity (%s): renew it, or set %s.tls_verify = no",
                X509_verify_cert_error_string(verify_result), proto);
        else if (ca && *ca)
            SAY("certificate not trusted by %s.tls_ca %s (%s): is that the CA that signed it? "
                "or set %s.tls_verify = no", proto, ca, X509_verify_cert_error_string(verify_result), proto);
        else
            SAY("certificate not trusted (%s): set %s.tls_ca or %s.tls_verify = no",
                X509_verify_cert_error_string(verify_result), proto, proto);
        return 1;
    case CURLE_SSL_CACERT_BADFILE:
        if (ca && *ca)
            SAY("%s.tls_ca %s: cannot read CA certificates from it", proto, ca);
        else    /* a minimal machine has no system store until ca-certificates is installed */
            SAY("cannot read the system's CA certificates (%s): install ca-certificates, or set %s.tls_ca",
                p->errbuf, proto);
        return 1;
    case CURLE_USE_SSL_FAILED:
        SAY("the server does not offer %s: set %s.tls = none (or implicit, if this is a TLS port)",
            upgrade, proto);
        return 1;
    case CURLE_SSL_CONNECT_ERROR:
        if (mode == TLSM_IMPLICIT && strstr(p->errbuf, "wrong version number"))
            SAY("TLS handshake failed: the server speaks plaintext on this port — set %s.tls = %s or none",
                proto, upgrade_mode);
        else
            SAY("TLS handshake failed (%s)", p->errbuf);
        return 1;
    default:
        break;
    }
    if (!first_reply(p) && p->rc != CURLE_OK && p->rc != CURLE_ABORTED_BY_CALLBACK) {
        SAY("the server closed the connection without a greeting (%s)", p->errbuf);
        return 1;
    }
    return 0;
}

static void tls_words(const struct target_check *p, int mode, int verify, char *buf, size_t n)
{
    const char *how = mode == TLSM_IMPLICIT ? "TLS" : p->proto == P_SMTP ? "STARTTLS" : "STLS";
    if (mode == TLSM_NONE)
        snprintf(buf, n, "no TLS");
    else
        snprintf(buf, n, "%s (%s, certificate %s)", how, p->tls[0] ? p->tls : "?",
                 verify ? "verified" : "not verified");
}

static void diagnose_smtp(struct target_check *p, const struct config *cfg)
{
    const char *banner = first_reply(p), *last = last_reply(p), *cmd = NULL;
    const char *refusal = last_refusal(p, &cmd);
    const char *mech = smtp_mechs[cfg->smtp_auth];
    if (transport_problem(p, "smtp", cfg->smtp_tls, cfg->smtp_tls_ca))
        return;
    if (banner && strncmp(banner, "220", 3)) {
        SAY("the server refused the session at the greeting: %s", banner);
        return;
    }
    /* curl goes on without AUTH when the server offers none: that is ours to catch. */
    int ehlo = replies_to(p, "EHLO");
    if (p->user && ehlo >= 0 && (p->rc == CURLE_OK || p->rc == CURLE_ABORTED_BY_CALLBACK ||
                                 p->rc == CURLE_LOGIN_DENIED || p->rc == CURLE_SEND_ERROR ||
                                 p->rc == CURLE_RECV_ERROR)) {
        const char *offered = capability(p, ehlo, "AUTH");
        if (!offered) {
            if (cfg->smtp_tls == TLSM_NONE && capability(p, ehlo, "STARTTLS"))
                SAY("the server offers AUTH only after STARTTLS: set smtp.tls = starttls");
            else
                SAY("the server offers no AUTH here: set smtp.auth = none, or use its submission port");
            return;
        }
        if (mech && !has_word(offered, mech)) {
            SAY("the server does not offer AUTH %s (it offers %s): set smtp.auth", mech, offered);
            return;
        }
    }
    int auth_idx = replies_to(p, "AUTH");
    if (p->rc == CURLE_LOGIN_DENIED) {
        SAY("%s: AUTH refused (wrong password?): %s", p->user ? p->user->addr : "?",
            auth_idx >= 0 && refusal ? refusal : p->errbuf);
        return;
    }
    if (p->rc == CURLE_ABORTED_BY_CALLBACK && last && !strncmp(last, "354", 3)) {
        char tls[120], auth[300] = "no AUTH";
        tls_words(p, cfg->smtp_tls, cfg->smtp_tls_verify, tls, sizeof tls);
        if (p->user) {
            const char *used = NULL;
            for (int i = p->nlines - 1; i >= 0 && !used; i--)
                if (p->dir[i] == '>' && !strncasecmp(p->lines[i], "AUTH ", 5))
                    used = p->lines[i];
            snprintf(auth, sizeof auth, "%s as %s", used ? used : "AUTH", p->user->addr);
        }
        p->ok = 1;
        SAY("greeting, EHLO, %s, %s, MAIL FROM and RCPT TO <%s> accepted, DATA answered 354 "
            "(no message sent)", tls, auth, p->rcpt);
        return;
    }
    if (refusal) {
        char hint[120] = "";
        if (!strncmp(refusal, "530", 3) && cfg->smtp_tls == TLSM_NONE && strcasestr(refusal, "STARTTLS"))
            snprintf(hint, sizeof hint, " — set smtp.tls = starttls");
        else if (!p->user && (!strncmp(refusal, "530", 3) || !strncmp(refusal, "554", 3) ||
                              strstr(refusal, "5.7.1")))
            snprintf(hint, sizeof hint, " — does the server want AUTH? set smtp.auth");
        if (!strcasecmp(cmd, "MAIL"))
            SAY("MAIL FROM <%s> refused: %s%s", cfg->mail_from, refusal, hint);
        else if (!strcasecmp(cmd, "RCPT"))
            SAY("RCPT TO <%s> refused: %s%s", p->rcpt, refusal, hint);
        else
            SAY("%s refused: %s%s", cmd, refusal, hint);
        return;
    }
    SAY("unexpected outcome: %s (last reply: %s)", p->errbuf[0] ? p->errbuf : curl_easy_strerror(p->rc),
        last ? last : "none");
}

static void diagnose_pop3(struct target_check *p, const struct config *cfg)
{
    const char *banner = first_reply(p), *last = last_reply(p), *cmd = last_command(p);
    const char *user = p->user->addr;
    if (transport_problem(p, "pop3", cfg->pop3_tls, cfg->pop3_tls_ca))
        return;
    if (banner && strncmp(banner, "+OK", 3)) {
        SAY("the server refused the session at the greeting: %s", banner);
        return;
    }
    if (p->rc == CURLE_LOGIN_DENIED) {
        int capa = replies_to(p, "CAPA");
        const char *sasl = capa >= 0 ? capability(p, capa, "SASL") : NULL;
        int stls = capa >= 0 && capability(p, capa, "STLS");
        int before_tls = cfg->pop3_tls == TLSM_NONE && stls;
        if (last && strcasestr(last, "[IN-USE]")) {
            SAY("%s: mailbox in use (another session holds its lock): %s", user, last);
        } else if (cfg->pop3_auth == POP3_AUTH_APOP && banner && !(strchr(banner, '<') && strchr(banner, '>'))) {
            SAY("the server offers no APOP (no timestamp in its greeting): set pop3.auth = user or plain");
        } else if (cfg->pop3_auth == POP3_AUTH_PLAIN && capa >= 0 && !has_word(sasl, "PLAIN")) {
            if (before_tls)
                SAY("the server offers AUTH PLAIN only after STLS: set pop3.tls = stls");
            else
                SAY("the server does not offer AUTH PLAIN (SASL: %s): set pop3.auth", sasl ? sasl : "none");
        } else if (cfg->pop3_auth == POP3_AUTH_USER && capa >= 0 && !capability(p, capa, "USER")) {
            if (before_tls)
                SAY("the server allows USER/PASS only after STLS: set pop3.tls = stls");
            else
                SAY("the server does not offer USER/PASS: set pop3.auth = plain or apop");
        } else {
            SAY("%s: login refused (wrong password?): %s", user, last ? last : p->errbuf);
        }
        return;
    }
    if (p->rc == CURLE_OK) {
        char tls[120];
        unsigned long msgs = 0, bytes = 0;
        tls_words(p, cfg->pop3_tls, cfg->pop3_tls_verify, tls, sizeof tls);
        int stat = replies_to(p, "STAT");
        if (stat < 0 || sscanf(p->lines[stat], "+OK %lu %lu", &msgs, &bytes) != 2) {
            SAY("%s: logged in, but STAT gave no count: %s", user, stat >= 0 ? p->lines[stat] : "no reply");
            return;
        }
        p->ok = 1;
        SAY("%s: greeting, %s, %s login, STAT: %lu messages, %lu bytes", user, tls,
            pop3_login_names[cfg->pop3_auth] ? pop3_login_names[cfg->pop3_auth] : "best offered", msgs, bytes);
        return;
    }
    if (cmd && !strcasecmp(cmd, "STAT") && last && last[0] == '-') {
        SAY("%s: logged in, but STAT failed: %s", user, last);
        return;
    }
    SAY("%s: unexpected outcome: %s (last reply: %s)", user,
        p->errbuf[0] ? p->errbuf : curl_easy_strerror(p->rc), last ? last : "none");
}

/* ---- the run ---- */

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

int check_config(const struct config *cfg, unsigned sample, FILE *out, volatile sig_atomic_t *stop)
{
    struct users users = { 0 };
    size_t nsmtp = cfg->smtp_targets.n, npop3 = cfg->pop3_targets.n;
    if (cfg->smtp_protocol == PROTO_LMTP) {
        /* curl speaks no LMTP; an SMTP probe of an LMTP port would only fail */
        for (size_t i = 0; i < nsmtp; i++)
            fprintf(out, "note smtp %s: not checked (LMTP)\n", cfg->smtp_targets.v[i]);
        nsmtp = 0;
        if (!npop3)
            return 0;
    }
    if (cfg->reader_protocol == READERS_IMAP) {
        /* the readers speak IMAP, which this check does not speak yet: it says so,
         * and checks no POP3 target the run will not use */
        for (size_t i = 0; i < cfg->imap_targets.n; i++)
            fprintf(out, "note imap %s: not checked (the preflight speaks SMTP and POP3 only)\n",
                    cfg->imap_targets.v[i]);
        npop3 = 0;
        if (!nsmtp)
            return 0;
    }
    if (!nsmtp && !npop3) {
        fprintf(stderr, "mailsoak check: nothing to check: give --smtp HOST:PORT and/or --pop3 HOST:PORT\n");
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
    for (size_t i = 0; i < nsmtp; i++) {
        struct target_check *p = &pr[i];
        p->proto = P_SMTP;
        p->target = cfg->smtp_targets.v[i];
        p->rcpt = users.v[0].addr;
        p->user = cfg->smtp_auth != SMTP_AUTH_NONE ? &users.v[0] : NULL;
        /* the source addresses in turn, as the senders take them */
        p->bind = cfg->smtp_bind.n ? cfg->smtp_bind.v[i % cfg->smtp_bind.n] : NULL;
    }
    for (size_t t = 0; t < npop3; t++)
        for (size_t j = 0; j < k; j++) {
            struct target_check *p = &pr[nsmtp + t * k + j];
            p->proto = P_POP3;
            p->target = cfg->pop3_targets.v[t];
            /* first, middle, last: spread over the list, where mistakes tend to differ */
            p->user = &users.v[k > 1 ? j * (users.n - 1) / (k - 1) : 0];
            p->own_login = cfg->pop3_auth == POP3_AUTH_USER;
            p->bind = cfg->pop3_bind.n ? cfg->pop3_bind.v[(t * k + j) % cfg->pop3_bind.n] : NULL;
        }
    for (size_t i = 0; i < n; i++)
        if (probe_start(&pr[i], cfg, m) < 0) {
            fprintf(stderr, "mailsoak check: cannot set up curl\n");
            goto out;
        }
    /* curl's transfers and our own USER/PASS exchanges share one wait. */
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
    if (stop && *stop)
        goto out;
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
        else
            diagnose_pop3(p, cfg);
        problems += !p->ok;
    }
    for (size_t i = 0; i < n; i++) {
        const struct target_check *p = &pr[i];
        const char *proto = p->proto == P_SMTP ? "smtp" : "pop3";
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
