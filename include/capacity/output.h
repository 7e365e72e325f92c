/* output: a capacity search's record (every step with its figures and judgement,
 * the search's outcome) and its writers: the table on stdout, the JSON, the HTML
 * page with the knee (offered against accepted and delivered rate, and against the
 * 95th percentiles). Writers only: cmd/cmd_capacity.c runs the steps. */
#ifndef MS_CAPACITY_OUTPUT_H
#define MS_CAPACITY_OUTPUT_H

#include <jansson.h>
#include <stdio.h>

#include "capacity/search.h"
#include "capacity/step.h"

#define CAPACITY_FORMAT "mailsoak-capacity"
#define CAPACITY_FORMAT_VERSION 1

/* The longest window a step that swung is run again with, in capacity.windows:
 * long enough to average several swings of a backlog near a server's knee, while
 * two reruns cost at most 6 windows more. */
#define CAPACITY_WINDOW_MAX 4

struct step_record {
    unsigned n;                      /* 1, 2, ... */
    char phase[24];                  /* "coarse", "bisect", "confirm 80%" */
    double rate;                     /* the arrival rate asked for, msg/s */
    unsigned senders, readers;
    double window_s;                 /* the steady window asked for: capacity.window, or longer when
                                        run again unsteady */
    int exit_status;                 /* of its `mailsoak run` */
    char json[512];                  /* its result file */
    struct step_figures *f;          /* NULL: its result could not be read (why in j.why) */
    struct step_judgement j;
    unsigned ruled_out;              /* what the search showed the tester not to lack here (step_judge) */
};

struct capacity_record {
    const char *label;
    char start_time[32];
    double elapsed_s;
    int interrupted;
    struct step_rules rules;
    struct search s;
    double ramp_s, warmup_s, window_s;  /* each step's parts: only the window is judged */
    int visit_owed;                     /* capacity.visit: the steps' readers go where mail is owed */
    struct step_record *steps;
    size_t nsteps, cap;
};

/* The last passing step at the capacity's rate (its figures: what was offered and
 * delivered there, Poisson noise and all), or NULL. */
const struct step_record *capacity_at(const struct capacity_record *c);
/* The step of the lowest failing rate above the capacity (the first gate to fail
 * there is its j.v[j.first_failed]), or NULL. */
const struct step_record *capacity_first_failure(const struct capacity_record *c);
/* "   3 coarse        40.0 msg/s  offered 39.8 ...  pass" */
void capacity_step_line(FILE *f, const struct step_record *st);
/* The two header lines of those: the columns' names and units. */
void capacity_step_header(FILE *f);
void capacity_table(FILE *f, const struct capacity_record *c);
json_t *capacity_json(const struct capacity_record *c);
void capacity_html(FILE *f, const struct capacity_record *c);
void capacity_record_free(struct capacity_record *c);

#endif
