/* config: the reference server's settings (one opts table plus the [fault.*] sections),
 * its fault tables, its log and its address book. Everything here is frozen after
 * startup except the runtime counters, which live in struct srv_fault_state. */
#ifndef MS_SERVER_CONFIG_H
#define MS_SERVER_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "lib/opts.h"
#include "lib/units.h"
#include "lib/users.h"

enum srv_store_kind { SRV_STORE_MEMORY, SRV_STORE_MAILDIR, SRV_STORE_MBOX, SRV_STORE_SQLITE };
enum srv_auth { SRV_AUTH_NONE, SRV_AUTH_OPTIONAL, SRV_AUTH_REQUIRED };

enum srv_proto { SRV_SMTP, SRV_POP3, SRV_IMAP, SRV_PROTO_COUNT };

/* Where a command fault can strike; the names are the stages of the error classes. */
enum srv_stage {
    ST_SMTP_CONNECT, ST_SMTP_BANNER, ST_SMTP_EHLO, ST_SMTP_AUTH, ST_SMTP_MAIL, ST_SMTP_RCPT,
    ST_SMTP_DATA, ST_SMTP_EOD, ST_SMTP_RSET, ST_SMTP_NOOP, ST_SMTP_QUIT,
    ST_POP3_CONNECT, ST_POP3_BANNER, ST_POP3_CAPA, ST_POP3_USER, ST_POP3_PASS, ST_POP3_STAT,
    ST_POP3_LIST, ST_POP3_UIDL, ST_POP3_RETR, ST_POP3_TOP, ST_POP3_DELE, ST_POP3_RSET,
    ST_POP3_NOOP, ST_POP3_QUIT,
    ST_IMAP_CONNECT, ST_IMAP_BANNER, ST_IMAP_CAPABILITY, ST_IMAP_LOGIN, ST_IMAP_SELECT,
    ST_IMAP_SEARCH, ST_IMAP_FETCH, ST_IMAP_STORE, ST_IMAP_EXPUNGE, ST_IMAP_IDLE, ST_IMAP_NOOP,
    ST_IMAP_LOGOUT,
    ST_COUNT
};

enum srv_fault_kind {
    SF_TEMP, SF_PERM, SF_421, SF_DISCONNECT, SF_DELAY, SF_STALL,
    /* misbehaviours of a hostile server (tests/integration/t_hostile.sh) */
    SF_RESET,                        /* RST instead of a reply */
    SF_REPLY,                        /* text, raw, instead of the reply (garbage, NUL, bad AUTH challenges) */
    SF_EXTRA,                        /* the reply, then text unasked (early and unsolicited replies) */
    SF_TRICKLE,                      /* from here on, every reply a byte at a time */
    SF_ENDLESS,                      /* a multi-line reply that never ends */
    SF_OVERLONG,                     /* a reply line of size bytes */
    SF_FORGE,                        /* RETR: X-Mailsoak-Id rewritten to RUNID-text */
    SF_DROP,                         /* end of data: 250 queued, and the message (of size bytes or more) never stored */
    /* IMAP's misbehaviours of a store that lies */
    SF_UNDONE,                       /* EXPUNGE: answered OK, messages kept and their flags cleared */
    SF_SILENT,                       /* IDLE: no EXISTS pushed while it lasts */
    SF_AGAIN,                        /* FETCH: the first body served gets a new UID, so it is served again */
    SF_APPLIED,                      /* STORE: the flags set, and the command answered NO all the same */
};

/* A delay drawn per use: fixed, uniform in [lo, hi], or exponential with mean lo
 * truncated at hi. */
enum srv_dist_kind { SD_FIXED, SD_UNIFORM, SD_EXP };
struct srv_dist {
    enum srv_dist_kind kind;
    uint64_t lo, hi;                 /* ns */
};

