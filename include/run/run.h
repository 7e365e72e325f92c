/* run: the controller of `mailsoak run` — setup, the run window (send, drain,
 * sweep), the interval line, signals — and the result it hands to the writers. */
#ifndef MS_RUN_H
#define MS_RUN_H

#include <jansson.h>

#include "analyse/results.h"
#include "engine/ladder.h"
#include "engine/ledger.h"
#include "engine/stats.h"
#include "engine/worker.h"
#include "result/verdict_output.h"
#include "verdict/gate.h"
#include "verdict/recovery.h"
#include "verdict/verdict.h"

struct sources;
struct trail;
struct trails;

#define LOST_EXAMPLES_MAX 10

/* The messages not delivered exactly once that the result shows one by one (at most
 * run.error_examples of each kind), each with the server's evidence (examples.c). */
enum example_kind { EX_LOST, EX_DUPLICATED, EX_CORRUPTED, EX_LATE, EX_KINDS };

struct message_example {
    uint64_t seq;                    /* the message's id (its first recipient's entry) */
    uint64_t entry;                  /* this recipient's ledger entry */
    uint32_t user;
    uint32_t accepted_ms, read_ms;   /* since the start: accepted; its mailbox last read in full */
    unsigned reads;                  /* retrievals (2 and more: duplicated) */
    const char *queue_id;            /* the server's id ("" = none), in the ledger */
    const struct trail *trail;       /* its lines in the server's logs; NULL: no log was read */
    const char *differs;             /* corrupted: what differed (a text of corrupt), or NULL */
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
    const char *from;                /* read from this file (fill.from), or NULL: this run filled */
};

/* The size ladder's result (ladder_result.c): each rung's messages, from the ledger
 * and the senders' counts. */
struct ladder_rung_result {
    uint64_t size, tried, refused, accepted, delivered, lost, pending, duplicated, corrupted;
    const char *reply;               /* the first refusal ("" when none) */
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

struct run_result {
    const struct config *cfg;
    const struct run *run;
    char start_time[32];             /* ISO 8601 UTC */
    double duration_s, elapsed_s;    /* send window; whole run */
    int interrupted;
    struct counters c;
    struct hist lat[LAT_COUNT];
    unsigned nerr;
    struct err_count err[ERR_CLASSES_MAX];
    struct err_examples ex[ERR_CLASSES_MAX];
    struct err_examples corrupt;
    uint64_t corrupt_entry[ERR_EXAMPLES_MAX];   /* the ledger entry of each of corrupt's */
    struct ledger_outcome lo;
    json_t *timeline;                /* interval entries (result/interval_output.h) */
    struct send_end send_end;        /* the last interval of the send phase */
    struct sources *sources;         /* the server side: local collector and/or probes */
    int settled;                     /* a sweep pass began after the server settled */
    unsigned sweep_passes;
    uint64_t retry_left;             /* smtp.retry: deferred messages still queued at the end */
    const struct fill_summary *fill; /* the fill before this window, or NULL */
    unsigned nexamples[EX_KINDS];
    struct message_example examples[EX_KINDS][LOST_EXAMPLES_MAX];
    struct trails *trails;           /* the examples' trails (verdict/trail.h), or NULL */
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
    struct gates gates;              /* [gate], made at setup */
    struct gate_judgement judged;
    struct run_verdict verdict;
    int exit_status;                 /* what the run exits with (lib/exitcodes.h) */
};

/* The verdict's writers' view of a run's result (result/verdict_output.h). */
static inline struct verdict_view run_verdict_view(const struct run_result *r)
{
    return (struct verdict_view){ .cfg = r->cfg, .verdict = &r->verdict, .judged = &r->judged, .lo = &r->lo,
                                  .spikes = r->spikes, .nspikes = r->nspikes, .stage_proof = r->stage_proof,
                                  .nstages = r->nstages, .exit_status = r->exit_status };
}

/* `mailsoak run` once its settings are read (cmd/cmd_run.c): the demo's server when no
 * target is set (its run shortened to 60 s when demo_duration), the preflight when
 * run.check, then the soak; SIGINT and SIGTERM end it in order. The exit status. */
int run_configured(struct config *cfg, int demo_duration);

#endif
