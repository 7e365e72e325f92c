/* config: every setting of `mailsoak run`. Keys, defaults and help live in one
 * table in config.c; this struct is what the rest of the program reads. It is no
 * global: a local of the command that read it (cmd/), frozen once read and handed
 * down by pointer. */
#ifndef MS_CONFIG_H
#define MS_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "lib/opts.h"
#include "lib/units.h"

enum pipelining { PIPE_AUTO, PIPE_ON, PIPE_OFF };
enum smtp_protocol { PROTO_SMTP, PROTO_LMTP };
#define MAX_RCPTS 64
/* tls = none | starttls (SMTP) or stls (POP3) | implicit: one enum for both protocols. */
enum tls_mode { TLSM_NONE, TLSM_UPGRADE, TLSM_IMPLICIT };
enum smtp_auth { SMTP_AUTH_NONE, SMTP_AUTH_PLAIN, SMTP_AUTH_LOGIN, SMTP_AUTH_CRAM_MD5, SMTP_AUTH_AUTO };
enum pop3_auth { POP3_AUTH_USER, POP3_AUTH_APOP, POP3_AUTH_PLAIN, POP3_AUTH_AUTO };
/* readers.protocol: what the readers speak. */
enum reader_protocol { READERS_POP3, READERS_IMAP };
enum imap_auth { IMAP_AUTH_LOGIN, IMAP_AUTH_PLAIN, IMAP_AUTH_AUTO };
/* imap.models: the client models, by share of the readers' users. */
enum imap_model { IMAP_DRAIN, IMAP_IDLE, IMAP_POLL, IMAP_WEBMAIL, IMAP_MODELS };
extern const char *const imap_model_names[IMAP_MODELS];
/* imap.delete = never, as a duration */
#define IMAP_DELETE_NEVER UINT64_MAX

/* [server]: the server under test (the tested server, sampled by the collector;
 * never the reference server of src/server, whose settings are struct srv_config). */
struct tested_server {
    struct strlist pids, pidfiles, processes;   /* the process set's roots */
    struct strlist spool_dirs, store_dirs, logs;
    char *store_format;                         /* auto|maildir|mbox|sdbox|mdbox */
    char *spool_format;                         /* auto|postfix|exim|opensmtpd|sendmail|files */
    uint64_t sample_interval;                   /* ns */
    uint64_t walk_interval;                     /* ns: store, PSS; 0 = every sample */
    uint64_t queue_interval;                    /* ns: the spool's count; 0 = every sample */
    struct strlist log_classes;                 /* "name: ERE" adds or replaces a class */
    int log_defaults;                           /* keep the built-in classes */
    uint64_t log_examples;                      /* first N lines kept per class */
    struct strlist probes;                      /* [LABEL=]http://HOST:PORT: pulled, not sampled here */
    char *probe_token;
    char *database;                             /* KIND:PARAMETERS, "" = none (probe/db.h) */
};

/* [gate]: what a run must show to pass; verdict/gate.c judges it, the exit status
 * says which group failed (lib/exitcodes.h). */
enum gate_preset { GATE_PRESET_INTEGRITY, GATE_PRESET_SPECMAIL2001, GATE_PRESET_OFF };
enum capacity_method { CAPACITY_STEPS, CAPACITY_STAIRCASE };   /* the default: staircase */
/* smtp.profile_end: a stage runs its whole duration, or ends once the sequential
 * test of "kept up" decided it (verdict/stage_end.h) */
enum profile_end { PROFILE_END_FIXED, PROFILE_END_DECIDED };
enum gate_classes { GATE_CLASSES_ANY, GATE_CLASSES_ALLOWED };
struct gate_config {
    int integrity, settled;                     /* integrity gates: on by default */
    int kept_up;                                /* the server kept up (verdict/keptup.h): on by default */
    uint64_t recovery;                          /* ns: a spike's recovery at most (verdict/recovery.h), 0 = off */
    double proven;                              /* least share proven delivered exactly once, 0 = off */
    int preset;                                 /* enum gate_preset: QoS gates added, or none at all */
    struct strlist latency;                     /* "CLASS pNN DURATION" */
    double errors;                              /* most errors per session attempt, 1 = off */
    int error_classes;                          /* enum gate_classes */
    struct strlist allow;                       /* "CLASS: reason" */
};