/* One [fault.smtp.STAGE], [fault.pop3.STAGE] or [fault.imap.STAGE] section (a ".NAME" suffix allows several). */
struct srv_cmd_fault {
    char *name;                      /* the section name, for the log */
    enum srv_stage stage;
    enum srv_fault_kind kind;
    double odds;                     /* chance per command */
    uint64_t every;                  /* also strike on every Nth command of the stage */
    uint64_t after;                  /* ignore the first N commands of the stage */
    uint64_t max;                    /* at most this many strikes in a run (0 = no cap) */
    int code;                        /* SMTP reply code; 0 = the stage's default */
    char *resp;                      /* POP3 or IMAP response code ("SYS/TEMP", "UNAVAILABLE"); NULL = kind's default */
    char *text;                      /* reply text; NULL = a realistic default */
    char *log;                       /* log line; NULL = a realistic default */
    struct srv_dist delay;           /* kind = trickle: the pause between bytes */
    uint64_t size;                   /* kind = overlong: bytes in the line */
};

/* [fault.store]: for each kind a fraction, an every-Nth rule and a cap, so a test
 * can ask for exactly k events (every = 1, max = k). */
enum srv_store_event { SE_LOSE, SE_DUPLICATE, SE_CORRUPT, SE_TEMPFAIL, SE_LOCK, SE_EXPUNGE, SE_COUNT };
struct srv_rule {
    double odds;
    uint64_t every, max, after;
};
struct srv_store_faults {
    struct srv_rule rule[SE_COUNT];
    uint64_t lock_len, lock_period, lock_offset;   /* ns; windows of contention */
};

/* [fault.user]: address globs whose RCPT is deferred or rejected, or whose POP3
 * login always finds the mailbox locked. */
struct srv_user_faults {
    struct strlist defer, reject, lock;
    char *defer_text, *reject_text;
};

/* [fault.rate]: a known capacity. The server delivers at most `limit` messages a
 * second into its store (a token bucket of `burst` messages); mail above it is
 * queued in memory and delivered at the rate (over = queue: the 250 comes at once,
 * as from an MTA with a queue, and the queue grows while the offered rate is above
 * the limit) or refused at the end of data with 451 (over = 451). */
enum srv_rate_over { RATE_QUEUE, RATE_451 };
struct srv_rate_faults {
    double limit;                    /* messages a second; 0 = no limit */
    double burst;                    /* messages; 0 = a second's worth (limit, at least 1) */
    enum srv_rate_over over;
    uint64_t queue_max;              /* over = queue: messages queued at most, more get 452 */
    char *spool_dir;                 /* over = queue: a file per queued message, as an MTA's queue */
};

struct srv_faults {
    struct srv_cmd_fault *cmd;
    size_t ncmd;
    struct srv_store_faults store;
    struct srv_user_faults user;
    struct srv_rate_faults rate;
};

struct srv_config {
    /* [server] */
    char *listen_smtp, *listen_pop3, *listen_imap, *listen_imaps, *tls_cert, *tls_key, *hostname, *store_dir, *log, *pidfile, *ready_file;
    int store, fsync, auth, received, log_sessions;
    uint64_t seed, max_size, max_rcpts, max_conns, idle_timeout, imap_timeout;
    /* [users]: the same keys as mailsoak's */
    char *users_file, *user_pattern, *user_password;
    uint64_t user_count;
    struct srv_faults faults;
};

extern const struct opt srv_config_opts[];
extern const char *const srv_stage_names[ST_COUNT];
extern const char *const srv_store_event_names[SE_COUNT];

/* Parses the command line (argv after the program name): -c FILE, --set, flags.
 * Returns 0, 1 after --help, or 2 with the reason on stderr. */
int srv_config_from_args(struct srv_config *cfg, int argc, char **argv);
/* `mailsoak-server --doc WHAT`: the parts of mailsoak-server(8) and of the bash
 * completion generated from the tables (scripts/gen-doc); 0, or 2 on a bad WHAT. */
int srv_config_doc(const char *what);
/* Applies "fault.SECTION.key" = val; 0 or -1 with "key: reason" in why. */
int srv_fault_set(struct srv_faults *f, const char *section, const char *key, const char *val,
                  char *why, size_t whylen);
/* Checks what can only be checked once every key is read; -1 with a reason. */
int srv_faults_check(const struct srv_faults *f, char *why, size_t whylen);
void srv_config_free(struct srv_config *cfg);

#endif
