/* config: the table of every `mailsoak run` key and the command line that fills it.
 * Order of precedence: defaults, then each -c file in order, then flags and --set. */
#include "settings/config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/tls.h"
#include "lib/users.h"

#define O(f) offsetof(struct config, f)

static const char *const pipelining_choices[] = { "auto", "on", "off", NULL };
static const char *const protocol_choices[] = { "smtp", "lmtp", NULL };
/* Indexed by enum arrivals (engine/pacer.h). */
static const char *const arrivals_choices[] = { "constant", "exponential", NULL };
/* Indexed by enum profile_end in config.h. */
static const char *const profile_end_choices[] = { "fixed", "decided", NULL };
static const char *const ladder_counts[] = { "1", "1000", NULL };
static const char *const ladder_maxes[] = { "1k", "4G", NULL };
/* pop3.visit; indexed by the int visit_owed (0 random, 1 owed). */
static const char *const visit_choices[] = { "random", "owed", NULL };
static const char *const size_dist_choices[] = { "uniform", "fixed", "lognormal", "file", "cdf", "ladder", NULL };
static const char *const content_choices[] = { "random", "mime", "corpus", NULL };
/* Indexed by enum tls_mode, smtp_auth and pop3_auth in config.h. */
static const char *const smtp_tls_choices[] = { "none", "starttls", "implicit", NULL };
static const char *const pop3_tls_choices[] = { "none", "stls", "implicit", NULL };
static const char *const smtp_auth_choices[] = { "none", "plain", "login", "cram-md5", "auto", NULL };
static const char *const pop3_auth_choices[] = { "user", "apop", "plain", "auto", NULL };
/* Indexed by enum reader_protocol and imap_auth in config.h. */
static const char *const reader_protocol_choices[] = { "pop3", "imap", NULL };
static const char *const imap_auth_choices[] = { "login", "plain", "auto", NULL };
/* IMAP's literal: the largest body (64M) written out with its headers and some
 * growth (a server may rewrite line ends), at most 1 GiB. */
static const char *const a_literal[] = { "64k", "1G", NULL };
/* Bounds of numbers: { MIN, MAX }, "" = none. Each is what a real run can meet:
 * a value outside would fail later, less clearly (an allocation of 10^8 sessions),
 * or measure nothing (an interval of 0). */
static const char *const at_least_1[] = { "1", "", NULL };
static const char *const not_negative[] = { "0", "", NULL };
static const char *const a_share[] = { "0", "1", NULL };
/* Sessions: each holds a descriptor, and config_check_limits holds them to the
 * descriptor limit; a million is the kernel's default ceiling (fs.nr_open). */
static const char *const sessions[] = { "0", "1000000", NULL };
/* A worker is a thread with an event loop; more than cores gains nothing. */
static const char *const workers[] = { "0", "1024", NULL };
/* A timeline entry per interval (about 25 KB each at 4,000 messages/s) and the
 * controller's 20 ms naps: shorter intervals measure the tester, not the server. */
static const char *const an_interval[] = { "100ms", "", NULL };
static const char *const a_timeout[] = { "100ms", "", NULL };
/* A body is built in memory, once per session in flight: 64 MB is six times
 * Postfix's default message_size_limit. */
static const char *const body_size[] = { "0", "64M", NULL };
static const char *const recipients[] = { "1", "64", NULL };
static const char *const spread[] = { "1", "", NULL };
static const char *const examples[] = { "0", "1000", NULL };
static const char *const user_count[] = { "1", "10000000", NULL };
/* capacity: rates in msg/s, a coarse step's factor, the bisection's precision, a
 * steady window of at least a second (a timeline entry or more). */
static const char *const a_rate[] = { "0.01", "1000000", NULL };
static const char *const a_factor[] = { "1.1", "100", NULL };
static const char *const a_rounds[] = { "1", "10", NULL };
static const char *const a_precision[] = { "0.001", "1", NULL };
static const char *const a_window[] = { "1s", "", NULL };
/* capacity.method: indexed by enum capacity_method in config.h. A staircase
 * level holds at least a few of its sequential test's batches; levels a few per
 * cent apart (a share of the rate). */
static const char *const capacity_methods[] = { "steps", "staircase", NULL };
static const char *const a_level[] = { "5s", "1h", NULL };
static const char *const a_stair_step[] = { "0.01", "0.5", NULL };
/* pop3.empty_backoff: a minute keeps a reader's delay below the drain's and the
 * settle's own scale (60s, 10s); 0 turns it off. */
static const char *const an_empty_backoff[] = { "0s", "60s", NULL };
/* Indexed by enum gate_preset and gate_classes in config.h. */
static const char *const gate_preset_choices[] = { "integrity", "specmail2001", "off", NULL };
static const char *const gate_classes_choices[] = { "any", "allowed", NULL };