struct config {
    /* [run] */
    uint64_t duration, drain, interval, sweep_timeout, settle;   /* ns */
    uint64_t messages, seed, workers, error_examples;
    int sweep, check;
    int strict_bodies;               /* an empty body served as one empty line is corrupted */
    int sweep_all;                   /* the sweep's closing pass, and a pass that may prove, visit every mailbox sent mail */
    char *label, *json, *ledger_csv;
    char *server_kind;                          /* for compare: columns of one kind are marked among themselves */
    char *metrics, *metrics_token;              /* --metrics ADDR:PORT, "" = off */
    struct shard shard;                         /* part K of N: owns users with index mod N = K */

    /* [smtp] */
    struct strlist smtp_targets;
    uint64_t senders;
    struct range msgs_per_conn, size;
    int pipelining;
    uint64_t smtp_timeout;
    char *helo, *mail_from;
    int smtp_tls;                               /* enum tls_mode */
    char *smtp_tls_ca;                          /* "" = system store */
    int smtp_tls_verify, smtp_tls_resume;
    int smtp_auth;                              /* enum smtp_auth */
    int smtp_retry;                             /* 4xx: defer and send again, as an MTA */
    uint64_t retry_min, retry_max, retry_lifetime;   /* ns */

    /* [pop3] */
    struct strlist pop3_targets;
    uint64_t readers, max_per_session;
    int visit_owed;                             /* pop3.visit: 0 random, 1 owed */
    uint64_t empty_backoff;                     /* pop3.empty_backoff: ns, 0 = off */
    uint64_t pop3_timeout, start_after;
    int delete_foreign, exclusive;
    int pop3_tls;                               /* enum tls_mode */
    char *pop3_tls_ca;
    int pop3_tls_verify, pop3_tls_resume;
    int pop3_auth;                              /* enum pop3_auth */
    /* simulated mail clients: each of poll_users users checks its mailbox every
     * poll_interval (+- poll_jitter of it); leave: UIDL, retrieve only the new,
     * delete after keep_polls checks (0 = never); preview: TOP n preview_lines first */
    uint64_t poll_interval, poll_users, keep_polls, preview_lines;
    double poll_jitter;
    int pop3_leave, preview;

    /* [readers] */
    int reader_protocol;                        /* enum reader_protocol */

    /* [imap]: the readers with readers.protocol = imap */
    struct strlist imap_targets;
    int imap_tls;                               /* enum tls_mode */
    char *imap_tls_ca;
    int imap_tls_verify;
    int imap_auth;                              /* enum imap_auth */
    int imap_pipelining;                        /* send what RFC 3501 5.5 allows behind a command */
    uint64_t imap_timeout, imap_poll_interval, imap_idle_renew;   /* ns */
    uint64_t imap_idle_users, imap_max_literal;
    char *imap_models;                          /* "idle:80,webmail:20": imap_models_parse() */
    char *imap_delete;                          /* now | never | DURATION: imap_delete_parse() */

    /* [users] */
    char *users_file, *user_pattern, *user_password;
    uint64_t user_count;

    struct tested_server server;

    /* [fill]: every mailbox filled before the window, verified, then left alone */
    struct range fill_messages;                 /* per mailbox; 0 = no fill */
    uint64_t fill_senders;
    char *fill_ledger_csv, *fill_from;
    int fill_only;
    struct gate_config gate;

    /* [probe]: `mailsoak probe` on the server's host */
    char *probe_listen, *probe_token;
    uint64_t probe_keep;                        /* ns */

    /* [capacity]: `mailsoak capacity`, a search over the arrival rate (cmd/cmd_capacity.c) */
    struct capacity_config {
        double start, factor, max_rate, precision, queue_growth;
        uint64_t ramp, warmup, window, time_limit, drain;   /* ns */
        uint64_t max_senders, max_readers, confirm_rounds;
        int confirm, arrivals;
        int visit_owed;                         /* the runs' pop3.visit: 0 random, 1 owed */
        int method;                             /* enum capacity_method */
        uint64_t level;                         /* ns: a staircase level's length */
        double step;                            /* a staircase's levels: each the one before times 1 + step */
        char *dir, *report;
    } capacity;

