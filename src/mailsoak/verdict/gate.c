/* gate: a run's figures judged against its gates (include/verdict/gate.h), and the
 * [gate] settings made into gates. */
#include "verdict/gate.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/exitcodes.h"
#include "lib/units.h"
#include "settings/config.h"

static void add(struct gate_judgement *j, enum gate_group grp, const char *name, int pass, double value,
                const char *op, double bound, const char *unit)
{
    j->v = xrealloc(j->v, (j->n + 1) * sizeof *j->v);
    struct gate_result *r = &j->v[j->n++];
    *r = (struct gate_result){ .group = grp, .pass = pass, .value = value, .bound = bound, .op = op, .unit = unit };
    snprintf(r->name, sizeof r->name, "%s", name);
    if (!pass) {
        j->failed++;
        if (grp == GATE_INTEGRITY)
            j->integrity_failed = 1;
        else
            j->qos_failed = 1;
    }
}

static void count_zero(struct gate_judgement *j, const char *name, uint64_t v)
{
    add(j, GATE_INTEGRITY, name, v == 0, (double)v, "=", 0, "");
}

static void integrity(const struct gates *g, const struct gate_input *in, struct gate_judgement *j)
{
    const struct ledger_outcome *lo = in->lo;
    if (g->integrity) {
        if (in->senders)
            add(j, GATE_INTEGRITY, "sent", in->c->sent > 0, (double)in->c->sent, ">", 0, "");
        /* with nothing sent there is nothing to read: "sent" says what went wrong */
        if (in->readers && in->c->sent > 0)
            add(j, GATE_INTEGRITY, "read", in->c->read > 0, (double)in->c->read, ">", 0, "");
        if (lo) {
            count_zero(j, "lost", lo->lost);
            count_zero(j, "duplicated", lo->duplicated);
            count_zero(j, "corrupted", lo->corrupted);
        }
    }
    /* unsettled matters only while mail is pending: a sweep that read everything
     * had nothing left to prove */
    if (g->settled && in->settled >= 0 && (!lo || lo->pending))
        add(j, GATE_INTEGRITY, "settled", in->settled == 1, in->settled, "=", 1, "");
    const struct keptup_result *k = in->kept;
    if (g->kept_up && k && (k->outcome == KEPTUP_YES || k->outcome == KEPTUP_BEHIND))
        add(j, GATE_INTEGRITY, "kept up", k->outcome == KEPTUP_YES, k->value, "<=", k->bound, "msg/s");
    if (g->proven > 0 && lo && in->readers && lo->accepted) {
        double share = (double)lo->delivered / (double)lo->accepted;
        add(j, GATE_INTEGRITY, "proven", share >= g->proven, 100 * share, ">=", 100 * g->proven, "%");
    }
}

/* Every latency class the bound names: "smtp", "pop3" and "imap" stand for each
 * of the protocol's command classes (smtp.message, a whole transaction, is not one). */
static int names_class(const char *cls, unsigned k)
{
    const char *n = lat_names[k];
    size_t len = strlen(cls);
    if (!strcmp(cls, n))
        return 1;
    return (!strcmp(cls, "smtp") || !strcmp(cls, "pop3") || !strcmp(cls, "imap")) && !strncmp(n, cls, len) &&
           n[len] == '.' &&
           k != LAT_SMTP_MESSAGE;
}

