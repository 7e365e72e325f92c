/* stats: what one worker counts — totals, latency histograms per command and the
 * error classes with their first examples. Only the owning worker writes; the
 * controller reads published snapshots (see worker.h), then merges them. */
#ifndef MS_STATS_H
#define MS_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/hist.h"

enum lat {
    LAT_SMTP_CONNECT, LAT_SMTP_TLS, LAT_SMTP_BANNER, LAT_SMTP_EHLO, LAT_SMTP_AUTH, LAT_SMTP_MAIL,
    LAT_SMTP_RCPT, LAT_SMTP_DATA, LAT_SMTP_EOD, LAT_SMTP_QUIT, LAT_SMTP_MESSAGE,
    LAT_POP3_CONNECT, LAT_POP3_TLS, LAT_POP3_BANNER, LAT_POP3_USER, LAT_POP3_PASS, LAT_POP3_STAT,
    LAT_POP3_LIST, LAT_POP3_RETR, LAT_POP3_DELE, LAT_POP3_QUIT, LAT_POP3_TOP,
    LAT_DELIVERY,
    /* pop3.poll_interval and pop3.empty_backoff: of a delivery, the part the
     * server surely took (the mailbox was listed after the acceptance without it),
     * the rest (at most a poll interval, or the back-off's cap, once the mailbox was
     * listed empty: polling, or the server), and how late polls began */
    LAT_DELIVERY_SERVER, LAT_DELIVERY_POLL, LAT_POLL_LAG,
    /* readers.protocol = imap: per command (imap.list is the UID FETCH of the
     * UIDs, IMAP's LIST of POP3; imap.fetch a fetch of bodies) */
    LAT_IMAP_CONNECT, LAT_IMAP_TLS, LAT_IMAP_BANNER, LAT_IMAP_CAPABILITY, LAT_IMAP_LOGIN, LAT_IMAP_SELECT,
    LAT_IMAP_LIST, LAT_IMAP_FETCH, LAT_IMAP_STORE, LAT_IMAP_EXPUNGE, LAT_IMAP_LOGOUT,
    /* the idle model: IDLE to its "+"; per message, from its acceptance to the
     * EXISTS that announced it (the server's push) and to its body fetched (what
     * a user sees) */
    LAT_IMAP_IDLE, LAT_PUSH_EXISTS, LAT_PUSH_FETCHED,
    LAT_IMAP_HEADERS,                /* the webmail model: the headers of the newest 50 */
    LAT_COUNT
};
extern const char *const lat_names[LAT_COUNT];

struct counters {
    uint64_t sent, read, rejected, errors;
    uint64_t smtp_sessions, pop3_sessions, conns_open;
    uint64_t foreign, stale, corrupt_unattributed, peeked;
    uint64_t tls_handshakes, tls_resumed;
    uint64_t bytes_out, bytes_in;
    /* Paced arrivals taken, and those started more than smtp.late_after after their
     * time: with every sender busy (late_busy), or by a sender that waited for it but
     * whose loop woke late (late_engine). Both are the tester's, not the server's. */
    uint64_t arrivals, late_busy, late_engine;
    /* smtp.retry: recipients deferred (a 4xx, or no answer, sent again later);
     * refused with a 5xx (bounced, never retried); given up past retry_lifetime;
     * not kept because the worker's queue was full */
    uint64_t deferrals, bounced, retry_expired, retry_dropped;
    uint64_t fill_unlisted;          /* filled messages the fill's verification had not listed */
    /* pop3.poll_interval: checks begun in the window, those begun over a second
     * late (every reader busy: the tester's limit), and their logins */
    uint64_t polls, polls_late, poll_logins;
    /* Reader visits that listed more than they retrieve (pop3.max_per_session):
     * mail the store holds and the readers left for later. */
    uint64_t left_behind;
    /* Reader visits that retrieved none of the mail their mailbox was owed: the
     * server had not delivered it yet (the readers waited for the server). */
    uint64_t empty_visits;
    /* Reader visits that retrieved mail: it waited in the mailbox for a reader. */
    uint64_t full_visits;
    /* The IMAP idle model's syncs: each a reader visit (its session lasts the
     * run), beside pop3_sessions' one a session (docs/imap.md). */
    uint64_t idle_syncs;
    /* IMAP readers: the commands sent, and the round trips they took (a command
     * sent with none in flight; imap.pipelining sends others behind it) */
    uint64_t imap_commands, imap_rounds;
    /* SMTP sessions that pipelined MAIL, RCPT and DATA (the table says those three
     * latencies are one group's) */
    uint64_t smtp_pipelined;
    /* the IMAP idle model: messages fetched whose EXISTS came while their client
     * was busy (fetching, logging in), or before their sender saw the acceptance
     * (the tester's, not the server's push), and
     * those no EXISTS announced, found when an IDLE was renewed (the server's) */
    uint64_t push_busy, push_missed;
    /* Our messages with an empty body served as one empty line (Dovecot's mbox): a
     * known harmless transformation, delivered unless run.strict_bodies */
    uint64_t empty_body_as_line;
};

#define ERR_CLASSES_MAX 192
#define ERR_NAME_LEN 40
#define ERR_EXAMPLES_MAX 10
#define ERR_EXAMPLE_LEN 160

struct err_count {
    char name[ERR_NAME_LEN];
    uint64_t count;
};

struct err_examples {
    unsigned n;
    char text[ERR_EXAMPLES_MAX][ERR_EXAMPLE_LEN];
};

struct wstats {
    struct counters c;
    struct hist total[LAT_COUNT], cur[LAT_COUNT];
    unsigned nerr;
    struct err_count err[ERR_CLASSES_MAX];
    struct err_examples ex[ERR_CLASSES_MAX];
    unsigned max_examples;
    struct err_examples corrupt;     /* what differed, for the first corrupted messages */
    uint64_t corrupt_entry[ERR_EXAMPLES_MAX];   /* the ledger entry of each of corrupt's */
};

/* What a worker publishes at an interval boundary: cumulative counters, this
 * interval's histograms. */
struct wsnap {
    struct counters c;
    struct hist lat[LAT_COUNT];
    unsigned nerr;
    struct err_count err[ERR_CLASSES_MAX];
};

void stats_init(struct wstats *s, unsigned max_examples);
static inline void stats_lat(struct wstats *s, enum lat k, uint64_t ns)
{
    hist_record(&s->total[k], ns);
    hist_record(&s->cur[k], ns);
}
/* Counts one error of class name (see the taxonomy in README) with the server's
 * text as its example (NULL: none), kept made printable (lib/printable.h). */
void stats_error(struct wstats *s, const char *name, const char *example);
/* The same with the text as len bytes, which may hold NUL bytes. */
void stats_error_text(struct wstats *s, const char *name, const char *text, size_t len);
void stats_snapshot(struct wstats *s, struct wsnap *out);
/* Adds a formatted example, made printable, if fewer than max are kept. */
void stats_example(struct err_examples *e, unsigned max, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Merging across workers: error tables by name. errs_add returns the class's slot. */
unsigned errs_add(struct err_count *dst, unsigned *ndst, const char *name, uint64_t count);
void errs_merge(struct err_count *dst, unsigned *ndst, const struct err_count *src, unsigned nsrc);

#endif
