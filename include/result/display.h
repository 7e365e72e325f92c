/* display: the parts of a result file that compare and report show as the file
 * wrote them: figures that may be missing ("not measured", never 0), the verdict,
 * the examples and the events, the settings and the workload as text, and each
 * timeline entry's figures and classes. Plain data, read once by result_read()
 * (result/result.h) into struct result's `display`. */
#ifndef MS_RESULT_DISPLAY_H
#define MS_RESULT_DISPLAY_H

#include <stddef.h>

#include <jansson.h>

/* A number as written; has 0: the file lacks it (not measured). */
struct result_value {
    int has;
    int integer;                     /* written as an integer: shown without decimals */
    double v;
};

/* The summary's figures compare and report show; the paths are display.c's. */
enum result_fig {
    RF_SENT, RF_READ, RF_ERRORS, RF_DELIVERED, RF_LOST, RF_PENDING, RF_PENDING_QUEUED, RF_PENDING_PEEKED,
    RF_PENDING_UNSWEPT, RF_PENDING_UNSETTLED, RF_DUPLICATED, RF_CORRUPTED, RF_FOREIGN,
    RF_SPOOL, RF_MEM, RF_INPUT, RF_OUTPUT, RF_IBYTES, RF_OBYTES, RF_LOG_HITS, RF_SERVER_CRASHES,
    RF_CPU, RF_MTA_CPU, RF_POP3_CPU, RF_DB_CPU, RF_DB_MEM, RF_DB_OBYTES, RF_DB_DISK_WRITE,
    RF_DB_WAITS, RF_DB_DEADLOCKS, RF_DB_ERRORS, RF_DB_CONNS,
    RF_DELIVERY_P50, RF_DELIVERY_P99, RF_RATE_IN, RF_RATE_OUT,
    RF_PROVEN_SHARE,                 /* the verdict's share proven, 0-1 */
    RF_GATES_FAILED,                 /* how many gates failed (the list's length) */
    RF_COUNT
};

/* The envelope's values the report's runs table shows, as text. */
enum result_env { RE_RUN_ID, RE_SEED, RE_START_TIME, RE_DURATION_S, RE_ELAPSED_S, RE_INTERRUPTED, RE_VERSION, RE_COUNT };
extern const char *const result_env_names[RE_COUNT];

/* A key and its value as text: a string as it is, a number as written (a real as
 * "%.1f" from 100 up, else "%.4g"), a list's items joined by ", ", anything else
 * as compact JSON. NULL text: absent. */
struct result_kv {
    char *key;
    char *text;
};

/* One section of the settings echo ("config"): its keys, or, when it is no object,
 * its value as text. */
struct result_section {
    char *name;
    int object;
    char *text;
    size_t n;
    struct result_kv *kv;
};

/* Counts by class (errors by class, log hits by class), in the file's order. */
struct result_classes {
    int has;                         /* the object is there (a class it lacks had 0) */
    size_t n;
    struct result_kv *name;          /* .key the class; .text unused */
    struct result_value *count;      /* [n] */
};

/* The server's evidence of a message (its trail in the logs). */
struct result_evidence {
    int has;
    char *cause, *cause_line;
    char *lines;                     /* how many lines name it, as text */
    size_t ntrail;
    char **trail;
};

/* A message shown one by one (lost, duplicated, corrupted, late); each part as text. */
struct result_message {
    char *id, *message_id, *queue_id, *mailbox, *accepted, *mailbox_read;
    struct result_evidence ev;
};

struct result_messages {
    size_t n;
    struct result_message *v;
};

struct result_event {
    struct result_value t;           /* s since the run's start */
    char *t_text, *kind, *text;
};

/* A log class with its count and the example lines kept. */
struct result_logclass {
    char *name;
    struct result_value count;
    size_t nex;
    struct result_value *ex_t;       /* [nex] */
    char **ex_line;                  /* [nex] as text */
};

/* One gate's result: pass 1, 0, or -1 when the file says neither. */
struct result_gate {
    int pass;
    char *text;
};

struct result_verdict {
    int has;                         /* "verdict" is an object */
    char *state, *headline, *session_errors, *remedy;
    int kept_up;                     /* 1, 0, -1 not said */
    struct result_value exit_status;
    size_t ngates;
    struct result_gate *gates;
};

/* The figures of a timeline entry that the report's charts and CSV draw. */
enum result_ifig {
    RI_T, RI_SENT, RI_READ, RI_ERRORS, RI_RATE_IN, RI_RATE_OUT, RI_CONNS, RI_MEM, RI_SPOOL,
    RI_STORE_MESSAGES, RI_STORE_BYTES, RI_PROCS, RI_INPUT, RI_OUTPUT, RI_IBYTES, RI_OBYTES, RI_COUNT
};
extern const char *const result_ifig_names[RI_COUNT];

/* A latency of an entry by command name (any name the file wrote). */
struct result_entry_lat {
    char *name;
    struct result_value p50, p99;
};

struct result_entry {
    int object;                      /* the entry is an object (else it is skipped) */
    struct result_value fig[RI_COUNT];
    char *phase;
    size_t nlat;
    struct result_entry_lat *lat;
    struct result_classes errors, log_hits;
};

struct result_display {
    struct result_value fig[RF_COUNT];
    char *env[RE_COUNT];
    struct result_value duration;    /* "duration_s": the send window */
    char *server_kind;               /* run.server_kind, NULL when not recorded */
    struct result_verdict verdict;
    size_t gates_failed;             /* the length of the verdict's list of failed gates */
    size_t nworkload;
    struct result_kv *workload;      /* the workload's keys as text, in the file's order */
    size_t nconfig;
    struct result_section *config;
    struct result_classes errors;    /* the summary's errors by class */
    size_t nerror_classes;           /* classes in "error_examples", with examples or not */
    size_t nerror_ex;
    struct result_kv *error_ex;      /* each error example: .key its class, .text the line */
    size_t nlog;
    struct result_logclass *log;
    struct result_messages lost, duplicated, corrupted, late;   /* "<kind>_examples" */
    size_t ncorruption;
    char **corruption;               /* "corruption_examples", each as text */
    size_t nevents;
    struct result_event *events;
    size_t nentries;
    struct result_entry *entries;    /* the timeline */
};

/* Reads doc's parts into d (zeroed first). */
void result_display_read(struct result_display *d, const json_t *doc);
void result_display_free(struct result_display *d);
/* The setting section.key of d as text, or NULL. */
const char *result_setting(const struct result_display *d, const char *section, const char *key);

#endif
