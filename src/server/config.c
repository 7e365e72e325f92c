/* config: every key of mailsoak-server, the [fault.*] sections the opts table cannot
 * describe, and the command line. Precedence: defaults, -c files in order, then
 * flags and --set (so a test can add one fault to a shared file). */
#include "server/config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/alloc.h"
#include "lib/docgen.h"

#define O(f) offsetof(struct srv_config, f)

static const char *const store_choices[] = { "memory", "maildir", "mbox", "sqlite", NULL };
static const char *const auth_choices[] = { "none", "optional", "required", NULL };

const struct opt srv_config_opts[] = {
    { "server", "listen_smtp", OPT_STR, O(listen_smtp), "127.0.0.1:2525", "listen-smtp", "SMTP address HOST:PORT (port 0 = any free port; empty = no SMTP)", NULL },
    { "server", "listen_pop3", OPT_STR, O(listen_pop3), "127.0.0.1:1110", "listen-pop3", "POP3 address HOST:PORT (port 0 = any free port; empty = no POP3)", NULL },
    { "server", "listen_imap", OPT_STR, O(listen_imap), "", "listen-imap", "IMAP address HOST:PORT (port 0 = any free port; empty = no IMAP)", NULL },
    { "server", "listen_imaps", OPT_STR, O(listen_imaps), "", "listen-imaps", "IMAP over implicit TLS, HOST:PORT (needs tls_cert and tls_key; empty = none)", NULL },
    { "server", "tls_cert", OPT_STR, O(tls_cert), "", "tls-cert", "PEM certificate (then its chain) for IMAPS and IMAP STARTTLS (empty = no TLS)", opt_path },
    { "server", "tls_key", OPT_STR, O(tls_key), "", "tls-key", "PEM key of tls_cert", opt_path },
    { "server", "hostname", OPT_STR, O(hostname), "mailsoak.test", NULL, "name in the banner, EHLO reply and Received line", NULL },
    { "server", "store", OPT_ENUM, O(store), "memory", "store", "where mail is kept", store_choices },
    { "server", "store_dir", OPT_STR, O(store_dir), "mail", "store-dir", "directory of the maildir, mbox and sqlite stores", opt_path },
    { "server", "fsync", OPT_BOOL, O(fsync), "yes", NULL, "fsync each message before accepting it (maildir, mbox; sqlite synchronous=FULL)", NULL },
    { "server", "log", OPT_STR, O(log), "", "log", "log file (empty = stderr)", opt_path },
    { "server", "pidfile", OPT_STR, O(pidfile), "", "pidfile", "write the process id here", opt_path },
    { "server", "ready_file", OPT_STR, O(ready_file), "", "ready-file", "also write the READY line here (atomically) once listening", opt_path },
    { "server", "seed", OPT_COUNT, O(seed), "1", "seed", "seed of every fault decision; the same seed and traffic replay the same faults", NULL },
    { "server", "max_size", OPT_BYTES, O(max_size), "10M", NULL, "largest message accepted (advertised as SIZE)", NULL },
    { "server", "max_rcpts", OPT_COUNT, O(max_rcpts), "100", NULL, "recipients per message", NULL },
    { "server", "max_conns", OPT_COUNT, O(max_conns), "10000", NULL, "connections at once; more are refused with 421 / -ERR (fewer when RLIMIT_NOFILE cannot hold them: the log says so)", NULL },
    { "server", "idle_timeout", OPT_DURATION, O(idle_timeout), "5m", NULL, "close a session idle this long", NULL },
    { "server", "imap_timeout", OPT_DURATION, O(imap_timeout), "30m", NULL, "close an IMAP session idle this long (RFC 3501 asks at least 30 minutes; IDLE clients renew within 29)", NULL },
    { "server", "auth", OPT_ENUM, O(auth), "none", "auth", "SMTP AUTH PLAIN/LOGIN/CRAM-MD5: none, optional, or required before MAIL", auth_choices },
    { "server", "received", OPT_BOOL, O(received), "yes", NULL, "prepend a Received: line to each message", NULL },
    { "server", "log_sessions", OPT_BOOL, O(log_sessions), "no", NULL, "log every connect, login and delivery (slow at full speed)", NULL },

    { "users", "file", OPT_STR, O(users_file), "", "users", "file of 'address password' lines (rabid's format), as mailsoak reads it", opt_path },
    { "users", "pattern", OPT_STR, O(user_pattern), "user%04d@test.local", NULL, "printf pattern of addresses when no file is given", NULL },
    { "users", "count", OPT_COUNT, O(user_count), "1200", NULL, "number of users made from the pattern", NULL },
    { "users", "password", OPT_SECRET, O(user_password), "", NULL, "password of every pattern user (printf pattern allowed)", NULL },
    { NULL, NULL, 0, 0, NULL, NULL, NULL, NULL },
};