static void qos(const struct gates *g, const struct gate_input *in, struct gate_judgement *j)
{
    for (unsigned i = 0; in->lat && i < g->nlat; i++) {
        const struct gate_latency *b = &g->lat[i];
        for (unsigned k = 0; k < LAT_COUNT; k++) {
            if (!names_class(b->cls, k) || !in->lat[k].count)
                continue;
            char name[GATE_NAME_LEN];
            snprintf(name, sizeof name, "%s p%g", lat_names[k], b->pct);
            uint64_t v = hist_percentile(&in->lat[k], b->pct);
            add(j, GATE_QOS, name, v <= b->bound_ns, (double)v / 1e6, "<=", (double)b->bound_ns / 1e6, "ms");
        }
    }
    if (g->errors < 1) {
        const struct counters *c = in->c;
        double attempts = (double)(c->smtp_sessions + c->pop3_sessions + c->errors);
        double share = attempts > 0 ? (double)c->errors / attempts : 0;
        add(j, GATE_QOS, "errors", share <= g->errors, 100 * share, "<=", 100 * g->errors, "%");
    }
    /* a spike not seen to come back within the window fails, whatever time it was seen */
    for (unsigned i = 0; g->recovery_s > 0 && i < in->nspikes; i++) {
        const struct recovery_spike *sp = &in->spikes[i];
        char name[GATE_NAME_LEN];
        snprintf(name, sizeof name, "recovery after stage %u", sp->stage + 1);
        add(j, GATE_QOS, name, sp->recovered == 1 && sp->recovery_s <= g->recovery_s, sp->recovery_s, "<=",
            g->recovery_s, "s");
        /* a gap the tester left is no proof of a faster recovery: judged on the interval end seen back */
        if (sp->recovered == 1 && sp->late)
            j->v[j->n - 1].reason = "back (the run took no interval end for a while before) by";
        if (sp->recovered != 1)
            j->v[j->n - 1].reason = sp->recovered == 0 ? "not back within the send window, seen for"
                                                       : "no level before it to come back to, seen for";
    }
    if (g->allow_only)
        for (unsigned e = 0; e < in->nerr; e++) {
            if (!in->err[e].count)
                continue;
            const char *reason = NULL;
            for (unsigned a = 0; a < g->nallow && !reason; a++)
                if (!strcmp(g->allow[a].cls, in->err[e].name))
                    reason = g->allow[a].reason;
            char name[GATE_NAME_LEN];
            snprintf(name, sizeof name, "class %s", in->err[e].name);
            add(j, GATE_QOS, name, reason != NULL, (double)in->err[e].count, reason ? "allowed" : "not allowed", 0, "");
            j->v[j->n - 1].reason = reason;
        }
}

void gate_judge(const struct gates *g, const struct gate_input *in, struct gate_judgement *out)
{
    *out = (struct gate_judgement){ 0 };
    integrity(g, in, out);
    qos(g, in, out);
}

void gate_judgement_free(struct gate_judgement *j)
{
    free(j->v);
    *j = (struct gate_judgement){ 0 };
}

int gate_exit_status(const struct gate_judgement *j)
{
    return j->integrity_failed ? MS_EXIT_GATE_INTEGRITY : j->qos_failed ? MS_EXIT_GATE_QOS : MS_EXIT_OK;
}

static const char *fmt_val(double v, const char *unit, char *buf, size_t n)
{
    if (!strcmp(unit, "%"))
        snprintf(buf, n, "%s %%", fmt_share((char[16]){ 0 }, 16, v));
    else if (!strcmp(unit, "msg/s"))
        snprintf(buf, n, "%.2f %s", v, unit);
    else if (*unit)
        snprintf(buf, n, "%.0f %s", v, unit);
    else
        snprintf(buf, n, "%.0f", v);
    return buf;
}

const char *gate_describe(const struct gate_result *r, char *buf, size_t n)
{
    char v[32], b[32];
    if (!strncmp(r->name, "class ", 6))
        snprintf(buf, n, "%s: %.0f, %s%s%s%s", r->name, r->value, r->op, r->reason ? " (" : "",
                 r->reason ? r->reason : "", r->reason ? ")" : "");
    else if (!strcmp(r->name, "kept up"))
        snprintf(buf, n, "kept up: the backlog grew %s, must be %s %s", fmt_val(r->value, r->unit, v, sizeof v), r->op,
                 fmt_val(r->bound, r->unit, b, sizeof b));
    else if (!strncmp(r->name, "recovery ", 9))
        snprintf(buf, n, "%s: %s %s, must be %s %s", r->name, r->reason ? r->reason : "back in",
                 fmt_val(r->value, r->unit, v, sizeof v), r->op, fmt_val(r->bound, r->unit, b, sizeof b));
    else if (!strcmp(r->name, "settled"))
        snprintf(buf, n, "settled: %s", r->value ? "yes" : "no, must be yes");
    else
        snprintf(buf, n, "%s %s, must be %s %s", r->name, fmt_val(r->value, r->unit, v, sizeof v), r->op,
                 fmt_val(r->bound, r->unit, b, sizeof b));
    return buf;
}

/* The stricter of two bounds of one class and percentile; else a new one. */
static void add_latency(struct gates *g, const char *cls, double pct, uint64_t bound)
{
    for (unsigned i = 0; i < g->nlat; i++)
        if (!strcmp(g->lat[i].cls, cls) && g->lat[i].pct == pct) {
            if (bound < g->lat[i].bound_ns)
                g->lat[i].bound_ns = bound;
            return;
        }
    if (g->nlat == GATE_LAT_MAX)
        return;
    struct gate_latency *b = &g->lat[g->nlat++];
    snprintf(b->cls, sizeof b->cls, "%s", cls);
    b->pct = pct;
    b->bound_ns = bound;
}

