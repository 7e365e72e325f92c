/* Unit tests of the gates (verdict/gate.c): a clean run passes the default
 * integrity gates; each integrity gate fails alone, with exit status 4; the gates
 * that do not apply (no senders, no readers, no sweep) give no result; latency
 * bounds judge each command class of a protocol (not smtp.message) and classes
 * with no values not at all; the error share and the allow-list fail with exit
 * status 5, integrity winning when both fail; the [gate] settings parse (preset,
 * stricter bound wins) and refuse bad lines with the key; the verdict's lines;
 * "kept up" fails with exit status 4 when the server fell behind, and is not judged
 * when the tester was the limit or nothing could be told. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/exitcodes.h"
#include "settings/config.h"
#include "verdict/gate.h"

#define MS 1000000ull

struct fix {
    struct counters c;
    struct ledger_outcome lo;
    struct hist lat[LAT_COUNT];
    struct err_count err[4];
    struct gate_input in;
    struct gates g;
    struct gate_judgement j;
};

/* 100 messages sent, all read once, 20 sessions each way, a delivery of 2 s. */
static struct fix *clean(void)
{
    static struct fix f;
    gate_judgement_free(&f.j);                   /* the last case's, before it is wiped */
    memset(&f, 0, sizeof f);
    f.c = (struct counters){ .sent = 100, .read = 100, .smtp_sessions = 20, .pop3_sessions = 20 };
    f.lo = (struct ledger_outcome){ .accepted = 100, .delivered = 100 };
    for (unsigned k = 0; k < LAT_COUNT; k++)
        hist_reset(&f.lat[k]);
    hist_record(&f.lat[LAT_DELIVERY], 2000 * MS);
    f.in = (struct gate_input){ .c = &f.c, .lo = &f.lo, .settled = -1, .senders = 10, .readers = 5, .lat = f.lat,
                                .err = f.err, .nerr = 0 };
    f.g = (struct gates){ .integrity = 1, .settled = 1, .proven = 0.99, .errors = 1 };
    return &f;
}

static const struct gate_result *find(const struct gate_judgement *j, const char *name)
{
    for (unsigned i = 0; i < j->n; i++)
        if (!strcmp(j->v[i].name, name))
            return &j->v[i];
    return NULL;
}

static int judge(struct fix *f)
{
    gate_judgement_free(&f->j);
    gate_judge(&f->g, &f->in, &f->j);
    return gate_exit_status(&f->j);
}

static void a_clean_run_passes(void **st)
{
    struct fix *f = clean();
    assert_int_equal(judge(f), MS_EXIT_OK);
    assert_int_equal(f->j.failed, 0);
    const char *names[] = { "sent", "read", "lost", "duplicated", "corrupted", "proven" };
    for (unsigned i = 0; i < sizeof names / sizeof *names; i++) {
        const struct gate_result *r = find(&f->j, names[i]);
        assert_non_null(r);
        assert_true(r->pass);
        assert_int_equal(r->group, GATE_INTEGRITY);
    }
    assert_null(find(&f->j, "settled"));         /* no sweep was needed */
    assert_int_equal(f->j.n, 6);
    f->in.settled = 0;                           /* one that read everything had nothing to prove */
    assert_int_equal(judge(f), MS_EXIT_OK);
    assert_null(find(&f->j, "settled"));
    gate_judgement_free(&f->j);
}

static void each_integrity_gate_fails_alone(void **st)
{
    struct fix *f = clean();
    const char *cases[] = { "lost", "duplicated", "corrupted", "sent", "read", "settled", "proven" };
    for (unsigned i = 0; i < sizeof cases / sizeof *cases; i++) {
        f = clean();
        switch (i) {
        case 0: f->lo.lost = 1, f->lo.delivered = 99; break;
        case 1: f->lo.duplicated = 1, f->lo.delivered = 99; break;
        case 2: f->lo.corrupted = 1, f->lo.delivered = 99; break;
        case 3: f->c.sent = 0, f->c.read = 0, f->lo = (struct ledger_outcome){ 0 }; break;
        case 4: f->c.read = 0, f->lo.delivered = 0, f->lo.pending = 100, f->g.proven = 0; break;
        case 5: f->in.settled = 0, f->lo.delivered = 99, f->lo.pending = 1; break;
        case 6: f->lo.delivered = 98, f->lo.pending = 2; break;
        }
        assert_int_equal(judge(f), MS_EXIT_GATE_INTEGRITY);
        assert_int_equal(f->j.failed, 1);
        const struct gate_result *r = find(&f->j, cases[i]);
        assert_non_null(r);
        assert_false(r->pass);
    }
    /* the proven share, measured */
    const struct gate_result *r = find(&f->j, "proven");
    assert_true(r->value > 97.99 && r->value < 98.01);
    assert_true(r->bound > 98.99 && r->bound < 99.01);
    gate_judgement_free(&f->j);
}