const char *const srv_stage_names[ST_COUNT] = {
    [ST_SMTP_CONNECT] = "smtp.connect", [ST_SMTP_BANNER] = "smtp.banner", [ST_SMTP_EHLO] = "smtp.ehlo",
    [ST_SMTP_AUTH] = "smtp.auth", [ST_SMTP_MAIL] = "smtp.mail", [ST_SMTP_RCPT] = "smtp.rcpt",
    [ST_SMTP_DATA] = "smtp.data", [ST_SMTP_EOD] = "smtp.eod", [ST_SMTP_RSET] = "smtp.rset",
    [ST_SMTP_NOOP] = "smtp.noop", [ST_SMTP_QUIT] = "smtp.quit",
    [ST_POP3_CONNECT] = "pop3.connect", [ST_POP3_BANNER] = "pop3.banner", [ST_POP3_CAPA] = "pop3.capa",
    [ST_POP3_USER] = "pop3.user", [ST_POP3_PASS] = "pop3.pass", [ST_POP3_STAT] = "pop3.stat",
    [ST_POP3_LIST] = "pop3.list", [ST_POP3_UIDL] = "pop3.uidl", [ST_POP3_RETR] = "pop3.retr",
    [ST_POP3_TOP] = "pop3.top", [ST_POP3_DELE] = "pop3.dele", [ST_POP3_RSET] = "pop3.rset",
    [ST_POP3_NOOP] = "pop3.noop", [ST_POP3_QUIT] = "pop3.quit",
    [ST_IMAP_CONNECT] = "imap.connect", [ST_IMAP_BANNER] = "imap.banner",
    [ST_IMAP_CAPABILITY] = "imap.capability", [ST_IMAP_LOGIN] = "imap.login",
    [ST_IMAP_SELECT] = "imap.select", [ST_IMAP_SEARCH] = "imap.search", [ST_IMAP_FETCH] = "imap.fetch",
    [ST_IMAP_STORE] = "imap.store", [ST_IMAP_EXPUNGE] = "imap.expunge", [ST_IMAP_IDLE] = "imap.idle",
    [ST_IMAP_NOOP] = "imap.noop", [ST_IMAP_LOGOUT] = "imap.logout",
};

const char *const srv_store_event_names[SE_COUNT] = {
    [SE_LOSE] = "lose", [SE_DUPLICATE] = "duplicate", [SE_CORRUPT] = "corrupt",
    [SE_TEMPFAIL] = "tempfail", [SE_LOCK] = "lock", [SE_EXPUNGE] = "expunge",
};

static int parse_dist(const char *v, struct srv_dist *d, const char **why)
{
    char a[64];
    if (!strncasecmp(v, "exp(", 4)) {
        const char *end = strchr(v, ')');
        if (!end || (size_t)(end - v - 4) >= sizeof a || end[1]) {
            *why = "expected exp(MEAN), e.g. exp(300ms)";
            return -1;
        }
        memcpy(a, v + 4, (size_t)(end - v - 4));
        a[end - v - 4] = 0;
        if (parse_duration_ns(a, &d->lo, why) < 0)
            return -1;
        d->kind = SD_EXP;
        d->hi = d->lo * 20;          /* a tail, not an eternity */
        return 0;
    }
    const char *dash = strchr(v, '-');
    if (!dash) {
        d->kind = SD_FIXED;
        if (parse_duration_ns(v, &d->lo, why) < 0)
            return -1;
        d->hi = d->lo;
        return 0;
    }
    if ((size_t)(dash - v) >= sizeof a) {
        *why = "expected MIN-MAX, e.g. 100ms-2s";
        return -1;
    }
    memcpy(a, v, (size_t)(dash - v));
    a[dash - v] = 0;
    if (parse_duration_ns(a, &d->lo, why) < 0 || parse_duration_ns(dash + 1, &d->hi, why) < 0)
        return -1;
    if (d->hi < d->lo) {
        *why = "MIN is above MAX";
        return -1;
    }
    d->kind = SD_UNIFORM;
    return 0;
}