const struct opt config_opts[] = {
    { "run", "duration", OPT_DURATION, O(duration), "10m", "duration", "how long senders send", NULL },
    { "run", "drain", OPT_DURATION, O(drain), "60s", "drain", "after the senders stop, how long readers go on emptying the mailboxes", NULL },
    { "run", "interval", OPT_DURATION, O(interval), "10s", "interval", "period of the live line and of the timeline entries", an_interval },
    { "run", "messages", OPT_COUNT, O(messages), "0", "messages", "stop the senders after this many accepted messages (0 = no limit)", NULL },
    { "run", "seed", OPT_COUNT, O(seed), "0", "seed", "seed of every random choice (0 = pick one and report it)", NULL },
    { "run", "workers", OPT_COUNT, O(workers), "0", "workers", "worker threads, each with its own event loop (0 = one per core)", workers },
    { "run", "label", OPT_STR, O(label), "", "label", "name of this run's column in tables and reports", NULL },
    { "run", "server_kind", OPT_STR, O(server_kind), "", NULL, "what kind of server this is (e.g. postfix+dovecot, reference): mailsoak compare marks best and worst only among columns of one kind", NULL },
    { "run", "json", OPT_STR, O(json), "", "json", "write the results as JSON to this file (atomically)", opt_path },
    { "run", "metrics", OPT_STR, O(metrics), "", "metrics", "serve the run's live figures in the Prometheus format on ADDR:PORT (PORT alone: 127.0.0.1), at /metrics", NULL },
    { "run", "metrics_token", OPT_SECRET, O(metrics_token), "", NULL, "if set, scrapes must send 'Authorization: Bearer TOKEN'", NULL },
    { "run", "shard", OPT_SHARD, O(shard), "0/1", "shard", "part K of N of a load spread over several hosts: this run owns the users whose index mod N is K (its senders send only to them, its readers read only them); mailsoak merge adds the parts up", NULL },
    { "run", "ledger_csv", OPT_STR, O(ledger_csv), "", "ledger-csv", "write every message not delivered exactly once (id, Message-ID, mailbox, size, accepted, outcome, reason, the server's queue id) to this CSV file", opt_path },
    { "run", "check", OPT_BOOL, O(check), "yes", NULL, "before any load, check every target with libcurl (mailsoak check); --no-check skips it", NULL },
    { "run", "strict_bodies", OPT_BOOL, O(strict_bodies), "no", NULL, "count an empty body served as one empty line (an mbox store keeps an empty body so: Dovecot's mbox) as corrupted; no: counted apart, as the server's property, and delivered", NULL },
    { "run", "sweep", OPT_BOOL, O(sweep), "yes", NULL, "after the drain, visit every mailbox that still owes messages, in passes, until the server settled", NULL },
    { "run", "sweep_all", OPT_BOOL, O(sweep_all), "yes", NULL, "the sweep's last pass (also after a drain that read everything) and a pass that may prove visit every mailbox sent mail, not only those that owe: a copy the server delivers again lands where nothing is owed (one login per mailbox sent mail); no: such copies go uncounted", NULL },
    { "run", "sweep_timeout", OPT_DURATION, O(sweep_timeout), "60s", NULL, "upper bound of the final sweep", NULL },
    { "run", "settle", OPT_DURATION, O(settle), "10s", "settle", "the sweep proves a message lost only in a pass that began after no owed mailbox gained mail for this long (and the known spool held none of it)", NULL },
    { "run", "error_examples", OPT_COUNT, O(error_examples), "5", NULL, "server replies kept as examples per error class, and messages shown one by one (with their trail in the server's logs) per outcome: lost, duplicated, corrupted, late (at most 10)", examples },

    { "smtp", "target", OPT_LIST, O(smtp_targets), NULL, "smtp", "SMTP server as HOST:PORT", opt_hostport },
    { "smtp", "senders", OPT_COUNT, O(senders), "20", "senders", "concurrent SMTP sessions", sessions },
    { "smtp", "msgs_per_conn", OPT_RANGE, O(msgs_per_conn), "1-5", "msgs-per-conn", "messages per connection, uniform in MIN-MAX", at_least_1 },
    { "smtp", "size", OPT_BYTERANGE, O(size), "0-1000", "size", "body size in bytes: uniform in MIN-MAX, or the bounds of other distributions", body_size },
    { "smtp", "size_dist", OPT_ENUM, O(size_dist), "uniform", NULL, "distribution of body sizes (fixed = the low end of size; ladder = whole-message sizes doubling from 1 KiB past the server's advertised SIZE, ladder_count of each, then the run ends: the size ladder)", size_dist_choices },
    { "smtp", "ladder_count", OPT_COUNT, O(ladder_count), "3", NULL, "size ladder: messages of each size", ladder_counts },
    { "smtp", "ladder_max", OPT_BYTES, O(ladder_max), "64M", NULL, "size ladder: the largest size when the server advertises no SIZE limit", ladder_maxes },
    { "smtp", "size_median", OPT_BYTES, O(size_median), "2k", NULL, "lognormal: median body size", NULL },
    { "smtp", "size_spread", OPT_DOUBLE, O(size_spread), "3", NULL, "lognormal: geometric standard deviation (68 % within median/spread..median*spread)", spread },
    { "smtp", "size_file", OPT_STR, O(size_file), "", NULL, "file: one observed size in bytes per line, drawn at random; cdf: 'BYTES SHARE' lines, the share of messages of at most BYTES, ascending (conf/sizes/email-2002.cdf), drawn between the points log-linearly", opt_path },
    { "smtp", "content", OPT_ENUM, O(content), "random", "content", "what bodies are: random printable lines (the classic), mime (mail as clients write it: a client's headers, text, text and HTML, or those and a base64 attachment, nested), or corpus (the messages of smtp.corpus, replayed)", content_choices },
    { "smtp", "corpus", OPT_STR, O(corpus), "", "corpus", "content = corpus: an mbox file, a maildir or a folder of .eml files; each message is sent to the chosen recipients with its headers but To, Cc, Message-ID and the delivery's, with our id and the digest of its body as sent", opt_path },
    { "smtp", "rate", OPT_DOUBLE, O(rate), "0", "rate", "target messages per second over all senders (0 = as fast as they go); latency counts from each message's intended time", not_negative },
    { "smtp", "arrivals", OPT_ENUM, O(arrivals), "constant", "arrivals", "with a rate: arrivals evenly spaced, or exponential gaps (a Poisson process, SPECmail2001's); either way open-loop, on a schedule the server cannot slow", arrivals_choices },
    { "smtp", "late_after", OPT_DURATION, O(late_after), "1s", NULL, "with a rate: an arrival that starts this long after its time is late, held by the tester (every sender busy, or the engine behind); late arrivals above 1 in 1000 mark the run tester-limited", NULL },
    { "smtp", "conn_rate", OPT_DOUBLE, O(conn_rate), "0", NULL, "target new SMTP connections per second (0 = no limit)", not_negative },
    { "smtp", "profile", OPT_STAGES, O(profile), "", NULL, "a load profile instead of smtp.rate: stages DURATION@RATE (msg/s) one after another, such as 60s@35, 60s@70, 120s@35 (a spike and its recovery; capacity's staircase), each open-loop with smtp.arrivals; the run sends for their sum (run.duration is not read), with no ramp", NULL },
    { "smtp", "profile_end", OPT_ENUM, O(profile_end), "fixed", NULL, "smtp.profile: fixed, each stage runs its whole duration; decided, each stage but the first of several (a lead-in) ends as soon as the sequential test of kept up decides it (capacity.queue_growth, its batches sized by capacity.level, its cap the stage's duration), and one decided behind, or one that ran out its time undecided while our readers fell behind (its backlog theirs by the kept-up judgement, its growth by least squares), ends the send window too (capacity's staircase)", profile_end_choices },
    { "smtp", "ramp", OPT_DURATION, O(ramp), "0s", "ramp", "rates rise linearly from zero over this time", NULL },
    { "smtp", "protocol", OPT_ENUM, O(smtp_protocol), "smtp", NULL, "speak SMTP, or LMTP (RFC 2033: LHLO, a reply per recipient after the data)", protocol_choices },
    { "smtp", "rcpts", OPT_RANGE, O(rcpts), "1", NULL, "recipients per message, uniform in MIN-MAX, distinct (at most 64); each is its own ledger entry", recipients },
    { "smtp", "rcpts_weights", OPT_STR, O(rcpts_weights), "", NULL, "recipients per message by weight instead of rcpts: '70,20,10' sends 70 % of messages to 1 recipient, 20 % to 2, 10 % to 3 (at most 64 weights)", NULL },
    { "smtp", "think", OPT_DURATION, O(think), "0s", NULL, "pause of a sender between two messages on a connection", NULL },
    { "smtp", "bind", OPT_LIST, O(smtp_bind), NULL, NULL, "local source address for connections, round robin (repeatable)", NULL },
    { "smtp", "pipelining", OPT_ENUM, O(pipelining), "auto", "pipelining", "RFC 2920 command pipelining", pipelining_choices },
    { "smtp", "timeout", OPT_DURATION, O(smtp_timeout), "30s", NULL, "limit on each SMTP phase (connect, each reply)", a_timeout },
    { "smtp", "helo", OPT_STR, O(helo), "mailsoak.test", NULL, "name sent with EHLO", NULL },
    { "smtp", "mail_from", OPT_STR, O(mail_from), "mailsoak@test.local", NULL, "envelope sender", NULL },
    { "smtp", "tls", OPT_ENUM, O(smtp_tls), "none", "smtp-tls", "TLS: none, STARTTLS after EHLO, or implicit from the first byte (SMTPS)", smtp_tls_choices },
    { "smtp", "tls_ca", OPT_STR, O(smtp_tls_ca), "", "smtp-tls-ca", "CA certificate file (or directory) the server's certificate must chain to (empty = system store)", opt_path },
    { "smtp", "tls_verify", OPT_BOOL, O(smtp_tls_verify), "yes", NULL, "verify the server's certificate and its name", NULL },
    { "smtp", "tls_resume", OPT_BOOL, O(smtp_tls_resume), "no", NULL, "resume TLS sessions across connections", NULL },
    { "smtp", "auth", OPT_ENUM, O(smtp_auth), "none", "smtp-auth", "SMTP AUTH mechanism, with each sender's credentials from [users] (auto = best offered)", smtp_auth_choices },
    { "smtp", "retry", OPT_BOOL, O(smtp_retry), "no", "retry", "a 4xx reply to MAIL, RCPT or the end of data defers the message (its recipients) and sends it again after a back-off, as an MTA's queue does; a 5xx is a bounce, never retried", NULL },
    { "smtp", "retry_min", OPT_DURATION, O(retry_min), "5m", NULL, "retry: the first back-off, doubled at each further try (Postfix's minimal_backoff_time)", NULL },
    { "smtp", "retry_max", OPT_DURATION, O(retry_max), "4000s", NULL, "retry: the longest back-off (Postfix's maximal_backoff_time)", NULL },
    { "smtp", "retry_lifetime", OPT_DURATION, O(retry_lifetime), "5d", NULL, "retry: a message still deferred this long after its first try is given up, counted as expired (Postfix's maximal_queue_lifetime)", NULL },

    { "pop3", "target", OPT_LIST, O(pop3_targets), NULL, "pop3", "POP3 server as HOST:PORT", opt_hostport },
    { "pop3", "readers", OPT_COUNT, O(readers), "10", "readers", "concurrent reader sessions: POP3's, or IMAP's drain readers with readers.protocol = imap", sessions },
    { "pop3", "max_per_session", OPT_COUNT, O(max_per_session), "10", "max-per-session", "messages retrieved per session at most", at_least_1 },
    { "pop3", "timeout", OPT_DURATION, O(pop3_timeout), "30s", NULL, "limit on each POP3 phase", a_timeout },
    { "pop3", "start_after", OPT_DURATION, O(start_after), "0s", NULL, "readers begin this long after the senders (lets mail pile up first)", NULL },
    { "pop3", "delete_share", OPT_DOUBLE, O(delete_share), "1", NULL, "share of retrieved messages deleted (the rest stay; rabid's download/delete percentages)", a_share },
    { "pop3", "visit", OPT_ENUM, O(visit_owed), "random", NULL, "classic readers: log in to mailboxes at random (rabid's readers: most logins find nothing), or only to mailboxes owed mail the ledger knows was accepted (owed: the readers come for the mail, and their logins are few)", visit_choices },
    { "pop3", "empty_backoff", OPT_DURATION, O(empty_backoff), "1s", NULL, "readers that go only where mail is owed (the drain, visit = owed): a mailbox owed mail whose visit retrieved none of it (the server still queues it) is not visited again for 50 ms, doubled at each further such visit up to this, reset by a visit that retrieves mail; the sweep and poll_interval's clients keep their own schedules (0 = visit again at once)", an_empty_backoff },
    { "pop3", "poll_interval", OPT_DURATION, O(poll_interval), "0s", "poll-interval", "readers as mail clients: each user checks its mailbox every this long (+- poll_jitter), over the readers' connections, so logins come at poll_users / poll_interval whatever the server's speed (0 = classic readers, one session after another)", NULL },
    { "pop3", "poll_jitter", OPT_DOUBLE, O(poll_jitter), "0.1", NULL, "poll_interval: each check's interval varies uniformly by this share of it", a_share },
    { "pop3", "poll_users", OPT_COUNT, O(poll_users), "0", NULL, "poll_interval: how many users run a mail client, the first N of [users] (0 = all)", NULL },
    { "pop3", "leave", OPT_BOOL, O(pop3_leave), "no", NULL, "leave mail on the server, as POP3 clients may: list by UIDL, retrieve only what this client has not retrieved before, delete after keep_polls checks", NULL },
    { "pop3", "keep_polls", OPT_COUNT, O(keep_polls), "0", NULL, "leave: delete a retrieved message at the Nth check that lists it again (0 = never)", NULL },
    { "pop3", "preview", OPT_BOOL, O(preview), "no", NULL, "before retrieving a message, preview it with TOP n preview_lines, as clients that show headers first do", NULL },
    { "pop3", "preview_lines", OPT_COUNT, O(preview_lines), "0", NULL, "preview: body lines TOP asks for (0 = the headers only)", NULL },
    { "pop3", "bind", OPT_LIST, O(pop3_bind), NULL, NULL, "local source address for connections, round robin (repeatable)", NULL },
    { "pop3", "exclusive", OPT_BOOL, O(exclusive), "yes", NULL, "never open a mailbox another of our readers has open", NULL },
    { "pop3", "delete_foreign", OPT_BOOL, O(delete_foreign), "no", NULL, "delete mail that mailsoak did not send", NULL },
    { "pop3", "tls", OPT_ENUM, O(pop3_tls), "none", "pop3-tls", "TLS: none, STLS after the greeting, or implicit from the first byte (POP3S)", pop3_tls_choices },
    { "pop3", "tls_ca", OPT_STR, O(pop3_tls_ca), "", "pop3-tls-ca", "CA certificate file (or directory) the server's certificate must chain to (empty = system store)", opt_path },
    { "pop3", "tls_verify", OPT_BOOL, O(pop3_tls_verify), "yes", NULL, "verify the server's certificate and its name", NULL },
    { "pop3", "tls_resume", OPT_BOOL, O(pop3_tls_resume), "no", NULL, "resume TLS sessions across connections", NULL },
    { "pop3", "auth", OPT_ENUM, O(pop3_auth), "user", "pop3-auth", "login: USER/PASS, APOP, AUTH PLAIN, or auto (best offered)", pop3_auth_choices },

    { "readers", "protocol", OPT_ENUM, O(reader_protocol), "pop3", "readers-protocol", "what the readers speak: POP3 ([pop3]), or IMAP ([imap], with pop3.readers, max_per_session, visit, empty_backoff, start_after, exclusive and bind as the drain readers' count and habits)", reader_protocol_choices },

    { "imap", "target", OPT_LIST, O(imap_targets), NULL, "imap", "IMAP server as HOST:PORT (readers.protocol = imap)", opt_hostport },
    { "imap", "tls", OPT_ENUM, O(imap_tls), "none", "imap-tls", "TLS: none, STARTTLS after the greeting, or implicit from the first byte (IMAPS, port 993)", smtp_tls_choices },
    { "imap", "tls_ca", OPT_STR, O(imap_tls_ca), "", "imap-tls-ca", "CA certificate file (or directory) the server's certificate must chain to (empty = system store)", opt_path },
    { "imap", "tls_verify", OPT_BOOL, O(imap_tls_verify), "yes", NULL, "verify the server's certificate and its name", NULL },
    { "imap", "auth", OPT_ENUM, O(imap_auth), "login", "imap-auth", "login: LOGIN, AUTHENTICATE PLAIN, or auto (PLAIN when the server offers it)", imap_auth_choices },
    { "imap", "timeout", OPT_DURATION, O(imap_timeout), "30s", NULL, "limit on each IMAP phase (connect, each command's completion)", a_timeout },
    { "imap", "models", OPT_STR, O(imap_models), "drain:100", "imap-models", "the client models by share of the users, NAME:PERCENT,... adding up to 100: drain (pop3.readers sessions retrieve, check and delete what is owed, as POP3 readers do), idle (each of that share of the users holds a connection in IDLE on its INBOX and fetches what an EXISTS announces), poll (each logs in every poll_interval, fetches what is new, deletes it, logs out), webmail (each logs in every poll_interval, fetches the headers of the newest 50 and opens the newest body, deletes nothing: the drain readers read those mailboxes); the drain readers leave idle and poll mailboxes to their clients until the sweep", NULL },
    { "imap", "idle_users", OPT_COUNT, O(imap_idle_users), "0", NULL, "idle model: how many users hold a connection in IDLE, the first of [users] (0 = the idle share of imap.models)", sessions },
    { "imap", "poll_interval", OPT_DURATION, O(imap_poll_interval), "10m", NULL, "poll and webmail models: each client logs in this often, +- 10 % (Thunderbird's check_time)", an_interval },
    { "imap", "delete", OPT_STR, O(imap_delete), "now", NULL, "what a client does with what it fetched: now (flagged deleted and expunged at once), or never (flagged seen and left, as a leave-on-server client: read when its flag is stored, never fetched again by any reader), or a DURATION of run time (flagged seen and left as with never, then flagged deleted and expunged at the first sync or visit after it is that much older than its acceptance, as a client set to delete mail from the server after N days)", NULL },
    { "imap", "idle_renew", OPT_DURATION, O(imap_idle_renew), "29m", NULL, "idle model: an IDLE is ended (DONE) and issued again after this long, before RFC 2177's 30-minute limit", an_interval },
    { "imap", "pipelining", OPT_BOOL, O(imap_pipelining), "yes", NULL, "send a command behind the one in flight where RFC 3501 allows it (SELECT behind LOGIN, UID EXPUNGE behind UID STORE, LOGOUT behind the last): fewer round trips; no: one command at a time", NULL },
    { "imap", "max_literal", OPT_BYTES, O(imap_max_literal), "80M", NULL, "the largest literal (a message's body) a reader accepts; a server's larger one, or one longer than the RFC822.SIZE it gave, ends the session as a protocol error", a_literal },

    { "users", "file", OPT_STR, O(users_file), "", "users", "file of 'address password' lines (rabid's format)", opt_path },
    { "users", "pattern", OPT_STR, O(user_pattern), "user%04d@test.local", NULL, "printf pattern of addresses when no file is given", NULL },
    { "users", "count", OPT_COUNT, O(user_count), "1200", NULL, "number of users made from the pattern", user_count },
    { "users", "password", OPT_SECRET, O(user_password), "", NULL, "password of every pattern user (printf pattern allowed)", NULL },

    { "fill", "messages", OPT_RANGE, O(fill_messages), "0", "fill", "before the window, fill every mailbox with this many messages (uniform in MIN-MAX, from the seed; sizes as [smtp]) through smtp.target, then list every mailbox (UIDL, TOP) to verify the store holds them exactly (for up to run.sweep_timeout, at least 10 minutes); the soak's readers leave them (0 = no fill)", NULL },
    { "fill", "senders", OPT_COUNT, O(fill_senders), "20", NULL, "concurrent SMTP sessions of the fill (as fast as the server takes it; 4xx retried after 1 s to 30 s)", at_least_1 },
    { "fill", "ledger_csv", OPT_STR, O(fill_ledger_csv), "", NULL, "write every filled message (id, mailbox, size, UIDL, outcome: verified, duplicated, missing, unverified) to this CSV file", opt_path },
    { "fill", "from", OPT_STR, O(fill_from), "", "fill-from", "the --json of an earlier --fill-only run: its filled messages are left where they are, as if this run had filled them (no fill of its own)", opt_path },
    { "fill", "only", OPT_BOOL, O(fill_only), "no", "fill-only", "fill and verify, report, and stop: no window (for scripts that soak a filled store several times)", NULL },

    { "server", "pid", OPT_LIST, O(server.pids), NULL, NULL, "PID of a server process to sample (repeatable)", NULL },
    { "server", "pidfile", OPT_LIST, O(server.pidfiles), NULL, NULL, "pid file of a server master process (repeatable)", opt_path },
    { "server", "process", OPT_LIST, O(server.processes), NULL, NULL, "ERE matched against process names as in /proc/PID/comm, e.g. ^master$ (repeatable)", NULL },
    { "server", "sample_interval", OPT_DURATION, O(server.sample_interval), "1s", NULL, "period of server-side samples", an_interval },
    { "server", "walk_interval", OPT_DURATION, O(server.walk_interval), "10s", NULL, "period of the server-side readings that walk directories or page tables: store and mem_pss (0 = every sample)", NULL },
    { "server", "queue_interval", OPT_DURATION, O(server.queue_interval), "1s", NULL, "period of the count of the server's queue (spool_dir), from directory entries only; a queue whose count takes more than 1 % of this is counted less often (0 = every sample)", NULL },
    { "server", "spool_dir", OPT_LIST, O(server.spool_dirs), NULL, NULL, "the server's queue, counted in messages: a queue root (Postfix queue_directory, Exim spool_directory, /var/spool/smtpd, /var/spool/mqueue) or one of its message directories; one that does not exist yet is waited for (repeatable)", opt_path },
    { "server", "spool_format", OPT_STR, O(server.spool_format), "auto", NULL, "auto|postfix|exim|opensmtpd|sendmail|files: how the spool keeps messages (auto recognises each directory)", NULL },
    { "server", "store_dir", OPT_LIST, O(server.store_dirs), NULL, NULL, "mailbox root to count messages and bytes in (repeatable)", opt_path },
    { "server", "store_format", OPT_STR, O(server.store_format), "auto", NULL, "auto|maildir|mbox|sdbox|mdbox", NULL },
    { "server", "log", OPT_LIST, O(server.logs), NULL, NULL, "server log file to watch (repeatable)", opt_path },
    { "server", "log_class", OPT_LIST, O(server.log_classes), NULL, NULL, "'name: ERE' adds a log class or replaces a built-in one; 'name/i: ERE' ignores case, 'name:' removes it", NULL },
    { "server", "log_defaults", OPT_BOOL, O(server.log_defaults), "yes", NULL, "keep the built-in log classes", NULL },
    { "server", "log_examples", OPT_COUNT, O(server.log_examples), "5", NULL, "matching lines kept per log class", examples },
    { "server", "probe", OPT_LIST, O(server.probes), NULL, "probe", "[LABEL=]http://HOST:PORT of a `mailsoak probe` on a server's host, pulled every sample_interval instead of sampling here (repeatable: one per host)", NULL },
    { "server", "probe_token", OPT_SECRET, O(server.probe_token), "", NULL, "token the probes require (their probe.token)", NULL },
    { "server", "database", OPT_SECRET, O(server.database), "", NULL, "the database the server uses, whose own counters (lock waits, deadlocks, connections, errors) are sampled: pgsql:CONNINFO (libpq's keywords or a postgresql:// URI), mysql:KEY=VALUE... (socket, host, port, user, password) or sqlite:PATH (counted from the servers' logs)", NULL },

    { "gate", "integrity", OPT_BOOL, O(gate.integrity), "yes", NULL, "fail the run (exit 4) when mail was lost, duplicated or corrupted, or nothing was sent (with senders) or read (with readers)", NULL },
    { "gate", "settled", OPT_BOOL, O(gate.settled), "yes", NULL, "fail the run (exit 4) when a sweep was needed and did not settle, so no loss could be proven or ruled out", NULL },
    { "gate", "kept_up", OPT_BOOL, O(gate.kept_up), "yes", NULL, "fail the run (exit 4) when the backlog of mail accepted and not yet read grew in the send window by more than capacity.queue_growth of the accepted rate (or its own noise) and the server, not our readers, is why; judged from the end of the first interval after smtp.ramp, with two samples at least", NULL },
    { "gate", "recovery", OPT_DURATION, O(gate.recovery), "0s", "gate-recovery", "fail (exit 5) when, after a spike of smtp.profile (a stage above the one before it, with a lower one after it), the backlog of mail not read and the delivery latency took longer than this to come back to their level before it, or never did in the send window (0 = off)", NULL },
    { "gate", "proven", OPT_DOUBLE, O(gate.proven), "0.99", "gate-proven", "fail the run (exit 4) when less than this share of the accepted mail is proven delivered exactly once (with readers; 0 = off)", a_share },
    { "gate", "preset", OPT_ENUM, O(gate.preset), "integrity", "gate", "the gates a run must pass: integrity (the integrity keys below), specmail2001 (those and SPECmail2001's quality of service: every SMTP, POP3 and IMAP command class answered within 5 s, IMAP IDLE's push (push.exists) within 5 s and delivery within 60 s for 95%, errors under 1%; exit 5), off (none: the verdict is printed, the exit status ignores it)", gate_preset_choices },
    { "gate", "latency", OPT_LIST, O(gate.latency), NULL, "gate-latency", "'CLASS pNN DURATION': fail (exit 5) when that percentile of CLASS is over DURATION; CLASS is a latency (smtp.rcpt, pop3.retr, delivery) or smtp / pop3 / imap for each of its command classes", NULL },
    { "gate", "errors", OPT_DOUBLE, O(gate.errors), "1", "gate-errors", "fail (exit 5) when the errors are more than this share of the session attempts (sessions + errors; 1 = off)", a_share },
    { "gate", "error_classes", OPT_ENUM, O(gate.error_classes), "any", NULL, "allowed: fail (exit 5) on any error class gate.allow does not name; any: classes are not judged", gate_classes_choices },
    { "gate", "allow", OPT_LIST, O(gate.allow), NULL, "gate-allow", "'CLASS: reason': an error class tolerated when error_classes = allowed, and why, shown in the verdict", NULL },

    { "probe", "listen", OPT_STR, O(probe_listen), "127.0.0.1:9470", "listen", "mailsoak probe: serve /metrics and /samples on ADDR:PORT", NULL },
    { "probe", "token", OPT_SECRET, O(probe_token), "", "token", "mailsoak probe: require 'Authorization: Bearer TOKEN' on every request", NULL },
    { "probe", "keep", OPT_DURATION, O(probe_keep), "1h", NULL, "mailsoak probe: how long samples stay available to runs that pull them", NULL },

    { "capacity", "start", OPT_DOUBLE, O(capacity.start), "10", NULL, "mailsoak capacity: the arrival rate of the first step, in msg/s", a_rate },
    { "capacity", "factor", OPT_DOUBLE, O(capacity.factor), "2", NULL, "coarse steps: each rate is the last one times this, upwards while steps pass (downwards while they fail); then bisection", a_factor },
    { "capacity", "max_rate", OPT_DOUBLE, O(capacity.max_rate), "10000", NULL, "the search goes no higher (msg/s)", a_rate },
    { "capacity", "precision", OPT_DOUBLE, O(capacity.precision), "0.05", NULL, "the bisection stops when the lowest failing rate is within this share above the highest passing one", a_precision },
    { "capacity", "ramp", OPT_DURATION, O(capacity.ramp), "30s", NULL, "each step's rise from zero to its rate, before its warm-up and steady window", NULL },
    { "capacity", "warmup", OPT_DURATION, O(capacity.warmup), "1m", NULL, "each step's time at its full rate after the ramp and before the steady window, not judged: the mailboxes fill to the level at which the readers keep up (a mailbox that holds more mail is read in fewer logins) and the server's queues settle, so the window judges the steady state, not the fill", NULL },
    { "capacity", "window", OPT_DURATION, O(capacity.window), "3m", NULL, "each step's steady window, in which its gates are judged: long enough for a growing queue to show (minutes; seconds for tests); a step whose backlog swung within it (grew past the bound in one half, fell in the other) runs again with twice the window, up to four times this", a_window },
    { "capacity", "queue_growth", OPT_DOUBLE, O(capacity.queue_growth), "0.05", NULL, "steady state: the mail accepted and not yet read may grow by at most this share of the accepted rate over the window (accepted = delivered)", a_share },
    { "capacity", "drain", OPT_DURATION, O(capacity.drain), "10m", NULL, "each step's run.drain (it ends once the step's mail is read): an overloaded step delivers its backlog before the next starts; with [server] spool_dir the search also waits, as long, for the queue to empty", NULL },
    { "capacity", "time_limit", OPT_DURATION, O(capacity.time_limit), "3h", NULL, "the whole search's bound: no step starts that would end after it", NULL },
    { "capacity", "confirm", OPT_BOOL, O(capacity.confirm), "yes", NULL, "after the search, confirm at 80 %, 100 % and 120 % of the rate found (SPECmail2001's method)", NULL },
    { "capacity", "confirm_rounds", OPT_COUNT, O(capacity.confirm_rounds), "3", NULL, "confirmations at most: one whose 80 % or 100 % level fails (a staircase's twice) claims again below it (steps: just below the rate that failed, less capacity.precision; a staircase: from its levels below that failure), one whose 120 % step passes (steps only) at that rate", a_rounds },
    { "capacity", "arrivals", OPT_ENUM, O(capacity.arrivals), "exponential", NULL, "the steps' arrivals (smtp.arrivals): exponential (Poisson, as SPECmail2001 prescribes) or constant", arrivals_choices },
    { "capacity", "visit", OPT_ENUM, O(capacity.visit_owed), "owed", NULL, "the runs' pop3.visit: owed (the readers come for the mail the server delivered: they measure it, with few logins of their own, and the backlog is the server's) or random (rabid's readers: their empty logins load the server too, the search changes their number, and their sweep's wait swings the backlog, so levels take longer to decide)", visit_choices },
    { "capacity", "max_senders", OPT_COUNT, O(capacity.max_senders), "2000", NULL, "a step whose arrivals waited for a free sender is run again with twice the senders, up to this many", sessions },
    { "capacity", "max_readers", OPT_COUNT, O(capacity.max_readers), "400", NULL, "a step whose readers left mail in the mailboxes while the backlog grew is run again with as many readers as the rate needs by what each of them read (a quarter more, at most twice as many), up to this many", sessions },
    { "capacity", "method", OPT_ENUM, O(capacity.method), "staircase", NULL, "staircase: a probe (one run of levels doubling from capacity.start until one falls behind), then runs of rising levels with no drain between them, each level judged while it runs by a sequential test of the backlog (kept up, behind, or open at capacity.level: the knee's band) and ended once decided, the capacity what the server delivered at the highest pass below every failure, with the pass probability fitted over every level (docs/capacity.md); steps: a run per rate, each a ramp, a warm-up and a steady window judged on its own (capacity.ramp, warmup, window)", capacity_methods },
    { "capacity", "level", OPT_DURATION, O(capacity.level), "60s", NULL, "capacity.method = staircase: each level's time at its rate, the sequential test's cap (a level neither kept up nor behind by then is open); the probe's levels at most as long, the confirmation's levels twice as long", a_level },
    { "capacity", "step", OPT_DOUBLE, O(capacity.step), "0.04", NULL, "capacity.method = staircase: each level's rate is the one before it times 1 + this", a_stair_step },
    { "capacity", "dir", OPT_STR, O(capacity.dir), "", NULL, "where each step's result (JSON) and output go (empty: NAME.steps beside run.json, or ./mailsoak-capacity-TIME)", NULL },
    { "capacity", "report", OPT_STR, O(capacity.report), "", NULL, "write the search as an HTML page (offered against delivered rate and latency: the knee; every step) to this file", NULL },
    { NULL, NULL, 0, 0, NULL, NULL, NULL, NULL },
};