static void gates_that_do_not_apply_give_no_result(void **st)
{
    struct fix *f = clean();
    f->in.readers = 0;                             /* nothing can be read, nor proven */
    f->c.read = 0;
    f->lo.delivered = 0;
    f->lo.pending = 100;
    assert_int_equal(judge(f), MS_EXIT_OK);
    assert_null(find(&f->j, "read"));
    assert_null(find(&f->j, "proven"));
    f = clean();
    f->in.senders = 0;                             /* a reader-only shard */
    f->c.sent = 0;
    f->c.read = 0;
    f->lo = (struct ledger_outcome){ 0 };
    assert_int_equal(judge(f), MS_EXIT_OK);
    assert_null(find(&f->j, "sent"));
    assert_null(find(&f->j, "read"));
    f = clean();
    f->in.lo = NULL;                               /* a search step's window: no verdicts */
    f->g.integrity = 0;
    f->g.settled = 0;
    assert_int_equal(judge(f), MS_EXIT_OK);
    assert_int_equal(f->j.n, 0);
    gate_judgement_free(&f->j);
}

static void latency_bounds_judge_each_command_class(void **st)
{
    struct fix *f = clean();
    f->g.nlat = 1;
    f->g.lat[0] = (struct gate_latency){ "smtp", 95, 5000 * MS };
    for (int i = 0; i < 100; i++) {
        hist_record(&f->lat[LAT_SMTP_RCPT], (i < 94 ? 10 : 6000) * MS);   /* p95 over 5 s */
        hist_record(&f->lat[LAT_SMTP_MAIL], 10 * MS);
        hist_record(&f->lat[LAT_SMTP_MESSAGE], 9000 * MS);               /* a transaction: not a command */
        hist_record(&f->lat[LAT_POP3_RETR], 9000 * MS);                  /* not smtp */
    }
    assert_int_equal(judge(f), MS_EXIT_GATE_QOS);
    assert_int_equal(f->j.failed, 1);
    const struct gate_result *r = find(&f->j, "smtp.rcpt p95");
    assert_non_null(r);
    assert_false(r->pass);
    assert_int_equal(r->group, GATE_QOS);
    assert_true(r->value > 5000);
    assert_true(find(&f->j, "smtp.mail p95")->pass);
    assert_null(find(&f->j, "smtp.message p95"));
    assert_null(find(&f->j, "smtp.ehlo p95"));   /* no values: nothing to judge */
    assert_null(find(&f->j, "pop3.retr p95"));
    /* 94 of 100 within: p94 is within the bound */
    f->g.lat[0].pct = 94;
    assert_int_equal(judge(f), MS_EXIT_OK);
    gate_judgement_free(&f->j);
}

static void error_share_and_allow_list(void **st)
{
    struct fix *f = clean();
    f->c.errors = 2;                               /* 2 of 42 attempts: 4.8 % */
    f->err[0] = (struct err_count){ "smtp_rcpt_450", 1 };
    f->err[1] = (struct err_count){ "pop3_pass_auth", 1 };
    f->in.nerr = 2;
    f->g.errors = 0.05;
    assert_int_equal(judge(f), MS_EXIT_OK);
    f->g.errors = 0.01;
    assert_int_equal(judge(f), MS_EXIT_GATE_QOS);
    const struct gate_result *r = find(&f->j, "errors");
    assert_true(r->value > 4.7 && r->value < 4.8);
    f->g.errors = 1;
    f->g.allow_only = 1;
    f->g.nallow = 1;
    f->g.allow[0] = (struct gate_allow){ "smtp_rcpt_450", "greylisting" };
    assert_int_equal(judge(f), MS_EXIT_GATE_QOS);
    assert_int_equal(f->j.failed, 1);
    assert_true(find(&f->j, "class smtp_rcpt_450")->pass);
    assert_string_equal(find(&f->j, "class smtp_rcpt_450")->reason, "greylisting");
    assert_false(find(&f->j, "class pop3_pass_auth")->pass);
    /* with an integrity gate failing too, integrity's status */
    f->lo.lost = 1;
    assert_int_equal(judge(f), MS_EXIT_GATE_INTEGRITY);
    assert_int_equal(f->j.failed, 2);
    gate_judgement_free(&f->j);
}