static int parse_kind(const char *v, enum srv_fault_kind *k)
{
    static const struct { const char *n; enum srv_fault_kind k; } t[] = {
        { "4xx", SF_TEMP }, { "temp", SF_TEMP }, { "5xx", SF_PERM }, { "perm", SF_PERM },
        { "421", SF_421 }, { "disconnect", SF_DISCONNECT }, { "delay", SF_DELAY },
        { "stall", SF_STALL }, { "reset", SF_RESET }, { "reply", SF_REPLY }, { "extra", SF_EXTRA },
        { "trickle", SF_TRICKLE }, { "endless", SF_ENDLESS }, { "overlong", SF_OVERLONG },
        { "forge", SF_FORGE }, { "drop", SF_DROP }, { "undone", SF_UNDONE }, { "silent", SF_SILENT },
        { "again", SF_AGAIN }, { "applied", SF_APPLIED },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcasecmp(v, t[i].n)) {
            *k = t[i].k;
            return 0;
        }
    return -1;
}

static int parse_odds(const char *v, double *d, const char **why)
{
    if (parse_double(v, d, why) < 0)
        return -1;
    if (*d > 1) {
        *why = "odds are a fraction between 0 and 1";
        return -1;
    }
    return 0;
}

static void set_str(char **p, const char *v)
{
    free(*p);
    *p = xstrdup(v);
}

static struct srv_cmd_fault *cmd_fault(struct srv_faults *f, const char *section, char *why, size_t n)
{
    for (size_t i = 0; i < f->ncmd; i++)
        if (!strcasecmp(f->cmd[i].name, section))
            return &f->cmd[i];
    const char *rest = section + 6;  /* past "fault." */
    for (int s = 0; s < ST_COUNT; s++) {
        size_t l = strlen(srv_stage_names[s]);
        if (!strncasecmp(rest, srv_stage_names[s], l) && (rest[l] == 0 || rest[l] == '.')) {
            struct srv_cmd_fault *v = xrealloc(f->cmd, (f->ncmd + 1) * sizeof *v);
            f->cmd = v;
            struct srv_cmd_fault *c = &v[f->ncmd++];
            memset(c, 0, sizeof *c);
            c->name = xstrdup(section);
            c->stage = (enum srv_stage)s;
            c->kind = SF_TEMP;
            return c;
        }
    }
    snprintf(why, n, "[%s]: unknown fault section (fault.store, fault.user, fault.rate, or "
             "fault.smtp.STAGE / fault.pop3.STAGE / fault.imap.STAGE with a stage such as smtp.rcpt, pop3.pass or imap.fetch)", section);
    return NULL;
}

static int set_rule(struct srv_rule *r, const char *suffix, const char *v, const char **why)
{
    if (!*suffix)
        return parse_odds(v, &r->odds, why);
    if (!strcasecmp(suffix, "_every"))
        return parse_count(v, &r->every, why);
    if (!strcasecmp(suffix, "_max"))
        return parse_count(v, &r->max, why);
    if (!strcasecmp(suffix, "_after"))
        return parse_count(v, &r->after, why);
    *why = "unknown key";
    return -1;
}

