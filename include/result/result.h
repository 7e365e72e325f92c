/* result: a result file of `mailsoak run` and `mailsoak merge` ("format":
 * "mailsoak-result") read into plain data: the one reader of the format, with its
 * version check. Readers use the typed fields; nothing outside result/ reads the
 * file by key (scripts/check-tree). A figure the file does not hold reads as 0 and
 * its has_ flag (where there is one) as 0; result_complete() says which of the
 * keys every run writes is missing. */
#ifndef MS_RESULT_RESULT_H
#define MS_RESULT_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "engine/ledger.h"
#include "engine/stats.h"
#include "lib/hist.h"
#include "result/display.h"
#include "settings/config.h"

/* The file's name and version, in "format" and "format_version". Written by
 * `mailsoak run` (result/run_json.c) and `mailsoak merge`; a change that old readers
 * would misread takes a new version, and a reader refuses a version it does not
 * know. */
#define RESULT_FORMAT "mailsoak-result"
#define RESULT_FORMAT_VERSION 1

/* A latency object's figures as written (result/latency.h), in ms; p95 is NAN
 * in a file written before it carried one. */
struct result_latency {
    int has;
    uint64_t count;
    double p50, p90, p95, p99, p999, min, max, mean;
};

/* One timeline entry: an interval of the run (result/interval_output.c), or of a
 * merged load's lined-up shards. */
struct result_interval {
    int has_t;
    double t;                        /* s since the start: the interval's end */
    char phase[24];                  /* "send", "drain", "sweep", a merge's "send+drain"; "" absent */
    /* the interval's counts: sent, read, errors, smtp_sessions, pop3_sessions,
     * arrivals, late_busy, late_engine, left_behind, empty_visits, full_visits */
    struct counters c;
    int has_arrivals;
    int has_unread;
    int64_t unread;                  /* accepted and not yet read, at the end */
    /* the server's side ("server"), where it was counted */
    int has_spool, has_store;
    double spool, store_messages;
    unsigned nerr;
    struct err_count *err;           /* errors by class, owned */
    struct result_latency lat[LAT_COUNT];
};

/* One stage of smtp.profile ("verdict"'s "stages"): its span and the ledger's
 * outcomes of the mail it accepted. */
struct result_stage {
    int has_accepted;
    double t0, t1, rate;
    uint64_t accepted, delivered, lost, duplicated, corrupted, pending;
};

struct result {
    char *path;                      /* NULL for a document not read from a file */
    char *label;                     /* the file's label, or its base name when it has none;
                                        printable (lib/printable.h): it is shown as it is */
    /* The parsed file (owned) and its parts (borrowed; NULL when absent): for
     * result/'s own readers and the merge, which edits the document; every other
     * folder reads the typed fields below. */
    json_t *root;
    json_t *summary, *workload, *config, *timeline, *events;

    /* the envelope */
    int64_t format_version;
    char *version, *run_id, *start_time;
    uint64_t seed;
    double duration_s;               /* the send window */
    double elapsed_s;                /* the whole run */
    int interrupted;
    /* "workload" */
    uint64_t senders, readers, messages;
    double rate;                     /* smtp.rate (0: as fast as the senders go) */
    /* "summary" */
    struct counters c;               /* sent, read, errors, rejected, foreign, stale, peeked, unattributed,
                                        empty_body_as_line, tls_handshakes, tls_resumed, deferrals, bounced,
                                        push_busy, push_missed */
    struct ledger_outcome lo;        /* delivered, duplicated, corrupted, lost, pending (by reason),
                                        late, unconfirmed; accepted = sent */
    int settled;                     /* 1 settled, 0 not, -1 no sweep ran */
    uint64_t sweep_passes;
    int has_arrivals;                /* "arrivals" (a run with smtp.rate) */
    uint64_t due, started, late_busy, late_engine, never_started;
    unsigned nerr;
    struct err_count *err;           /* "errors_by_class", owned */
    struct result_latency lat[LAT_COUNT];
    /* the summary's histograms (LAT_COUNT, owned): a class without a latency
     * object is empty; one whose buckets are missing or do not add up too, and
     * hist_err says why for the first such ("" when none) */
    struct hist *hist;
    char hist_err[240];
    /* "timeline" */
    int has_summary;                 /* "summary" (an object) */
    int has_timeline;
    size_t nintervals;
    struct result_interval *intervals;
    /* "verdict" */
    size_t nstages;
    struct result_stage *stages;     /* owned */
    char missing[64];                /* the first key every run writes that the file lacks, or "" */
    /* what compare and report show, as the file wrote it (result/display.h) */
    struct result_display display;
};

/* The reader's table (result.c): a key by its '/'-separated path from the
 * document's root (or a timeline entry's, a stage's), where in the struct it goes,
 * as what, whether every run writes it, and the offset of its has_ flag (or
 * RESULT_NO_HAS). The round-trip test walks it (tests/unit/test_result_roundtrip.c). */
enum result_field_type {
    RT_COUNT,                        /* uint64_t: an integer above 0, else 0 */
    RT_NUM,                          /* double: a number, else 0 */
    RT_BOOL,                         /* int: 1 for true, else 0 */
    RT_TRI,                          /* int: 1 true, 0 false, -1 neither (null, absent) */
    RT_I64,                          /* int64_t: an integer, else 0 */
    RT_STR,                          /* char *, owned: a string, else NULL */
    RT_PHASE,                        /* char[24]: a string, cut; else "" */
};
#define RESULT_NO_HAS ((size_t)-1)
struct result_field {
    const char *path;
    size_t off;
    enum result_field_type type;
    int required;                    /* every run writes it (result_complete) */
    size_t has;
};
/* The keys of struct result itself, ending with a NULL path. */
const struct result_field *result_field_table(void);

/* Reads a result file: JSON, "format" RESULT_FORMAT, a "format_version" this
 * mailsoak knows (a newer one is refused, naming the file and both versions), the
 * top-level parts of their types. -1 with "path: reason" in err. */
int result_load(struct result *r, const char *path, char *err, size_t errlen);
/* Reads a document already parsed (a merged load before it is written; tests):
 * takes a reference to doc; name stands for its path in messages (NULL: none).
 * No envelope check. 0, or -1 with the reason in err (a part of the wrong type). */
int result_from_json(struct result *r, json_t *doc, const char *name, char *err, size_t errlen);
void result_free(struct result *r);
/* 0 when the file holds every key every run writes (the summary's counts and
 * outcomes, elapsed_s, interrupted, the workload's senders and readers); else -1
 * with "name: no \"summary/lost\"" in err. */
int result_complete(const struct result *r, char *err, size_t errlen);
/* The settings the file's "config" holds that judging it again reads: [gate], the
 * sweep's (for the remedy), and what "kept up" reads (run.interval, smtp.ramp,
 * capacity.queue_growth, server.walk_interval), into cfg (zeroed by the caller,
 * freed with config_free) as the run read them. 0, or -1 (no [gate], a value that
 * is not printable, or one the settings refuse). */
int result_settings(const struct result *r, struct config *cfg);
/* Adds the histograms of timeline entry i to lat (LAT_COUNT of them), for a
 * window added up over its intervals (capacity's steps). 0, or -1 with the reason
 * in err (no buckets: a file of an older mailsoak; buckets that do not hold their
 * count). */
int result_interval_hists(const struct result *r, size_t i, struct hist *lat, char *err, size_t errlen);

#endif
