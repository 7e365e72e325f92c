/* run_result: a run's result as plain data (run_result.c), copied out of the live
 * run when it ends (run/run.c) and handed to the writers (run_table.h, run_json.h,
 * ledger_csv.h): the counts, the ledger's outcomes, the examples with copies of
 * their trails, the server's side, the size ladder and the judgement. It points
 * into nothing of the live run (only into the frozen settings); what it owns,
 * run_result_free releases. Beside it the helpers both writers share. */
#ifndef MS_RESULT_RUN_RESULT_H
#define MS_RESULT_RUN_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "engine/ladder.h"
#include "engine/ledger.h"
#include "engine/msg.h"
#include "engine/stats.h"
#include "probe/sample.h"
#include "result/verdict_output.h"
#include "settings/config.h"
#include "verdict/gate.h"
#include "verdict/recovery.h"
#include "verdict/trail.h"
#include "verdict/verdict.h"

#define LOST_EXAMPLES_MAX 10

/* The messages not delivered exactly once that the result shows one by one (at most
 * run.error_examples of each kind), each with the server's evidence. */
enum example_kind { EX_LOST, EX_DUPLICATED, EX_CORRUPTED, EX_LATE, EX_KINDS };
extern const char *const example_kind_names[EX_KINDS];

/* What the writers show of a message's trail (verdict/trail.h): its cause, the line
 * that shows it, the queue it was last put in, the lines kept (head then tail,
 * printable already) and how many the logs held. */
struct example_trail {
    enum trail_cause cause;
    char *cause_line;                /* or NULL */
    char last_queue[16], left[16];
    uint64_t nlines, skipped;        /* lines that named it; those between head and tail */
    unsigned n;
    char *lines[TRAIL_HEAD + TRAIL_TAIL];
};

struct message_example {
    uint64_t seq;                    /* the message's id (its first recipient's entry) */
    uint64_t entry;                  /* this recipient's ledger entry */
    char *mailbox;                   /* its recipient's address */
    uint32_t accepted_ms, read_ms;   /* since the start: accepted; its mailbox last read in full */
    unsigned reads;                  /* retrievals (2 and more: duplicated) */
    char *queue_id;                  /* the server's id ("" = none) */
    int has_trail;                   /* 0: no log was read */
    struct example_trail trail;
    char *differs;                   /* corrupted: what differed, or NULL */
    int compacted;                   /* found again after the ledger compacted it: no time, size or id kept */
};

/* The fill before the window (fill.messages): what it sent, and what the listing
 * of every mailbox afterwards proved, for the soak's table and JSON. */
struct fill_summary {
    int on;
    char run_id[MSG_RUNID_LEN + 1];
    uint64_t mailboxes, planned, accepted, verified, duplicated, missing, unverified, bytes;
    uint64_t deferrals, errors, foreign;
    double elapsed_s;
    int settled;                     /* a verification pass began after the server settled */
    const char *from;                /* read from this file (fill.from, the settings'), or NULL: this run filled */
};

/* The size ladder's result: each rung's messages, from the ledger and the senders'
 * counts. */
struct ladder_rung_result {
    uint64_t size, tried, refused, accepted, delivered, lost, pending, duplicated, corrupted;
    char reply[160];                 /* the first refusal ("" when none) */
};
struct ladder_result {
    int on;
    uint64_t advertised;             /* the server's SIZE, 0 when it named none */
    unsigned n;
    struct ladder_rung_result v[LADDER_RUNGS_MAX];
    int largest;                     /* the largest rung all of whose messages came back intact, -1 */
    unsigned failures;               /* rungs whose accepted messages were lost or corrupted */
};

/* The end of the send phase, as its last interval saw it: the mail accepted and
 * not yet read, and the server's queue (-1: not counted). */
struct send_end {
    int has;
    uint64_t unread;
    long long queued;
};

/* One source of the server's side (the local collector, or a probe pulled over
 * HTTP): its label, the pull's figures (a probe), its summary alone, and when its
 * first and last samples were taken on the run's clock. */
struct run_source {
    char *label;
    int remote;
    char *url, *host, *last_error;   /* last_error NULL: none */
    double clock_offset_ms, clock_error_ms;
    uint64_t pulls, pull_errors, restarts, gaps;
    struct probe_summary summary;
    double window_s[2];
};

/* The server's side: the sources added up, their events in time order, and each
 * source alone; by_source when the file names them ("servers": probes, or several
 * sources). */
struct run_server {
    struct probe_summary total;
    struct probe_events events;
    size_t n;
    struct run_source *v;
    int by_source;
};