void config_help(FILE *f)
{
    opts_help(f, config_opts);
}

static int bare_flag(void *base, const char *arg)
{
    if (strcmp(arg, "--no-check"))
        return 0;
    ((struct config *)base)->check = 0;
    return 1;
}

int config_from_words(void *cfg, int argc, char **argv, void (*usage_fn)(FILE *f))
{
    const struct opts_cli cli = { .prog = "mailsoak", .usage = usage_fn, .bare = bare_flag };
    memset(cfg, 0, sizeof(struct config));
    int rc = opts_from_args(config_opts, cfg, argc, argv, &cli);
    struct config *c = cfg;
    if (rc == 0 && c->profile.n) {
        /* the profile is the send window's schedule: its sum is the duration, its
         * highest stage the rate every paced figure is read against, no ramp */
        c->duration = rate_stages_total_ns(&c->profile);
        c->ramp = 0;
        c->rate = 0;
        for (unsigned i = 0; i < c->profile.n; i++)
            if (c->profile.rate[i] > c->rate)
                c->rate = c->profile.rate[i];
    }
    return rc;
}

const char *const imap_model_names[IMAP_MODELS] = { "drain", "idle", "poll", "webmail" };

int imap_models_parse(const char *s, unsigned share[IMAP_MODELS], char *err, size_t errlen)
{
    unsigned total = 0;
    memset(share, 0, IMAP_MODELS * sizeof *share);
    while (*s) {
        size_t nl = strcspn(s, ":,");
        int m = IMAP_MODELS;
        for (int k = 0; k < IMAP_MODELS; k++)
            if (strlen(imap_model_names[k]) == nl && !strncmp(s, imap_model_names[k], nl))
                m = k;
        if (m == IMAP_MODELS || s[nl] != ':') {
            snprintf(err, errlen, "'%.*s' is not NAME:PERCENT with NAME one of drain|idle|poll|webmail", (int)(nl < 40 ? nl : 40), s);
            return -1;
        }
        s += nl + 1;
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        if (end == s || v > 100 || (*end && *end != ',') || share[m]) {
            snprintf(err, errlen, "%s: a percent from 0 to 100, each model once", imap_model_names[m]);
            return -1;
        }
        share[m] = (unsigned)v;
        total += (unsigned)v;
        s = *end ? end + 1 : end;
    }
    if (total != 100) {
        snprintf(err, errlen, "the shares add up to %u, not 100", total);
        return -1;
    }
    return 0;
}