/* "10s every 60s" or "10s every 60s offset 5s" */
static int parse_windows(const char *v, struct srv_store_faults *s, const char **why)
{
    char a[64], b[64], c[64] = "0";
    char w1[16], w2[16] = "";
    int n = sscanf(v, "%63s %15s %63s %15s %63s", a, w1, b, w2, c);
    if ((n != 3 && n != 5) || strcasecmp(w1, "every") || (n == 5 && strcasecmp(w2, "offset"))) {
        *why = "expected 'LEN every PERIOD [offset START]', e.g. 10s every 60s";
        return -1;
    }
    if (parse_duration_ns(a, &s->lock_len, why) < 0 || parse_duration_ns(b, &s->lock_period, why) < 0 ||
        parse_duration_ns(c, &s->lock_offset, why) < 0)
        return -1;
    if (s->lock_period == 0 || s->lock_len > s->lock_period) {
        *why = "the window must be shorter than its period";
        return -1;
    }
    return 0;
}

int srv_fault_set(struct srv_faults *f, const char *section, const char *key, const char *v,
                  char *why, size_t n)
{
    const char *w = NULL;
    if (!strcasecmp(section, "fault.store")) {
        if (!strcasecmp(key, "lock_windows")) {
            if (parse_windows(v, &f->store, &w) < 0)
                goto bad;
            return 0;
        }
        for (int e = 0; e < SE_COUNT; e++) {
            size_t l = strlen(srv_store_event_names[e]);
            if (!strncasecmp(key, srv_store_event_names[e], l) && (key[l] == 0 || key[l] == '_')) {
                if (set_rule(&f->store.rule[e], key + l, v, &w) < 0)
                    goto bad;
                return 0;
            }
        }
        w = "unknown key";
        goto bad;
    }
    if (!strcasecmp(section, "fault.rate")) {
        struct srv_rate_faults *r = &f->rate;
        if (!strcasecmp(key, "limit")) {
            if (parse_double(v, &r->limit, &w) < 0)
                goto bad;
        } else if (!strcasecmp(key, "burst")) {
            if (parse_double(v, &r->burst, &w) < 0)
                goto bad;
        } else if (!strcasecmp(key, "over")) {
            if (!strcasecmp(v, "queue"))
                r->over = RATE_QUEUE;
            else if (!strcmp(v, "451"))
                r->over = RATE_451;
            else {
                w = "expected queue or 451";
                goto bad;
            }
        } else if (!strcasecmp(key, "queue_max")) {
            if (parse_count(v, &r->queue_max, &w) < 0)
                goto bad;
        } else if (!strcasecmp(key, "spool_dir")) {
            set_str(&r->spool_dir, v);
        } else {
            w = "unknown key (limit, burst, over, queue_max, spool_dir)";
            goto bad;
        }
        return 0;
    }
    if (!strcasecmp(section, "fault.user")) {
        struct srv_user_faults *u = &f->user;
        if (!strcasecmp(key, "defer")) strlist_add(&u->defer, v);
        else if (!strcasecmp(key, "reject")) strlist_add(&u->reject, v);
        else if (!strcasecmp(key, "lock")) strlist_add(&u->lock, v);
        else if (!strcasecmp(key, "defer_text")) set_str(&u->defer_text, v);
        else if (!strcasecmp(key, "reject_text")) set_str(&u->reject_text, v);
        else {
            w = "unknown key";
            goto bad;
        }
        return 0;
    }
    struct srv_cmd_fault *c = cmd_fault(f, section, why, n);
    if (!c)
        return -1;
    if (!strcasecmp(key, "kind")) {
        if (parse_kind(v, &c->kind) < 0) {
            w = "expected 4xx, 5xx, 421, disconnect, delay, stall, reset, reply, extra, trickle, endless, "
                "overlong, forge, drop, undone, silent, again or applied";
            goto bad;
        }
    } else if (!strcasecmp(key, "odds")) {
        if (parse_odds(v, &c->odds, &w) < 0)
            goto bad;
    } else if (!strcasecmp(key, "every")) {
        if (parse_count(v, &c->every, &w) < 0)
            goto bad;
    } else if (!strcasecmp(key, "after")) {
        if (parse_count(v, &c->after, &w) < 0)
            goto bad;
    } else if (!strcasecmp(key, "max")) {
        if (parse_count(v, &c->max, &w) < 0)
            goto bad;
    } else if (!strcasecmp(key, "code")) {
        char *end;
        long code = strtol(v, &end, 10);
        if (*end || code < 400 || code > 599) {
            w = "expected an SMTP reply code from 400 to 599";
            goto bad;
        }
        c->code = (int)code;
    } else if (!strcasecmp(key, "resp")) {
        if (strpbrk(v, "[] \r\n")) {
            w = "expected a POP3 or IMAP response code without brackets, e.g. SYS/TEMP, IN-USE or UNAVAILABLE (or none)";
            goto bad;
        }
        set_str(&c->resp, v);
    } else if (!strcasecmp(key, "text")) {
        set_str(&c->text, v);
    } else if (!strcasecmp(key, "log")) {
        set_str(&c->log, v);
    } else if (!strcasecmp(key, "delay")) {
        if (parse_dist(v, &c->delay, &w) < 0)
            goto bad;
    } else if (!strcasecmp(key, "size")) {
        if (parse_bytes(v, &c->size, &w) < 0)
            goto bad;
    } else {
        w = "unknown key (kind, odds, every, after, max, code, resp, text, log, delay, size)";
        goto bad;
    }
    return 0;
bad:
    snprintf(why, n, "%s.%s: %s: '%s'", section, key, w, v);
    return -1;
}

