/* gate: a run's result (or one step of a capacity search) judged against a set of
 * gates, each passing or failing with the value measured and its bound. Two groups:
 * integrity (nothing lost, duplicated or corrupted; mail sent and read when there
 * are senders and readers; the sweep settled; a share of the accepted mail proven
 * delivered exactly once; the server kept up with what it accepted), on by default; and quality of service (a percentile of
 * a command class or of delivery within a bound, the share of errors, error classes
 * outside an allow-list, a profile's spikes recovered from within a time), off unless asked for or by the SPECmail2001 preset. A
 * failed integrity gate gives exit status 4, a failed QoS gate alone 5
 * (lib/exitcodes.h). Pure: figures in, judgement out. */
#ifndef MS_VERDICT_GATE_H
#define MS_VERDICT_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/ledger.h"
#include "engine/stats.h"
#include "lib/hist.h"
#include "verdict/keptup.h"
#include "verdict/recovery.h"

struct config;

#define GATE_LAT_MAX 48
#define GATE_ALLOW_MAX 64
#define GATE_NAME_LEN 48

/* One latency bound: pct of the class's values within bound_ns. cls is a name of
 * lat_names[] ("smtp.rcpt", "delivery"), or "smtp" / "pop3" for each of that
 * protocol's command classes (every smtp.* and pop3.* but smtp.message, the whole
 * transaction). */
struct gate_latency {
    char cls[24];
    double pct;                      /* 95 for p95 */
    uint64_t bound_ns;
};

struct gate_allow {
    char cls[ERR_NAME_LEN];          /* an error class, as in errors_by_class */
    char reason[120];                /* why it is tolerated: shown in the verdict */
};

struct gates {
    int integrity;                   /* lost = duplicated = corrupted = 0; sent > 0 with senders; read > 0 with readers */
    int settled;                     /* a sweep that was needed settled (judged while mail is pending) */
    int kept_up;                     /* the server kept up with what it accepted (verdict/keptup.h) */
    double recovery_s;               /* a spike's recovery at most (verdict/recovery.h); 0: off */
    double proven;                   /* least share (0..1) of accepted mail proven delivered exactly once; 0: off */
    double errors;                   /* most errors per session attempt (0..1); >= 1: off */
    unsigned nlat;
    struct gate_latency lat[GATE_LAT_MAX];
    int allow_only;                  /* an error class not in allow[] fails */
    unsigned nallow;
    struct gate_allow allow[GATE_ALLOW_MAX];
};

/* What a run (or a search step's window) measured, as the gates read it. */
struct gate_input {
    const struct counters *c;        /* sent, read, errors, smtp_sessions, pop3_sessions */
    const struct ledger_outcome *lo; /* the ledger's outcomes; NULL: no verdicts yet (lost etc. not judged) */
    int settled;                     /* 1 settled, 0 not, -1 no sweep was needed */
    uint64_t senders, readers;       /* configured sessions */
    const struct hist *lat;          /* LAT_COUNT histograms, or NULL */
    const struct err_count *err;     /* errors by class */
    unsigned nerr;
    /* Whether the server kept up, or NULL: judged only when it could tell and the
     * server, not our readers, is the one judged (KEPTUP_YES or KEPTUP_BEHIND). */
    const struct keptup_result *kept;
    const struct recovery_spike *spikes;   /* a profile's spikes (verdict/recovery.h) */
    unsigned nspikes;
};

enum gate_group { GATE_INTEGRITY, GATE_QOS };

struct gate_result {
    char name[GATE_NAME_LEN];        /* "lost", "read", "settled", "proven", "kept up", "recovery after stage 2", "smtp.rcpt p95", "errors", "class smtp_rcpt_450" */
    enum gate_group group;
    int pass;
    double value, bound;             /* measured and limit, in unit */
    const char *op;                  /* how value must compare to bound: "=", "<=", ">=", ">" */
    const char *unit;                /* "", "%", "ms" */
    const char *reason;              /* an allowed error class: why (the gates' text) */
};

struct gate_judgement {
    unsigned n, failed;
    struct gate_result *v;           /* every gate judged, failed or not; freed by gate_judgement_free */
    int integrity_failed, qos_failed;
    int exit_status;                 /* the gates' status, set by judge() (verdict/judge.h) */
};

/* Judges in against g. Every gate that applies gives one result (a latency gate on
 * a class with no values gives none: nothing to judge). */
void gate_judge(const struct gates *g, const struct gate_input *in, struct gate_judgement *out);
void gate_judgement_free(struct gate_judgement *j);
/* 0, MS_EXIT_GATE_INTEGRITY or MS_EXIT_GATE_QOS. */
int gate_exit_status(const struct gate_judgement *j);
/* "lost 3, must be = 0", "smtp.rcpt p95 6200 ms, must be <= 5000 ms" into buf. */
const char *gate_describe(const struct gate_result *r, char *buf, size_t n);

/* The [gate] settings as gates: the preset's bounds joined with the keys' (the
 * stricter wins where both bound the same thing); preset off: no gate at all. 0,
 * or -1 with "gate.key: reason" in err (a latency or allow line that does not
 * parse). */
int gates_from_config(const struct config *cfg, struct gates *g, char *err, size_t errlen);
/* SPECmail2001's QoS: every SMTP and POP3 command class answered within 5 s for
 * more than 95 %, delivery within 60 s for more than 95 %, errors under 1 %. */
void gates_add_specmail(struct gates *g);

#endif
