/* stair_output: a staircase search's record (every run, every level with its
 * figures and judgement, the search's outcome and fit) and its writers: a line per
 * level as it is judged, the table on stdout, the JSON (the keys compare-backends
 * reads of a step search's, capacity_msg_s and known_between, mean the same), the
 * HTML page.
 * Writers only: cmd/capacity.c runs the staircases. */
#ifndef MS_CAPACITY_STAIR_OUTPUT_H
#define MS_CAPACITY_STAIR_OUTPUT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "capacity/level.h"
#include "capacity/stair.h"

struct stair_level_record {
    unsigned run;                    /* 1, 2, ...: its run */
    enum stair_kind kind;
    double rate;                     /* offered, asked for */
    double t0, t1;                   /* its span in its run, s */
    int read;                        /* its figures were read (else lj.why says why not) */
    int own_ledger;                  /* lost, duplicated, corrupted counted of its own mail (else the run's) */
    uint64_t lost, duplicated, corrupted, pending;   /* of the mail it accepted (own_ledger) */
    double offered, accepted;        /* msg/s over its span */
    /* msg/s over its span: what the server delivered (judged on the queue, what it
     * accepted less what its queue grew by: the mail in the mailboxes was
     * delivered, read or not), and what our readers read (delivered, else) */
    double delivered, read_rate;
    double delivery_p95_ms;
    struct level_judgement lj;
};

struct stair_run_record {
    unsigned n;
    enum stair_kind kind;
    unsigned senders, readers;
    int exit_status;
    char json[512];                  /* its result file */
    double delivered;                /* msg/s: a probe's, over its second half */
    double message_s;                /* the mean smtp.message time of its last level */
    double level_s;                  /* its levels' length: capacity.level, twice it for the confirmation */
    double lead_s;                   /* the lead-in before its first level, at that level's rate, not judged */
};

struct stair_record {
    const char *label;
    char start_time[32];
    double elapsed_s;
    int interrupted;
    double level_s;                  /* capacity.level */
    int visit_owed;                  /* capacity.visit: the runs' readers go where mail is owed */
    struct drift_rules dr;
    struct stair s;
    struct stair_fit fit;
    struct stair_run_record *runs;
    size_t nruns, runs_cap;
    struct stair_level_record *levels;
    size_t nlevels, levels_cap;
    /* more readers shown to read under 5 % more than fewer did (capacity/stair_judge.c):
     * in run `run`, at `rate`; none while more is 0 */
    struct {
        unsigned more, fewer, run;
        double rate;
    } futile;
};

/* "  2 staircase   48.0 msg/s  offered 47.6 accepted 47.6 delivered 47.1  pass  kept up: ... decided in 20 s" */
void stair_level_line(FILE *f, const struct stair_level_record *l);
void stair_table(FILE *f, const struct stair_record *c);
json_t *stair_json(const struct stair_record *c);
/* The page of capacity.report: the table, the knee with the interval and the open
 * band, the fitted pass probability. */
void stair_html(FILE *f, const struct stair_record *c);
void stair_record_free(struct stair_record *c);

#endif