/* Every bound holds at its value: a share or a percentile exactly at its gate
 * passes, a hair over (or under, for proven) fails. */
static void bounds_hold_at_their_value(void **st)
{
    struct fix *f = clean();
    f->lo.delivered = 99;                          /* 99 of 100: exactly gate.proven */
    f->lo.pending = 1;
    assert_int_equal(judge(f), MS_EXIT_OK);
    assert_true(find(&f->j, "proven")->pass);
    f->lo.delivered = 98;
    f->lo.pending = 2;
    assert_int_equal(judge(f), MS_EXIT_GATE_INTEGRITY);

    f = clean();
    f->c.smtp_sessions = f->c.pop3_sessions = 19;
    f->c.errors = 2;                               /* 2 of 40 attempts: exactly 5 % */
    f->g.errors = 0.05;
    assert_int_equal(judge(f), MS_EXIT_OK);
    assert_true(find(&f->j, "errors")->pass);
    f->c.errors = 3;
    assert_int_equal(judge(f), MS_EXIT_GATE_QOS);

    f = clean();
    for (int i = 0; i < 100; i++)
        hist_record(&f->lat[LAT_SMTP_RCPT], (uint64_t)(i + 1) * MS);
    uint64_t p95 = hist_percentile(&f->lat[LAT_SMTP_RCPT], 95);
    f->g.nlat = 1;
    f->g.lat[0] = (struct gate_latency){ "smtp.rcpt", 95, p95 };
    assert_int_equal(judge(f), MS_EXIT_OK);
    assert_true(find(&f->j, "smtp.rcpt p95")->pass);
    f->g.lat[0].bound_ns = p95 - 1;
    assert_int_equal(judge(f), MS_EXIT_GATE_QOS);
    gate_judgement_free(&f->j);
}

/* "kept up" judges the server when the judgement could tell and charged it or
 * cleared it; never the tester's limit, nor a window too short to tell. */
static void kept_up_gate(void **st)
{
    struct fix *f = clean();
    f->g.kept_up = 1;
    struct keptup_result k = { .outcome = KEPTUP_BEHIND, .stat = KEPTUP_STAT, .value = 11.96, .bound = 2.1 };
    f->in.kept = &k;
    assert_int_equal(judge(f), MS_EXIT_GATE_INTEGRITY);
    const struct gate_result *r = find(&f->j, "kept up");
    assert_non_null(r);
    assert_false(r->pass);
    assert_int_equal(r->group, GATE_INTEGRITY);
    char b[160];
    assert_string_equal(gate_describe(r, b, sizeof b), "kept up: the backlog grew 11.96 msg/s, must be <= 2.10 msg/s");
    k.outcome = KEPTUP_YES;
    k.value = 0.2;
    assert_int_equal(judge(f), MS_EXIT_OK);
    assert_true(find(&f->j, "kept up")->pass);
    k.outcome = KEPTUP_TESTER;               /* our readers' limit: not the server's to fail */
    k.value = 11.96;
    assert_int_equal(judge(f), MS_EXIT_OK);
    assert_null(find(&f->j, "kept up"));
    k.outcome = KEPTUP_UNKNOWN;
    assert_int_equal(judge(f), MS_EXIT_OK);
    assert_null(find(&f->j, "kept up"));
    k.outcome = KEPTUP_BEHIND;               /* the key off */
    f->g.kept_up = 0;
    assert_int_equal(judge(f), MS_EXIT_OK);
    assert_null(find(&f->j, "kept up"));
    f->g.kept_up = 1;
    f->in.kept = NULL;
    assert_int_equal(judge(f), MS_EXIT_OK);
    gate_judgement_free(&f->j);
}