int srv_faults_check(const struct srv_faults *f, char *why, size_t n)
{
    for (size_t i = 0; i < f->ncmd; i++) {
        const struct srv_cmd_fault *c = &f->cmd[i];
        if (c->odds <= 0 && !c->every) {
            snprintf(why, n, "[%s]: set odds or every, or the fault never strikes", c->name);
            return -1;
        }
        if ((c->kind == SF_REPLY || c->kind == SF_EXTRA || c->kind == SF_FORGE) && !c->text) {
            snprintf(why, n, "[%s]: kind = reply, extra and forge need text = (escapes: \\r \\n \\xNN)", c->name);
            return -1;
        }
        if (c->kind == SF_DROP && c->stage != ST_SMTP_EOD) {
            snprintf(why, n, "[%s]: kind = drop accepts a message and loses it: fault.smtp.eod only", c->name);
            return -1;
        }
        if (c->kind == SF_FORGE && c->stage != ST_POP3_RETR) {
            snprintf(why, n, "[%s]: kind = forge rewrites retrieved messages: fault.pop3.retr only", c->name);
            return -1;
        }
        if (c->kind == SF_UNDONE && c->stage != ST_IMAP_EXPUNGE) {
            snprintf(why, n, "[%s]: kind = undone answers an EXPUNGE without doing it: fault.imap.expunge only", c->name);
            return -1;
        }
        if (c->kind == SF_SILENT && c->stage != ST_IMAP_IDLE) {
            snprintf(why, n, "[%s]: kind = silent keeps an IDLE from pushing EXISTS: fault.imap.idle only", c->name);
            return -1;
        }
        if (c->kind == SF_APPLIED && c->stage != ST_IMAP_STORE) {
            snprintf(why, n, "[%s]: kind = applied sets the flags and refuses the STORE: fault.imap.store only", c->name);
            return -1;
        }
        if (c->kind == SF_AGAIN && c->stage != ST_IMAP_FETCH) {
            snprintf(why, n, "[%s]: kind = again serves a fetched message under a new UID: fault.imap.fetch only", c->name);
            return -1;
        }
        if (c->kind == SF_DELAY && !c->delay.hi) {
            snprintf(why, n, "[%s]: kind = delay needs delay = (e.g. 100ms-2s or exp(300ms))", c->name);
            return -1;
        }
        if (c->code && c->stage >= ST_POP3_CONNECT) {
            snprintf(why, n, "[%s]: code is for SMTP; POP3 and IMAP faults take resp (e.g. SYS/TEMP)", c->name);
            return -1;
        }
        if (c->code && ((c->kind == SF_TEMP && c->code >= 500) || (c->kind == SF_PERM && c->code < 500))) {
            snprintf(why, n, "[%s]: code %d does not match kind", c->name, c->code);
            return -1;
        }
    }
    return 0;
}