void gates_add_specmail(struct gates *g)
{
    add_latency(g, "smtp", 95, 5000000000ull);
    add_latency(g, "pop3", 95, 5000000000ull);
    add_latency(g, "imap", 95, 5000000000ull);
    /* IMAP IDLE's push: 95 % of the EXISTS within 5 s of the acceptance */
    add_latency(g, "push.exists", 95, 5000000000ull);
    add_latency(g, "delivery", 95, 60000000000ull);
    if (g->errors > 0.01)
        g->errors = 0.01;
}

static int known_class(const char *cls)
{
    if (!strcmp(cls, "smtp") || !strcmp(cls, "pop3") || !strcmp(cls, "imap"))
        return 1;
    for (unsigned k = 0; k < LAT_COUNT; k++)
        if (!strcmp(cls, lat_names[k]))
            return 1;
    return 0;
}

/* "CLASS pNN DURATION", e.g. "smtp p95 5s", "pop3.retr p99.9 2s". */
static int parse_latency(struct gates *g, const char *line, char *err, size_t errlen)
{
    char cls[64], pct[32], dur[32], extra[2];
    const char *why = NULL;
    double p;
    uint64_t ns;
    if (sscanf(line, "%63s %31s %31s %1s", cls, pct, dur, extra) != 3 || (pct[0] != 'p' && pct[0] != 'P')) {
        snprintf(err, errlen, "gate.latency: '%s': expected CLASS pNN DURATION, e.g. 'smtp p95 5s'", line);
        return -1;
    }
    if (!known_class(cls) || strlen(cls) >= sizeof g->lat[0].cls) {
        snprintf(err, errlen, "gate.latency: '%s': unknown class '%s' (smtp, pop3, or one of the latency names "
                 "of the table: smtp.rcpt, pop3.retr, delivery, ...)", line, cls);
        return -1;
    }
    if (parse_double(pct + 1, &p, &why) < 0 || p <= 0 || p >= 100) {
        snprintf(err, errlen, "gate.latency: '%s': the percentile must be between p0 and p100", line);
        return -1;
    }
    if (parse_duration_ns(dur, &ns, &why) < 0) {
        snprintf(err, errlen, "gate.latency: '%s': %s", line, why ? why : "bad duration");
        return -1;
    }
    if (g->nlat == GATE_LAT_MAX) {
        snprintf(err, errlen, "gate.latency: more than %d bounds", GATE_LAT_MAX);
        return -1;
    }
    add_latency(g, cls, p, ns);
    return 0;
}

/* "CLASS: reason" */
static int parse_allow(struct gates *g, const char *line, char *err, size_t errlen)
{
    const char *colon = strchr(line, ':');
    size_t len = colon ? (size_t)(colon - line) : 0;
    while (len && isspace((unsigned char)line[len - 1]))
        len--;
    const char *reason = colon ? colon + 1 : "";
    while (isspace((unsigned char)*reason))
        reason++;
    if (!colon || !len || len >= ERR_NAME_LEN || !*reason) {
        snprintf(err, errlen, "gate.allow: '%s': expected 'CLASS: reason', e.g. 'smtp_rcpt_450: greylisting'", line);
        return -1;
    }
    if (g->nallow == GATE_ALLOW_MAX) {
        snprintf(err, errlen, "gate.allow: more than %d classes", GATE_ALLOW_MAX);
        return -1;
    }
    struct gate_allow *a = &g->allow[g->nallow++];
    snprintf(a->cls, sizeof a->cls, "%.*s", (int)len, line);
    snprintf(a->reason, sizeof a->reason, "%s", reason);
    return 0;
}

int gates_from_config(const struct config *cfg, struct gates *g, char *err, size_t errlen)
{
    const struct gate_config *c = &cfg->gate;
    *g = (struct gates){ .integrity = c->integrity, .settled = c->settled, .kept_up = c->kept_up,
                         .recovery_s = (double)c->recovery / 1e9, .proven = c->proven,
                         .errors = c->errors, .allow_only = c->error_classes == GATE_CLASSES_ALLOWED };
    for (size_t i = 0; i < c->latency.n; i++)
        if (parse_latency(g, c->latency.v[i], err, errlen) < 0)
            return -1;
    for (size_t i = 0; i < c->allow.n; i++)
        if (parse_allow(g, c->allow.v[i], err, errlen) < 0)
            return -1;
    if (c->preset == GATE_PRESET_SPECMAIL2001)
        gates_add_specmail(g);
    if (c->preset == GATE_PRESET_OFF)           /* the lines were still checked */
        *g = (struct gates){ .errors = 1 };
    return 0;
}