void imap_model_users(const struct config *cfg, size_t nusers, size_t n[IMAP_MODELS])
{
    unsigned share[IMAP_MODELS];
    char err[160];
    memset(n, 0, IMAP_MODELS * sizeof *n);
    if (cfg->reader_protocol != READERS_IMAP || imap_models_parse(cfg->imap_models, share, err, sizeof err) < 0)
        return;
    size_t left = nusers;
    for (int m = IMAP_IDLE; m < IMAP_MODELS; m++) {
        size_t k = m == IMAP_IDLE && cfg->imap_idle_users && share[m] ? (size_t)cfg->imap_idle_users
                                                                       : nusers * share[m] / 100;
        n[m] = k < left ? k : left;
        left -= n[m];
    }
    n[IMAP_DRAIN] = left;
}

size_t imap_idle_users(const struct config *cfg, size_t nusers)
{
    size_t n[IMAP_MODELS];
    imap_model_users(cfg, nusers, n);
    return n[IMAP_IDLE] + n[IMAP_POLL] + n[IMAP_WEBMAIL];
}

int imap_delete_parse(const char *s, uint64_t *after_ns)
{
    const char *why;
    if (!strcmp(s, "now")) {
        *after_ns = 0;
        return 0;
    }
    if (!strcmp(s, "never")) {
        *after_ns = IMAP_DELETE_NEVER;
        return 0;
    }
    return parse_duration_ns(s, after_ns, &why);
}