static int claim_fault(const char *section)
{
    return !strncasecmp(section, "fault.", 6);
}

static int extra_set(void *ud, const char *section, const char *key, const char *val,
                     char *why, size_t n)
{
    return srv_fault_set(ud, section, key, val, why, n);
}

/* [fault.rate] spool_dir, a directory, is taken beside the file that names it. */
static int fault_path(const char *section, const char *key)
{
    return !strcasecmp(section, "fault.rate") && !strcasecmp(key, "spool_dir");
}

static void usage(FILE *f)
{
    fputs("usage: mailsoak-server [-c FILE]... [--FLAG VALUE]... [--set SECTION.KEY=VALUE]...\n"
          "\n"
          "The reference SMTP + POP3 + IMAP server of mailsoak. Prints one line\n"
          "  READY smtp=HOST:PORT pop3=HOST:PORT pid=PID [imap=HOST:PORT] [imaps=HOST:PORT]\n"
          "on stdout once it listens; SIGTERM or SIGINT stop it cleanly.\n"
          "--version prints its version.\n"
          "Faults are configured in [fault.*] sections: see conf/server-faults.conf.\n", f);
    opts_help(f, srv_config_opts);
}

/* The fault stages and store events of mailsoak-server(8), from the tables the
 * parser uses: "smtp" or "pop3" and the stage names after the dot. */
static void doc_stages(const char *proto)
{
    printf(".TP\n\\fBfault.%s.\\fISTAGE\\fR\n", proto);
    int first = 1;
    for (int s = 0; s < ST_COUNT; s++) {
        const char *n = srv_stage_names[s];
        if (!strncmp(n, proto, 4) && n[4] == '.') {
            printf("%s\\fB%s\\fR", first ? "" : ", ", n + 5);
            first = 0;
        }
    }
    fputs("\n", stdout);
}

int srv_config_doc(const char *what)
{
    if (!strcmp(what, "flags"))
        docgen_man_flags(stdout, srv_config_opts);
    else if (!strcmp(what, "keys"))
        docgen_man_keys(stdout, srv_config_opts);
    else if (!strcmp(what, "bash"))
        docgen_bash(stdout, srv_config_opts, "_mailsoak_server");
    else if (!strcmp(what, "stages")) {
        doc_stages("smtp");
        doc_stages("pop3");
        doc_stages("imap");
    } else if (!strcmp(what, "events")) {
        for (int e = 0; e < SE_COUNT; e++)
            printf("%s\\fB%s\\fR", e ? ", " : "", srv_store_event_names[e]);
        fputs("\n", stdout);
    } else {
        fprintf(stderr, "usage: mailsoak-server --doc flags|keys|bash|stages|events\n");
        return 2;
    }
    return 0;
}

int srv_config_from_args(struct srv_config *cfg, int argc, char **argv)
{
    char err[600];
    struct opts_extra extra = { .claim = claim_fault, .fn = extra_set, .ud = &cfg->faults, .is_path = fault_path };
    struct opts_cli cli = { .prog = "mailsoak-server", .usage = usage, .extra = &extra };
    memset(cfg, 0, sizeof *cfg);
    int r = opts_from_args(srv_config_opts, cfg, argc, argv, &cli);
    if (r)
        return r;
    if (srv_faults_check(&cfg->faults, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak-server: %s\n", err);
        return 2;
    }
    return 0;
}

void srv_config_free(struct srv_config *cfg)
{
    struct srv_faults *f = &cfg->faults;
    for (size_t i = 0; i < f->ncmd; i++) {
        free(f->cmd[i].name);
        free(f->cmd[i].resp);
        free(f->cmd[i].text);
        free(f->cmd[i].log);
    }
    free(f->cmd);
    strlist_free(&f->user.defer);
    strlist_free(&f->user.reject);
    strlist_free(&f->user.lock);
    free(f->user.defer_text);
    free(f->rate.spool_dir);
    free(f->user.reject_text);
    opts_free(srv_config_opts, cfg);
    memset(cfg, 0, sizeof *cfg);
}