/* gate.recovery: each spike back within the bound passes; one slower, one never
 * back in the window and one with no level before it fail, with exit status 5. */
static void recovery_gate(void **st)
{
    struct fix *f = clean();
    struct recovery_spike sp[3] = {
        { .stage = 1, .recovered = 1, .recovery_s = 12 },
        { .stage = 3, .recovered = 1, .recovery_s = 40 },
        { .stage = 5, .recovered = 0, .recovery_s = 20 },
    };
    f->in.spikes = sp;
    f->in.nspikes = 1;
    assert_int_equal(judge(f), MS_EXIT_OK);          /* off */
    assert_null(find(&f->j, "recovery after stage 2"));
    f->g.recovery_s = 30;
    assert_int_equal(judge(f), MS_EXIT_OK);
    char b[200];
    assert_string_equal(gate_describe(find(&f->j, "recovery after stage 2"), b, sizeof b),
                        "recovery after stage 2: back in 12 s, must be <= 30 s");
    f->in.nspikes = 3;
    assert_int_equal(judge(f), MS_EXIT_GATE_QOS);
    assert_int_equal(f->j.failed, 2);
    assert_false(find(&f->j, "recovery after stage 4")->pass);
    const struct gate_result *r = find(&f->j, "recovery after stage 6");
    assert_false(r->pass);                           /* 20 s seen is under 30, but it never came back */
    assert_string_equal(gate_describe(r, b, sizeof b),
                        "recovery after stage 6: not back within the send window, seen for 20 s, must be <= 30 s");
    sp[2].recovered = -1;
    assert_int_equal(judge(f), MS_EXIT_GATE_QOS);
    assert_false(find(&f->j, "recovery after stage 6")->pass);
    /* seen back at 40 s after the tester took no interval end since 25 s: judged on
     * the 40 s seen, the gap named */
    sp[1].late = 1;
    sp[1].from_s = 25;
    judge(f);
    assert_false(find(&f->j, "recovery after stage 4")->pass);
    assert_string_equal(gate_describe(find(&f->j, "recovery after stage 4"), b, sizeof b),
                        "recovery after stage 4: back (the run took no interval end for a while before) by 40 s, "
                        "must be <= 30 s");
    gate_judgement_free(&f->j);
}

static struct config *cfg_with(const char **lat, size_t nlat, const char **allow, size_t nallow, int preset)
{
    static struct config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gate = (struct gate_config){ .integrity = 1, .settled = 1, .kept_up = 1, .proven = 0.99, .errors = 1, .preset = preset,
                                     .error_classes = nallow ? GATE_CLASSES_ALLOWED : GATE_CLASSES_ANY };
    cfg.gate.latency = (struct strlist){ (char **)lat, nlat, 0 };
    cfg.gate.allow = (struct strlist){ (char **)allow, nallow, 0 };
    return &cfg;
}