/* readers.protocol = imap: its target, its models (those not built yet refused,
 * never ignored), and the POP3 readers' habits it does not have. */
static int check_imap(const struct config *cfg, char *err, size_t errlen)
{
    unsigned share[IMAP_MODELS];
    char why[160];
    uint64_t after;
    if (imap_models_parse(cfg->imap_models, share, why, sizeof why) < 0) {
        snprintf(err, errlen, "imap.models: %s", why);
        return -1;
    }
    if (imap_delete_parse(cfg->imap_delete, &after) < 0) {
        snprintf(err, errlen, "imap.delete: '%s' is not now, never or a duration", cfg->imap_delete);
        return -1;
    }
    if (cfg->reader_protocol != READERS_IMAP)
        return 0;
    if (after && !cfg->exclusive) {
        snprintf(err, errlen, "imap.delete = %s: needs pop3.exclusive = yes (a client's memory of its mailbox is "
                              "its own)", cfg->imap_delete);
        return -1;
    }
    if ((share[IMAP_IDLE] || share[IMAP_POLL]) && !cfg->exclusive) {
        snprintf(err, errlen, "imap.models: the idle and poll models need pop3.exclusive = yes (a drain reader in "
                              "such a client's mailbox would fetch its mail twice)");
        return -1;
    }
    if (!cfg->imap_targets.n && cfg->readers) {
        snprintf(err, errlen, "no IMAP target: set --imap HOST:PORT (or imap.target), or --readers 0");
        return -1;
    }
    static const char *const pop3_only[] = { "fill.messages", "fill.from", "pop3.leave", "pop3.poll_interval",
                                             "pop3.preview", "pop3.delete_share", "pop3.delete_foreign" };
    const int used[] = { cfg->fill_messages.hi > 0, cfg->fill_from[0] != 0, cfg->pop3_leave, cfg->poll_interval > 0,
                         cfg->preview, cfg->delete_share < 1, cfg->delete_foreign };
    for (size_t k = 0; k < sizeof used / sizeof used[0]; k++)
        if (used[k]) {
            snprintf(err, errlen, "%s: POP3 readers only; readers.protocol = imap has no such client yet", pop3_only[k]);
            return -1;
        }
    return 0;
}

