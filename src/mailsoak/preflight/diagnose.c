/* diagnose: what a preflight check saw, said in one line (include/preflight/diagnose.h):
 * the transport's failures (refused, unreachable, TLS, a certificate), then the
 * protocol's, read from curl's result and the server's own replies. */
#include "preflight/diagnose.h"

#include <errno.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lib/printable.h"

static const char *const pop3_login_names[] = { "USER/PASS", "APOP", "AUTH PLAIN", NULL };

/* ---- the transcript's replies ---- */

const char *check_first_reply(const struct target_check *p)
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
    const char *upgrade = p->proto == P_POP3 ? "STLS" : "STARTTLS";
    const char *upgrade_mode = p->proto == P_POP3 ? "stls" : "starttls";
    if (p->not_proto) {              /* as the engine's <proto>_banner_protocol */
        SAY("the greeting is not %s: %s (another service on this port?)",
            p->proto == P_SMTP ? "SMTP" : p->proto == P_IMAP ? "IMAP" : "POP3",
            check_first_reply(p));
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
        else if (!check_first_reply(p) && mode != TLSM_IMPLICIT)
            SAY("connected, but no greeting after %d s — an implicit-TLS port? then set %s.tls = implicit",
                secs, proto);
        else if (!check_first_reply(p))
            SAY("no TLS handshake and no greeting after %d s", secs);
        else if (last_command(p) && (!strncasecmp(last_command(p), "AUTH", 4) ||
                                     !strcasecmp(last_command(p), "PASS") || !strcasecmp(last_command(p), "APOP") ||
                                     !strcasecmp(last_command(p), "LOGIN")))
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
    if (!check_first_reply(p) && p->rc != CURLE_OK && p->rc != CURLE_ABORTED_BY_CALLBACK) {
        SAY("the server closed the connection without a greeting (%s)", p->errbuf);
        return 1;
    }
    return 0;
}

static void tls_words(const struct target_check *p, int mode, int verify, char *buf, size_t n)
{
    const char *how = mode == TLSM_IMPLICIT ? "TLS" : p->proto == P_POP3 ? "STLS" : "STARTTLS";
    if (mode == TLSM_NONE)
        snprintf(buf, n, "no TLS");
    else
        snprintf(buf, n, "%s (%s, certificate %s)", how, p->tls[0] ? p->tls : "?",
                 verify ? "verified" : "not verified");
}

void diagnose_smtp(struct target_check *p, const struct config *cfg)
{
    const char *banner = check_first_reply(p), *last = last_reply(p), *cmd = NULL;
    const char *refusal = last_refusal(p, &cmd);
    const char *mech = check_smtp_mechs[cfg->smtp_auth];
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

void diagnose_pop3(struct target_check *p, const struct config *cfg)
{
    const char *banner = check_first_reply(p), *last = last_reply(p), *cmd = last_command(p);
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

/* by imap.auth; with login and auto curl logs in as it sees fit */
static const char *const imap_login_names[] = { "curl's choice of", "AUTHENTICATE PLAIN", "curl's choice of" };

void diagnose_imap(struct target_check *p, const struct config *cfg)
{
    const char *banner = check_first_reply(p), *last = last_reply(p);
    const char *user = p->user->addr;
    if (transport_problem(p, "imap", cfg->imap_tls, cfg->imap_tls_ca))
        return;
    if (banner && strncmp(banner, "* OK", 4)) {
        SAY("the server refused the session at the greeting: %s", banner);
        return;
    }
    if (p->rc == CURLE_LOGIN_DENIED) {
        if (cfg->imap_auth == IMAP_AUTH_PLAIN && banner && strstr(banner, "CAPABILITY") && !strstr(banner, "AUTH=PLAIN"))
            SAY("the server does not offer AUTHENTICATE PLAIN: set imap.auth = login");
        else
            SAY("%s: login refused (wrong password?): %s", user, last ? last : p->errbuf);
        return;
    }
    if (p->rc == CURLE_OK) {
        char tls[120];
        unsigned long msgs = 0;
        int found = 0;
        for (int i = 0; i < p->nlines && !found; i++)
            found = p->dir[i] == '<' && sscanf(p->lines[i], "* %lu EXISTS", &msgs) == 1;
        tls_words(p, cfg->imap_tls, cfg->imap_tls_verify, tls, sizeof tls);
        if (!found) {
            SAY("%s: logged in, but EXAMINE INBOX gave no count: %s", user, last ? last : "no reply");
            return;
        }
        p->ok = 1;
        SAY("%s: greeting, %s, %s login, EXAMINE INBOX: %lu messages", user, tls, imap_login_names[cfg->imap_auth],
            msgs);
        return;
    }
    SAY("%s: unexpected outcome: %s (last reply: %s)", user, p->errbuf[0] ? p->errbuf : curl_easy_strerror(p->rc),
        last ? last : "none");
}