    /* Workload shapes: [smtp] rate and ramp, size distribution, think time, source
     * addresses; [pop3] the share of retrieved mail that is deleted. */
    double rate, conn_rate, size_spread, delete_share;
    struct rate_stages profile;                 /* smtp.profile: stages of rates; the run lasts their sum */
    int profile_end;                            /* enum profile_end */
    uint64_t ramp, think, size_median;
    int arrivals;                               /* enum arrivals (engine/pacer.h) */
    uint64_t late_after;                        /* ns: an arrival this late was held by the tester */
    int size_dist;                              /* enum size_dist (sizes.h) */
    uint64_t ladder_count, ladder_max;          /* size_dist = ladder (engine/ladder.h) */
    int smtp_protocol;                          /* enum smtp_protocol */
    struct range rcpts;
    char *rcpts_weights;                        /* "70,15,8": shares of 1, 2, 3 recipients */
    int content;                                /* enum msg_content: random | mime | corpus */
    char *corpus;
    char *size_file;
    struct strlist smtp_bind, pop3_bind;
};

extern const struct opt config_opts[];

/* imap.models: "NAME:SHARE,..." into share[] (percent, adding up to 100); 0, or -1
 * with why in err. */
int imap_models_parse(const char *s, unsigned share[IMAP_MODELS], char *err, size_t errlen);
/* How many of nusers users each model has (imap.models, imap.idle_users): the
 * first n[IMAP_IDLE] users idle, the next n[IMAP_POLL] poll, the next
 * n[IMAP_WEBMAIL] use webmail, the rest (n[IMAP_DRAIN]) are left to the drain
 * readers; all 0 but drain when the readers speak POP3. */
void imap_model_users(const struct config *cfg, size_t nusers, size_t n[IMAP_MODELS]);
/* The users with a client of their own (idle, poll, webmail): a session each. */
size_t imap_idle_users(const struct config *cfg, size_t nusers);
/* imap.delete: now (0), never (IMAP_DELETE_NEVER) or a duration of run time
 * into *after_ns; 0, or -1 when it is none of those. */
int imap_delete_parse(const char *s, uint64_t *after_ns);

/* Reads the settings from words of a command line (-c FILE, --FLAG VALUE, --set
 * SECTION.KEY=VALUE, --no-check; lib/opts.h), over the defaults. Returns 0, or 2
 * with the reason printed on stderr, or 1 when --help printed config_help. */
int config_from_args(struct config *cfg, int argc, char **argv);
/* Every key with its flag, default and help, by section (the end of run --help). */
void config_help(FILE *f);
/* The rules between keys, which no one key's bounds can say (a sender needs a
 * target; a TLS CA must load). 0, or -1 with "key: reason" in err. */
int config_check(const struct config *cfg, char *err, size_t errlen);
/* The rules between keys and this machine, checked before anything is started (the
 * demo's server, the preflight): the files a run writes must have a folder to go
 * to (config_check_outputs), the users file must be readable and well formed, the
 * sessions must fit the descriptors this process may open. 0, or -1 with "key:
 * reason" in err. */
int config_check_limits(const struct config *cfg, char *err, size_t errlen);
/* The files a run or a search writes (run.json, run.ledger_csv, fill.ledger_csv,
 * capacity.report): each one's folder exists and takes a new file. */
int config_check_outputs(const struct config *cfg, char *err, size_t errlen);
/* Descriptors a run needs beyond a session's one each: the collector's logs and
 * directories, the metrics server, the JSON, the demo's pipes. The /proc files the
 * collector keeps open between samples come on top, from what the soft limit
 * leaves (run/setup.c raises it by CONFIG_FD_KEPT when the hard limit allows,
 * run/sources.c hands the collector what remains). */
#define CONFIG_FD_RESERVE 64
#define CONFIG_FD_KEPT 2048
/* The same into cfg, a struct config, printing usage_fn on --help: the settings
 * reader of the commands taking run's settings (lib/cli.h, struct cli_cmd). The
 * caller frees the config (config_free) whatever it returned, once it was zeroed. */
int config_from_words(void *cfg, int argc, char **argv, void (*usage_fn)(FILE *f));
void config_free(struct config *cfg);

#endif