static void settings_make_gates(void **st)
{
    struct gates g;
    char err[300];
    const char *lat[] = { "smtp p95 2s", "pop3.retr p99.9 250ms" };
    const char *allow[] = { "smtp_rcpt_450 :  greylisting by design" };
    assert_int_equal(gates_from_config(cfg_with(lat, 2, allow, 1, GATE_PRESET_SPECMAIL2001), &g, err, sizeof err), 0);
    assert_true(g.integrity && g.settled && g.kept_up && g.allow_only);
    assert_string_equal(g.allow[0].cls, "smtp_rcpt_450");
    assert_string_equal(g.allow[0].reason, "greylisting by design");
    /* the preset adds pop3, imap and push.exists p95 5 s and delivery p95 60 s; smtp p95 stays at the
     * stricter 2 s */
    assert_int_equal(g.nlat, 6);
    assert_string_equal(g.lat[0].cls, "smtp");
    assert_int_equal(g.lat[0].bound_ns, 2000 * MS);
    assert_string_equal(g.lat[1].cls, "pop3.retr");
    assert_int_equal(g.lat[1].bound_ns, 250 * MS);
    assert_true(g.lat[1].pct == 99.9);
    assert_string_equal(g.lat[2].cls, "pop3");
    assert_int_equal(g.lat[2].bound_ns, 5000 * MS);
    assert_string_equal(g.lat[3].cls, "imap");
    assert_int_equal(g.lat[3].bound_ns, 5000 * MS);
    assert_string_equal(g.lat[4].cls, "push.exists");
    assert_int_equal(g.lat[4].bound_ns, 5000 * MS);
    assert_string_equal(g.lat[5].cls, "delivery");
    assert_int_equal(g.lat[5].bound_ns, 60000 * MS);
    assert_true(g.errors == 0.01);
    /* off: no gate at all */
    assert_int_equal(gates_from_config(cfg_with(lat, 2, allow, 1, GATE_PRESET_OFF), &g, err, sizeof err), 0);
    assert_false(g.integrity || g.settled || g.kept_up || g.proven > 0 || g.nlat || g.allow_only || g.errors < 1);
    const char *bad[][1] = { { "smtp 95 5s" }, { "smtp.nothing p95 5s" }, { "smtp p95" }, { "smtp p95 5 s" },
                             { "smtp p100 5s" }, { "smtp p95 5parsecs" } };
    for (unsigned i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = 0;
        assert_int_equal(gates_from_config(cfg_with(bad[i], 1, NULL, 0, 0), &g, err, sizeof err), -1);
        assert_non_null(strstr(err, "gate.latency: '"));
    }
    const char *bad_allow[][1] = { { "smtp_rcpt_450" }, { ": why" }, { "smtp_rcpt_450:" } };
    for (unsigned i = 0; i < sizeof bad_allow / sizeof *bad_allow; i++) {
        assert_int_equal(gates_from_config(cfg_with(NULL, 0, bad_allow[i], 1, 0), &g, err, sizeof err), -1);
        assert_non_null(strstr(err, "gate.allow: '"));
    }
}

static void the_lines_name_value_and_bound(void **st)
{
    char b[160];
    struct gate_result r = { "lost", GATE_INTEGRITY, 0, 3, 0, "=", "", NULL };
    assert_string_equal(gate_describe(&r, b, sizeof b), "lost 3, must be = 0");
    r = (struct gate_result){ "proven", GATE_INTEGRITY, 0, 46.84, 99, ">=", "%", NULL };
    assert_string_equal(gate_describe(&r, b, sizeof b), "proven 46.8 %, must be >= 99.0 %");
    /* a share short of the bound never reads as the bound: one in a million unproven */
    r = (struct gate_result){ "proven", GATE_INTEGRITY, 0, 99.9999, 100, ">=", "%", NULL };
    assert_string_equal(gate_describe(&r, b, sizeof b), "proven 99.99 %, must be >= 100.0 %");
    r = (struct gate_result){ "proven", GATE_INTEGRITY, 0, 99.96, 100, ">=", "%", NULL };
    assert_string_equal(gate_describe(&r, b, sizeof b), "proven 99.96 %, must be >= 100.0 %");
    r = (struct gate_result){ "proven", GATE_INTEGRITY, 1, 100, 100, ">=", "%", NULL };
    assert_string_equal(gate_describe(&r, b, sizeof b), "proven 100.0 %, must be >= 100.0 %");
    r = (struct gate_result){ "smtp.rcpt p95", GATE_QOS, 0, 6200.4, 5000, "<=", "ms", NULL };
    assert_string_equal(gate_describe(&r, b, sizeof b), "smtp.rcpt p95 6200 ms, must be <= 5000 ms");
    r = (struct gate_result){ "settled", GATE_INTEGRITY, 0, 0, 1, "=", "", NULL };
    assert_string_equal(gate_describe(&r, b, sizeof b), "settled: no, must be yes");
    r = (struct gate_result){ "class smtp_rcpt_450", GATE_QOS, 1, 12, 0, "allowed", "", "greylisting" };
    assert_string_equal(gate_describe(&r, b, sizeof b), "class smtp_rcpt_450: 12, allowed (greylisting)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_clean_run_passes),
        cmocka_unit_test(each_integrity_gate_fails_alone),
        cmocka_unit_test(gates_that_do_not_apply_give_no_result),
        cmocka_unit_test(latency_bounds_judge_each_command_class),
        cmocka_unit_test(error_share_and_allow_list),
        cmocka_unit_test(bounds_hold_at_their_value),
        cmocka_unit_test(kept_up_gate),
        cmocka_unit_test(recovery_gate),
        cmocka_unit_test(settings_make_gates),
        cmocka_unit_test(the_lines_name_value_and_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
