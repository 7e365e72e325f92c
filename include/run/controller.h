/* controller.h: the controller of `mailsoak run` (run.c), the one struct that owns
 * a run, shared with the phases (phase.c). */
#ifndef MS_RUN_CONTROLLER_H
#define MS_RUN_CONTROLLER_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "engine/stats.h"
#include "engine/worker.h"
#include "lib/hist.h"
#include "run/run.h"
#include "verdict/stage_end.h"
#include "verdict/sweep.h"

struct known;
struct run_metrics;
struct sources;
struct spool;

/* The controller: everything a run owns, so that one call (soak_free) releases it
 * whichever step stopped. The run (shared with the workers) and the result (handed
 * to the writers) are its own too. */
struct controller {
    const struct config *cfg;
    struct run *run;
    struct run_result *res;
    struct worker *w;
    unsigned nw, started;            /* worker slots; threads running */
    int phase, stopped_in_sweep;
    int quiet_walked;                /* the drain walked the spool once it was quiet */
    uint64_t phase_start, send_end, next_iv;
    unsigned snap_seq;
    struct counters prev;            /* cumulative as of the previous interval */
    unsigned prev_nerr;
    struct err_count prev_err[ERR_CLASSES_MAX];
    uint64_t prev_t;
    json_t *timeline;
    FILE *tl_spill;                  /* the timeline's entries while the run goes on (run.c) */
    struct send_end last_send;       /* the last send interval's backlog (run_result's send_end) */
    struct sources *sources;
    struct spool *queue;             /* its own reading of [server] spool_dir, or NULL */
    struct hist *lat;                /* LAT_COUNT, merged per interval; too big for the stack */
    struct run_metrics *metrics;     /* --metrics, or NULL */
    struct hist *lat_cum;            /* LAT_COUNT since the start, for --metrics */
    /* fill.messages: this controller runs the fill (fill), and the UIDLs it
     * verifies go to known; or it runs the soak after a fill (fill_done) */
    int fill;
    struct known *known;
    uint32_t *plan;
    struct fill_summary *fill_sum;
    const struct fill_summary *fill_done;
    const char *fill_out;            /* the fill: --fill-only's --json, to write with its UIDLs */
    struct fill_summary *fill_loaded; /* the soak: fill.from read into this (and known) */
    struct sweep sw;                 /* the settle rule's state (verdict/sweep.h) */
    struct stage_end stage_end;      /* smtp.profile_end = decided (verdict/stage_end.h) */
    unsigned stage_asked;            /* 1 + the last stage asked whether our readers held it (run/phase.c) */
};

#endif