struct run_result {
    const struct config *cfg;        /* the frozen settings */
    char run_id[MSG_RUNID_LEN + 1];
    uint64_t seed;
    uint64_t start_unix_ms;          /* the timeline's t counts from here */
    char host[256];                  /* the tester's host */
    char start_time[32];             /* ISO 8601 UTC */
    double duration_s, elapsed_s;    /* send window; whole run */
    int interrupted;
    size_t users, users_total;       /* this run's mailboxes; the workload's before sharding */
    size_t imap_users[IMAP_MODELS];  /* imap.models: each model's users */
    struct counters c;
    struct hist lat[LAT_COUNT];
    unsigned nerr;
    struct err_count err[ERR_CLASSES_MAX];
    struct err_examples ex[ERR_CLASSES_MAX];
    struct err_examples corrupt;
    uint64_t corrupt_entry[ERR_EXAMPLES_MAX];   /* the ledger entry of each of corrupt's */
    struct ledger_outcome lo;
    int swept;                       /* a sweep ran (settled means something) */
    uint64_t ledger_compacted, ledger_revived;  /* entries compacted; of those, found again */
    json_t *timeline;                /* interval entries (result/interval_output.h), owned */
    struct send_end send_end;        /* the last interval of the send phase */
    struct run_server server;        /* the server side: local collector and/or probes */
    int settled;                     /* a sweep pass began after the server settled */
    unsigned sweep_passes;
    uint64_t retry_left;             /* smtp.retry: deferred messages still queued at the end */
    struct fill_summary fill;        /* the fill before this window (fill.on), or zero */
    unsigned nexamples[EX_KINDS];
    struct message_example examples[EX_KINDS][LOST_EXAMPLES_MAX];
    struct ladder_result ladder;     /* smtp.size_dist = ladder */
    /* With a rate: arrivals due before the send phase ended that no sender started
     * (owed), and of those the ones due more than smtp.late_after before it (held:
     * the tester's backlog; the others were not late yet). */
    uint64_t arrivals_owed, arrivals_held;
    struct verdict_window window;    /* the send window, for the verdict */
    unsigned nspikes;                /* smtp.profile's spikes and their recovery (verdict/recovery.h) */
    struct recovery_spike spikes[RECOVERY_MAX];
    /* smtp.profile: the ledger's outcomes of the mail accepted during each stage,
     * so a capacity level is judged on its own mail (capacity/level.h) */
    unsigned nstages;
    struct recovery_proof stage_proof[RATE_STAGES_MAX];
    double stage_span[RATE_STAGES_MAX][2];   /* each stage's span as it ran, s since the start */
    struct gates gates;              /* [gate], made at setup */
    struct gate_judgement judged;
    struct run_verdict verdict;
    int exit_status;                 /* what the run exits with (lib/exitcodes.h) */
};

/* What r owns: the examples' copies, the server side, the timeline, the judgement. */
void run_result_free(struct run_result *r);
/* The server side alone (before it is taken again). */
void run_result_free_server(struct run_result *r);

/* The verdict's writers' view of a run's result (result/verdict_output.h). */
static inline struct verdict_view run_verdict_view(const struct run_result *r)
{
    return (struct verdict_view){ .cfg = r->cfg, .verdict = &r->verdict, .judged = &r->judged, .lo = &r->lo,
                                  .spikes = r->spikes, .nspikes = r->nspikes, .stage_proof = r->stage_proof,
                                  .stage_span = r->stage_span, .nstages = r->nstages, .exit_status = r->exit_status };
}

/* The run's name in tables, reports and metrics: run.label, else the store format. */
const char *run_label(const struct config *cfg);
/* A time of the run (ms since its start) as ISO 8601 UTC with milliseconds. */
const char *run_time(const struct run_result *r, uint32_t at_ms, char *buf, size_t n);
/* The ids a user can look for: ours (X-Mailsoak-Id) and the Message-ID header,
 * which servers log (Postfix: message-id=<...>). */
void msg_ids(const struct run_result *r, uint64_t seq, char *id, size_t idn, char *mid, size_t midn);
/* The example of ledger entry `entry` that has a trail, or NULL. */
const struct message_example *run_example_of(const struct run_result *r, uint64_t entry);

/* pop3.poll_interval: the mail clients' login rate, the profile's and the one
 * achieved in the window, and whether the readers kept up (judge_readers_late). */
struct poll_view {
    uint64_t users;
    double interval_s, target, achieved;
    int tester_limited;
};
/* 0 without pop3.poll_interval. */
int poll_view(const struct run_result *r, struct poll_view *v);

#endif