int config_check(const struct config *cfg, char *err, size_t errlen)
{
    if (!cfg->smtp_targets.n && cfg->senders) {
        snprintf(err, errlen, "no SMTP target: set --smtp HOST:PORT (or smtp.target), or --senders 0");
        return -1;
    }
    if (check_imap(cfg, err, errlen) < 0)
        return -1;
    if (!cfg->pop3_targets.n && cfg->readers && cfg->reader_protocol == READERS_POP3) {
        snprintf(err, errlen, "no POP3 target: set --pop3 HOST:PORT (or pop3.target), or --readers 0");
        return -1;
    }
    if (cfg->fill_messages.hi && (!cfg->pop3_targets.n || !cfg->smtp_targets.n)) {
        snprintf(err, errlen, "fill.messages: the fill needs an SMTP target to fill through and a POP3 target to verify by");
        return -1;
    }
    if (cfg->fill_messages.hi && !cfg->exclusive) {
        snprintf(err, errlen, "fill.messages: needs pop3.exclusive = yes (readers keep each mailbox's filled messages apart)");
        return -1;
    }
    if (cfg->pop3_leave && !cfg->exclusive) {
        snprintf(err, errlen, "pop3.leave: needs pop3.exclusive = yes (a client's memory of its mailbox is its own)");
        return -1;
    }
    if (cfg->fill_from[0] && cfg->fill_messages.hi) {
        snprintf(err, errlen, "fill.from: a run fills (fill.messages) or reuses a fill (fill.from), not both");
        return -1;
    }
    if (cfg->fill_only && !cfg->fill_messages.hi) {
        snprintf(err, errlen, "fill.only: nothing to fill: set fill.messages");
        return -1;
    }
    for (int p = 0; p < 3; p++) {
        static const char *const proto[] = { "smtp", "pop3", "imap" };
        int mode = p == 2 ? cfg->imap_tls : p ? cfg->pop3_tls : cfg->smtp_tls;
        if (mode == TLSM_NONE)
            continue;
        char why[300];
        struct tls_ctx *t = tls_client_ctx(p == 2 ? cfg->imap_tls_ca : p ? cfg->pop3_tls_ca : cfg->smtp_tls_ca,
                                           p == 2 ? cfg->imap_tls_verify : p ? cfg->pop3_tls_verify : cfg->smtp_tls_verify,
                                           0, why, sizeof why);
        if (!t) {
            snprintf(err, errlen, "%s.tls_ca: %s", proto[p], why);
            return -1;
        }
        tls_ctx_free(t);
    }
    return 0;
}

/* A file a run will write (key, its flag or NULL, the path): its folder must exist and
 * take a new file, checked before any load so that a typo costs no soak. */
static int output_ok(const char *key, const char *flag, const char *path, char *err, size_t errlen)
{
    if (!path || !*path)
        return 0;
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    char name[80];
    snprintf(name, sizeof name, flag ? "%s (--%s)" : "%s", key, flag);
    struct stat st;
    if (stat(dir, &st) < 0) {
        snprintf(err, errlen, "%s: %s: the folder %s %s", name, path, dir,
                 errno == ENOENT ? "does not exist (make it first)" : strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: %s: %s is not a folder", name, path, dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) < 0) {
        snprintf(err, errlen, "%s: %s: cannot write in %s: %s", name, path, dir, strerror(errno));
        return -1;
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: %s is a folder: name a file", name, path);
        return -1;
    }
    return 0;
}

int config_check_outputs(const struct config *cfg, char *err, size_t errlen)
{
    if (output_ok("run.json", "json", cfg->json, err, errlen) < 0 ||
        output_ok("run.ledger_csv", "ledger-csv", cfg->ledger_csv, err, errlen) < 0 ||
        output_ok("fill.ledger_csv", NULL, cfg->fill_ledger_csv, err, errlen) < 0 ||
        output_ok("capacity.report", NULL, cfg->capacity.report, err, errlen) < 0)
        return -1;
    return 0;
}

int config_check_limits(const struct config *cfg, char *err, size_t errlen)
{
    if (config_check_outputs(cfg, err, errlen) < 0)
        return -1;
    /* Read once here, so that a missing or bad file is the same error, exit 2,
     * whether the demo, the preflight or the run would have read it first. */
    size_t nusers = (size_t)cfg->user_count;
    if (cfg->users_file && cfg->users_file[0]) {
        struct users u;
        char why[400];
        if (users_load_file(&u, cfg->users_file, why, sizeof why) < 0) {
            snprintf(err, errlen, "users.file: %s", why);
            return -1;
        }
        nusers = u.n;
        users_free(&u);
    }
    struct rlimit rl;
    /* the idle model's clients hold a connection each besides the readers */
    uint64_t readers = cfg->readers + imap_idle_users(cfg, nusers);
    uint64_t need = cfg->senders + readers + CONFIG_FD_RESERVE;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && need > rl.rlim_max) {
        snprintf(err, errlen,
                 "smtp.senders + pop3.readers (+ imap's idle users): %llu sessions need %llu file descriptors (one each, and %d "
                 "more), and this process may open at most %llu (the hard RLIMIT_NOFILE: ulimit -Hn; raise it, "
                 "or run fewer sessions per host with --shard)",
                 (unsigned long long)(cfg->senders + readers), (unsigned long long)need, CONFIG_FD_RESERVE,
                 (unsigned long long)rl.rlim_max);
        return -1;
    }
    return 0;
}

int config_from_args(struct config *cfg, int argc, char **argv)
{
    return config_from_words(cfg, argc, argv, config_help);
}

void config_free(struct config *cfg)
{
    opts_free(config_opts, cfg);
}
