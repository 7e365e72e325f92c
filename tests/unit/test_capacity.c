/* Unit tests of the capacity search (capacity/search.c) and of a step's window and
 * judgement (capacity/step.c). The search runs against servers of known ceilings
 * (a step passes when its rate is at most the ceiling) and must bracket each within
 * its precision, confirm at 80/100/120 %, go down when the first step fails and
 * stop at max_rate; against a noisy one it confirms again below a rate that failed
 * when run again, and reports the band it saw both ways; a step's figures are cut from a result file made here: only
 * the send intervals after the ramp count, the backlog's slope is its least-squares
 * growth, histograms add up; and a step the tester limited is invalid with the fix
 * it needs, never a failure of the server. The rerun policy (capacity/rerun.c)
 * adds what a step lacked, clears the tester when that moved no more mail, doubles
 * an unsteady step's window up to the longest and stops when the tester cannot
 * offer the rate. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "result/latency.h"
#include "capacity/rerun.h"
#include "capacity/search.h"
#include "capacity/step.h"
#include "lib/exitcodes.h"

static const struct search_rules rules = { .start = 10, .factor = 2, .max_rate = 10000, .precision = 0.05, .confirm = 1,
                                           .confirm_rounds = 3 };

/* Runs a search against a ceiling; returns the number of steps. */
static unsigned search_against(struct search *s, const struct search_rules *r, double ceiling)
{
    unsigned steps = 0;
    search_init(s, r);
    while (search_next(s) > 0 && steps < 100) {
        search_result(s, search_next(s) <= ceiling);
        steps++;
    }
    return steps;
}

static void brackets_known_ceilings(void **st)
{
    (void)st;
    const double ceilings[] = { 7, 10, 55.5, 100, 333, 1234, 9000 };
    for (unsigned i = 0; i < sizeof ceilings / sizeof ceilings[0]; i++) {
        struct search s;
        unsigned steps = search_against(&s, &rules, ceilings[i]);
        double c = ceilings[i];
        assert_true(search_found(&s));
        assert_true(s.lo <= c && s.hi > c);
        assert_true(s.hi - s.lo <= rules.precision * s.lo);
        assert_true(c / s.lo - 1 < 0.1);         /* found within 10 % */
        assert_true(search_confirmed(&s));       /* 80 % and 100 % pass, 120 % fails */
        assert_int_equal(search_exit_status(&s), MS_EXIT_OK);
        assert_int_equal(s.round, 1);
        assert_true(search_capacity(&s) == s.lo);
        /* no noise: known from the capacity to the lowest failure, the precision */
        assert_true(search_known_lo(&s) == s.lo && search_known_hi(&s) == s.hi);
        assert_true(steps < 30);
        assert_non_null(strstr(s.end, "confirmed"));
    }
}

/* A server of ceiling 100 whose steps between 100 and 110 msg/s pass and fail in
 * turn (the testbed's Dovecot near its limit): the bisection's rate fails when the
 * confirmation runs it again, the next round starts just below it, and the
 * interval the search reports spans the band it saw both ways, wider than its
 * precision. */
static void noisy_ceiling_reconfirmed(void **st)
{
    (void)st;
    struct search s;
    search_init(&s, &rules);
    unsigned calls = 0, steps = 0, band = 0;
    char phase[32] = "";
    while (search_next(&s) > 0 && steps++ < 100) {
        double r = search_next(&s);
        if (s.round == 2 && s.confirm_i == 1)
            search_phase_name(&s, phase, sizeof phase);
        int pass = r <= 100 || (r <= 110 && (band = ++calls) % 2 == 1);
        search_result(&s, pass);
    }
    assert_true(band >= 2);                   /* the band was met, both ways */
    assert_true(search_confirmed(&s));
    assert_true(s.round >= 2);
    assert_string_equal(phase, "confirm 100% #2");
    double c = search_capacity(&s), lo = search_known_lo(&s), hi = search_known_hi(&s);
    assert_true(c == s.base && c <= 110);
    assert_true(lo <= c && c <= hi);
    assert_true(s.fail_min <= s.pass_max);    /* a failure at or below a pass: noise, measured */
    assert_true(hi - lo > rules.precision * c);
    assert_true(lo <= 110 && hi > 100);       /* the interval meets the band */
}

/* Confirmation rounds: a 100 % failure starts the next round below the rate that
 * failed, a 120 % pass starts it at that rate, and when the rounds are used up the
 * search ends unconfirmed, its capacity the highest base that held at 80 and 100 %. */
static void confirmation_rounds(void **st)
{
    (void)st;
    struct search s;
    search_init(&s, &rules);
    while (s.phase != SP_CONFIRM)
        search_result(&s, search_next(&s) <= 100);
    double b1 = s.base;
    search_result(&s, 1);                     /* 80 % */
    search_result(&s, 0);                     /* 100 % fails: round 2 below it */
    assert_int_equal(s.round, 2);
    assert_true(fabs(s.base - b1 * (1 - rules.precision)) < 1e-9);
    assert_true(fabs(search_next(&s) - 0.8 * s.base) < 1e-9);
    assert_int_equal(s.confirmed[0], -1);     /* this round's steps only */
    double b2 = s.base;
    search_result(&s, 1);
    search_result(&s, 1);
    search_result(&s, 1);                     /* 120 % passes: round 3 at that rate */
    assert_int_equal(s.round, 3);
    assert_true(fabs(s.base - 1.2 * b2) < 1e-9 && s.held == b2);
    search_result(&s, 0);                     /* 80 % fails: no rounds left */
    assert_true(search_next(&s) == 0);
    assert_false(search_confirmed(&s));
    assert_non_null(strstr(s.end, "not confirmed in 3 rounds"));
    assert_true(search_capacity(&s) == b2);   /* held at 80 and 100 %, not confirmed */
    assert_int_equal(search_exit_status(&s), MS_EXIT_NOT_CONFIRMED);
    struct search_rules one = rules;
    one.confirm_rounds = 1;
    search_init(&s, &one);
    while (s.phase != SP_CONFIRM)
        search_result(&s, search_next(&s) <= 100);
    search_result(&s, 0);
    assert_true(search_next(&s) == 0 && !search_confirmed(&s));
    assert_true(search_capacity(&s) == s.lo);  /* nothing held: the bracket's pass */
    assert_true(search_known_lo(&s) < s.lo);   /* it failed below that */
}

static void goes_down_and_stops(void **st)
{
    (void)st;
    struct search s;
    search_against(&s, &rules, 2.6);          /* the first step (10) fails: 5, then 2.5 pass */
    assert_true(search_found(&s) && s.lo <= 2.6 && s.hi > 2.6);
    search_against(&s, &rules, 0.001);        /* nothing passes down to 0.01 */
    assert_false(search_found(&s));
    assert_non_null(strstr(s.end, "no rate passed"));
    assert_int_equal(search_exit_status(&s), MS_EXIT_FAILURE);
    struct search_rules low = rules;
    low.max_rate = 50;
    search_against(&s, &low, 1e9);            /* everything passes: stops at max_rate */
    assert_true(search_found(&s) && s.lo == 50 && s.hi == 0);
    assert_non_null(strstr(s.end, "max_rate"));
    struct search_rules noconf = rules;
    noconf.confirm = 0;
    search_against(&s, &noconf, 100);
    assert_int_equal(s.confirmed[0], -1);
    assert_false(search_confirmed(&s));
    assert_int_equal(search_exit_status(&s), MS_EXIT_OK);   /* no confirmation asked */
    /* a confirmation step that fails at 100 % is not a confirmation */
    search_init(&s, &rules);
    while (s.phase != SP_CONFIRM)
        search_result(&s, search_next(&s) <= 100);
    search_result(&s, 1);
    search_result(&s, 0);
    search_result(&s, 0);
    assert_true(search_found(&s));
    assert_false(search_confirmed(&s));
    /* stopped early: no more steps */
    search_init(&s, &rules);
    search_stop(&s, "time");
    assert_true(search_next(&s) == 0);
    assert_string_equal(s.end, "time");
}

/* A step read from a document as cmd_capacity reads its file (result/result.h). */
static int read_step(json_t *root, double start_s, struct step_figures *f, char *err, size_t errlen)
{
    struct result r;
    assert_int_equal(result_from_json(&r, root, NULL, err, errlen), 0);
    int rc = step_read(&r, start_s, f, err, errlen);
    result_free(&r);
    return rc;
}

/* A result file: n intervals of 1 s, the first `ramp` in the ramp, then the send
 * phase, then two of drain; each steady one with sent 100, read read_per, the
 * backlog growing by growth a second, and a latency class. */
static json_t *result_srv(unsigned n, unsigned ramp, double growth, unsigned read_per, uint64_t lat_ns,
                          double spool_growth, double store_growth)
{
    json_t *tl = json_array();
    struct hist h;
    double unread = 50, spool = 10, store = 40;
    for (unsigned i = 1; i <= n + 2; i++) {
        int send = i <= n;
        int steady = send && i > ramp;
        if (steady) {
            unread += growth;
            spool += spool_growth;
            store += store_growth;
        }
        hist_reset(&h);
        for (int k = 0; k < 100; k++)
            hist_record(&h, lat_ns);
        json_t *lat = json_object();
        json_object_set_new(lat, "smtp.rcpt", latency_json(&h));
        json_object_set_new(lat, "pop3.pass", latency_json(&h));
        json_object_set_new(lat, "delivery", latency_json(&h));
        json_t *entry = json_pack("{s:f, s:s, s:i, s:i, s:i, s:{s:i}, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:o}",
                                            "t", (double)i, "phase", send ? "send" : "drain", "sent", steady ? 100 : 7,
                                            "read", steady ? (int)read_per : 3, "errors", 1, "errors_by_class",
                                            "smtp_rcpt_450", 1, "unread", (int)unread, "smtp_sessions", 40,
                                            "pop3_sessions", 60, "arrivals", steady ? 100 : 7, "late_busy", 0,
                                            "late_engine", 0, "left_behind", 0, "latency", lat);
        if (spool_growth >= 0 || store_growth >= 0)
            json_object_set_new(entry, "server",
                                json_pack("{s:o, s:o}", "spool", spool_growth >= 0 ? json_integer((json_int_t)spool)
                                                                                   : json_null(),
                                          "store_messages", store_growth >= 0 ? json_integer((json_int_t)store)
                                                                              : json_null()));
        json_array_append_new(tl, entry);
    }
    return json_pack("{s:b, s:o, s:{s:i, s:i, s:i, s:i, s:i, s:b}}", "interrupted", 0, "timeline", tl, "summary",
                     "sent", 1000, "lost", 0, "duplicated", 0, "corrupted", 0, "pending", 0, "settled", 1);
}

static json_t *result(unsigned n, unsigned ramp, double growth, unsigned read_per, uint64_t lat_ns)
{
    return result_srv(n, ramp, growth, read_per, lat_ns, -1, -1);
}

/* The backlog grows: in the server's queue it is the server's failure; in the
 * mailboxes (or anywhere but a measured queue) the readers are behind. */
static void where_the_backlog_grows(void **st)
{
    (void)st;
    char err[200];
    struct step_figures *f = calloc(1, sizeof *f);
    struct step_rules rl;
    struct step_judgement j;
    unsigned ro = 0;                          /* what the search ruled out */
    step_rules_specmail(&rl, 0.05);
    json_t *r = result_srv(10, 2, 9, 91, 3000000, 9, 0);     /* the queue takes the growth */
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    assert_true(f->has_spool && f->has_store && fabs(f->spool_slope - 9) < 0.01);
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_FAIL);
    assert_string_equal(j.v[j.first_failed].name, "queue growth");
    json_decref(r);
    r = result_srv(10, 2, 9, 91, 3000000, 0, 9);             /* the mailboxes take it */
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_INVALID);
    assert_int_equal(j.fix, FIX_READERS);
    assert_non_null(strstr(j.why, "mailboxes"));
    json_decref(r);
    r = result_srv(10, 2, 9, 91, 6000000000ull, 0, 9);       /* in the mailboxes, but POP3 takes 6 s */
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_FAIL);                  /* the server keeps the readers waiting */
    json_decref(r);
    r = result_srv(10, 2, 9, 91, 3000000, 0, -1);            /* a flat queue, no store count */
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_INVALID);
    assert_int_equal(j.fix, FIX_READERS);
    json_decref(r);
    /* a backlog of 1-2 messages moving by one is noise, not growth */
    r = result(10, 2, 0, 100, 3000000);
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    f->unread_mean = 2;
    f->unread_slope = 0.5;                   /* 4 messages over 8 s: within 3 sqrt(3) */
    f->accepted = 1;
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_PASS);
    json_decref(r);
    free(f);
}

static void window_figures(void **st)
{
    (void)st;
    char err[200];
    struct step_figures *f = calloc(1, sizeof *f);
    json_t *r = result(10, 2, 4, 96, 3000000);
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    assert_int_equal(f->intervals, 8);        /* 3..10: began at or after 2 s */
    assert_true(fabs(f->window_s - 8) < 1e-9);
    assert_int_equal(f->c.sent, 800);         /* the ramp's and the drain's 7s are not in it */
    assert_int_equal(f->c.read, 8 * 96);
    assert_int_equal(f->c.arrivals, 800);
    assert_int_equal(f->c.errors, 8);
    assert_int_equal(f->nerr, 1);
    assert_int_equal(f->err[0].count, 8);
    assert_int_equal(f->c.smtp_sessions, 320);
    assert_true(fabs(f->accepted - 100) < 1e-9 && fabs(f->delivered - 96) < 1e-9 && fabs(f->offered - 100) < 1e-9);
    assert_true(fabs(f->unread_slope - 4) < 0.01);
    assert_int_equal(f->lat[LAT_SMTP_RCPT].count, 800);   /* histograms added, not percentiles */
    assert_int_equal(f->settled, 1);

    struct step_rules rl;
    step_rules_specmail(&rl, 0.05);
    struct step_judgement j;
    unsigned ro = 0;                          /* what the search ruled out */
    step_judge(&rl, f, ro, &j);               /* growth 4 <= 5 % of 100: steady */
    assert_int_equal(j.verdict, STEP_PASS);
    assert_int_equal(j.first_failed, -1);
    json_decref(r);

    r = result(10, 2, 9, 91, 3000000);        /* the backlog grows 9 a second */
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_FAIL);
    assert_string_equal(j.v[j.first_failed].name, "queue growth");
    char b[200];
    assert_non_null(strstr(step_check_describe(&j.v[j.first_failed], b, sizeof b), "must be <= 5.00 msg/s"));
    json_decref(r);

    r = result(10, 2, 0, 100, 6000000000ull);  /* every command 6 s: the p95 gate */
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_FAIL);
    assert_string_equal(j.v[j.first_failed].name, "smtp.rcpt p95");
    json_decref(r);

    r = result(10, 2, 0, 100, 3000000);
    json_object_set_new(json_object_get(r, "summary"), "lost", json_integer(1));
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_FAIL);
    assert_string_equal(j.v[j.first_failed].name, "lost");
    json_decref(r);

    r = result(2, 2, 0, 100, 3000000);         /* all ramp: nothing to judge */
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_INVALID);
    json_decref(r);

    r = json_pack("{s:[{s:f, s:s}, {s:f, s:s}], s:{}}", "timeline", "t", 2.0, "phase", "send", "t", 3.0, "phase", "send",
                  "summary");
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), -1);   /* an entry without its counts */
    assert_non_null(strstr(err, "unread"));
    json_decref(r);
    free(f);
}

/* The tester's limits make a step invalid, with what to add; never a failure. */
static void tester_limits(void **st)
{
    (void)st;
    char err[200];
    struct step_figures *f = calloc(1, sizeof *f);
    struct step_rules rl;
    struct step_judgement j;
    unsigned ro = 0;                          /* what the search ruled out */
    step_rules_specmail(&rl, 0.05);
    json_t *r = result(10, 2, 9, 91, 3000000);
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    f->c.late_busy = 2;                       /* 2 of 800: over 1 in 1000 */
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_INVALID);
    assert_int_equal(j.fix, FIX_SENDERS);
    f->c.late_busy = 0;
    f->c.late_engine = 1;                     /* 1 of 800 */
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_INVALID);
    assert_int_equal(j.fix, FIX_NONE);
    assert_non_null(strstr(j.why, "engine"));
    f->c.late_engine = 0;
    f->c.left_behind = 100;                   /* of 480 visits, while the backlog grows */
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_INVALID);
    assert_int_equal(j.fix, FIX_READERS);
    f->unread_slope = 0;                      /* mail left behind, but no growth: the readers keep up */
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_PASS);
    f->interrupted = 1;
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_INVALID);
    json_decref(r);
    free(f);
}

/* Readers sized by what they read, not doubled: 20 readers that read 130 of 140
 * msg/s need 27 (a quarter more than 20 x 140 / 130); one more at least, twice as
 * many at most, and twice as many when they read nothing. */
static void readers_sized_by_rate(void **st)
{
    (void)st;
    struct step_figures f = { .accepted = 140, .delivered = 130 };
    assert_int_equal(step_readers_needed(f.accepted, f.delivered, 20), 27);
    f.delivered = 50;                         /* far behind: twice, no more */
    assert_int_equal(step_readers_needed(f.accepted, f.delivered, 20), 40);
    f.delivered = 0;
    assert_int_equal(step_readers_needed(f.accepted, f.delivered, 20), 40);
    f.delivered = 140;                        /* 25 % more of 1 is 1.25: still one more */
    assert_int_equal(step_readers_needed(f.accepted, f.delivered, 1), 2);
    f.delivered = 200;                        /* read more than accepted: one more, never fewer */
    assert_int_equal(step_readers_needed(f.accepted, f.delivered, 20), 21);
}

/* More readers (senders) that moved no more mail clear the tester: the backlog in
 * the mailboxes (the arrivals' wait) is then the server's, and the step is judged on
 * it instead of asking for more again. */
static void tester_ruled_out(void **st)
{
    (void)st;
    struct step_figures a = { .delivered = 330, .accepted = 404 }, b = { .delivered = 340, .accepted = 425 };
    assert_true(step_fix_futile(FIX_READERS, &a, 29, &b, 48));     /* 3 % more with 66 % more readers */
    assert_false(step_fix_futile(FIX_SENDERS, &a, 40, &b, 80));    /* 5.2 % more accepted: they helped */
    b.delivered = 350;
    b.accepted = 368;
    assert_false(step_fix_futile(FIX_READERS, &a, 29, &b, 48));    /* 6 % more: they helped */
    assert_true(step_fix_futile(FIX_SENDERS, &a, 80, &b, 160));    /* fewer accepted with twice the senders */
    assert_false(step_fix_futile(FIX_SENDERS, &a, 80, &b, 80));    /* no more senders: nothing shown */
    assert_false(step_fix_futile(FIX_NONE, &a, 1, &b, 2));

    char err[200];
    struct step_figures *f = calloc(1, sizeof *f);
    struct step_rules rl;
    struct step_judgement j;
    unsigned ro = 0;                          /* what the search ruled out */
    step_rules_specmail(&rl, 0.05);
    json_t *r = result_srv(10, 2, 9, 91, 3000000, 0, 9);     /* the mailboxes take the growth */
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_INVALID);
    ro = 1u << FIX_SENDERS;                                   /* the other one: still the readers' */
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_INVALID);
    assert_int_equal(j.fix, FIX_READERS);
    ro = 1u << FIX_READERS;
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_FAIL);
    assert_string_equal(j.v[j.first_failed].name, "queue growth");
    json_decref(r);

    r = result(10, 2, 0, 100, 3000000);                       /* steady, but arrivals waited for senders */
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    ro = 0;
    f->c.late_busy = 100;
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_INVALID);
    assert_int_equal(j.fix, FIX_SENDERS);
    ro = 1u << FIX_SENDERS;
    step_judge(&rl, f, ro, &j);                               /* all offered accepted: the server's pass */
    assert_int_equal(j.verdict, STEP_PASS);
    f->accepted = 90;                                         /* 90 of 100 offered: it did not sustain it */
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_FAIL);
    assert_string_equal(j.v[j.first_failed].name, "accepted");
    json_decref(r);
    free(f);
}

/* The tester's needs by rate: readers doubled at 144 msg/s start every step at 144
 * and above with as many, none below; senders apart from readers. */
static void needs_by_rate(void **st)
{
    (void)st;
    struct search_needs nd = { 0 };
    assert_int_equal(search_need_at(&nd, 100, NEED_READERS, 20), 20);
    search_need(&nd, 144, NEED_READERS, 40);
    search_need(&nd, 144, NEED_READERS, 80);
    search_need(&nd, 96, NEED_SENDERS, 40);
    assert_int_equal(search_need_at(&nd, 144, NEED_READERS, 20), 80);
    assert_int_equal(search_need_at(&nd, 200, NEED_READERS, 20), 80);
    assert_int_equal(search_need_at(&nd, 120, NEED_READERS, 20), 20);   /* below: afresh */
    assert_int_equal(search_need_at(&nd, 87.5, NEED_READERS, 20), 20);
    assert_int_equal(search_need_at(&nd, 120, NEED_SENDERS, 20), 40);
    assert_int_equal(search_need_at(&nd, 90, NEED_SENDERS, 20), 20);
    assert_int_equal(search_need_at(&nd, 144, NEED_READERS, 100), 100); /* never below the configured */
    /* 80 readers at 144 read no more than 40: later steps start with 40 */
    search_need_futile(&nd, 144, NEED_READERS, 40);
    assert_int_equal(search_need_at(&nd, 200, NEED_READERS, 20), 40);
    assert_int_equal(search_need_at(&nd, 120, NEED_SENDERS, 20), 40);   /* the senders' untouched */
    for (unsigned i = 0; i < 2 * SEARCH_NEEDS_MAX; i++)                 /* bounded */
        search_need(&nd, 1, NEED_SENDERS, 7);
    assert_int_equal(nd.n, SEARCH_NEEDS_MAX);
}

/* The backlog swung within the window: it rose 20 msg/s over the first half and fell
 * as fast over the second, a slope of 0 in all. The window caught a swing, not a
 * trend, so the step is run again with a longer one (FIX_WINDOW); the longest is
 * judged as it is. Both halves growing is a failure, and a step that fails on
 * anything but the backlog is failed whatever its halves did. */
static void swing_is_not_a_trend(void **st)
{
    (void)st;
    char err[200];
    struct step_figures *f = calloc(1, sizeof *f);
    struct step_rules rl;
    struct step_judgement j;
    unsigned ro = 0;                          /* what the search ruled out */
    step_rules_specmail(&rl, 0.05);
    json_t *r = result(10, 2, 0, 100, 3000000);
    /* unread sampled at t = 2 (the window's start) .. 10: up to t = 6, then down */
    for (unsigned i = 1; i < 10; i++) {
        double t = i + 1.0, u = t <= 6 ? 50 + 20 * (t - 2) : 130 - 20 * (t - 6);
        json_object_set_new(json_array_get(json_object_get(r, "timeline"), i), "unread", json_integer((json_int_t)u));
    }
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    assert_true(fabs(f->unread_half[0] - 20) < 1e-9 && fabs(f->unread_half[1] + 20) < 1e-9);
    assert_true(fabs(f->unread_slope) < 1e-9);
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_INVALID);
    assert_int_equal(j.fix, FIX_WINDOW);
    assert_non_null(strstr(j.why, "+20.0 msg/s in the window's first half and -20.0 in its second"));
    assert_false(step_fix_futile(FIX_WINDOW, f, 10, f, 10));
    ro = 1u << FIX_WINDOW;                    /* the longest window: its trend, flat */
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_PASS);
    ro = 0;
    f->lost = 1;                              /* a loss is a loss, whatever the backlog did */
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_FAIL);
    assert_string_equal(j.v[j.first_failed].name, "lost");
    json_decref(r);

    r = result(10, 2, 9, 91, 3000000);        /* both halves grow 9 a second */
    assert_int_equal(read_step(r, 2.0, f, err, sizeof err), 0);
    assert_true(fabs(f->unread_half[0] - 9) < 0.01 && fabs(f->unread_half[1] - 9) < 0.01);
    step_judge(&rl, f, ro, &j);
    assert_int_equal(j.verdict, STEP_FAIL);
    assert_string_equal(j.v[j.first_failed].name, "queue growth");
    json_decref(r);
    free(f);
}

/* The rerun policy (capacity/rerun.c) over steps made here: 10 s windows up to 40 s,
 * 10 senders and 5 readers configured, at most 40 senders and 100 readers. */
static const struct rerun_rules rerun_rules = {
    .window = 10000000000ull, .window_max = 40000000000ull, .base_senders = 10, .base_readers = 5,
    .max_senders = 40, .max_readers = 100,
};

/* A step at rate with senders and readers, its figures read from r (then freed) and
 * judged with nothing ruled out; late_busy arrivals waited for a sender. */
static void step_at(struct step_record *st, const struct step_rules *rl, double rate, unsigned senders,
                    unsigned readers, json_t *r, uint64_t late_busy)
{
    char err[200];
    free(st->f);
    memset(st, 0, sizeof *st);
    st->rate = rate;
    st->senders = senders;
    st->readers = readers;
    st->f = calloc(1, sizeof *st->f);
    assert_int_equal(read_step(r, 2.0, st->f, err, sizeof err), 0);
    st->f->c.late_busy = late_busy;
    step_judge(rl, st->f, 0, &st->j);
    json_decref(r);
}

/* Senders a step lacked are doubled at its rate and above, never below; when twice
 * as many moved no more mail, the tester is cleared of them, the step is the
 * server's (here a pass: all offered accepted) and later steps start without them. */
static void rerun_adds_senders_until_futile(void **st)
{
    (void)st;
    struct step_rules rl;
    step_rules_specmail(&rl, 0.05);
    struct rerun_state s;
    rerun_init(&s, &rerun_rules);
    struct step_record a = { 0 }, b = { 0 };
    char why[300] = "";
    unsigned snd, rd;
    rerun_sessions(&s, &rerun_rules, 100, &snd, &rd);
    assert_int_equal(snd, 10);
    assert_int_equal(rd, 5);
    step_at(&a, &rl, 100, 10, 5, result(10, 2, 0, 100, 3000000), 100);
    assert_int_equal(a.j.fix, FIX_SENDERS);
    assert_int_equal(rerun_next(&rerun_rules, &s, &rl, NULL, &a, why, sizeof why), RERUN_MORE);
    assert_int_equal(s.retries, 1);
    rerun_sessions(&s, &rerun_rules, 100, &snd, &rd);
    assert_int_equal(snd, 20);
    rerun_sessions(&s, &rerun_rules, 200, &snd, &rd);
    assert_int_equal(snd, 20);
    rerun_sessions(&s, &rerun_rules, 50, &snd, &rd);
    assert_int_equal(snd, 10);                             /* a lower rate: afresh */
    step_at(&b, &rl, 100, 20, 5, result(10, 2, 0, 100, 3000000), 100);   /* no more accepted */
    assert_int_equal(b.j.verdict, STEP_INVALID);
    assert_int_equal(rerun_next(&rerun_rules, &s, &rl, &a, &b, why, sizeof why), RERUN_JUDGED);
    assert_int_equal(b.ruled_out, 1u << FIX_SENDERS);
    assert_int_equal(b.j.verdict, STEP_PASS);
    assert_int_equal(s.retries, 0);
    rerun_sessions(&s, &rerun_rules, 200, &snd, &rd);
    assert_int_equal(snd, 10);                             /* cut back: more moved nothing */
    free(a.f);
    free(b.f);
}

/* Readers are sized by what they read; a step still limited once nothing more can
 * be added (the maximum, or RERUN_RETRIES runs again) or nothing can help (the
 * engine late, no result) stops the search with the tester's reason. */
static void rerun_stops_when_the_tester_cannot(void **st)
{
    (void)st;
    struct step_rules rl;
    step_rules_specmail(&rl, 0.05);
    struct rerun_state s;
    rerun_init(&s, &rerun_rules);
    struct step_record a = { 0 };
    char why[300] = "";
    unsigned snd, rd;
    step_at(&a, &rl, 100, 10, 5, result_srv(10, 2, 9, 91, 3000000, 0, 9), 0);   /* the mailboxes grow */
    assert_int_equal(a.j.fix, FIX_READERS);
    assert_int_equal(rerun_next(&rerun_rules, &s, &rl, NULL, &a, why, sizeof why), RERUN_MORE);
    rerun_sessions(&s, &rerun_rules, 100, &snd, &rd);
    assert_int_equal(rd, step_readers_needed(a.f->accepted, a.f->delivered, 5));
    assert_int_equal(snd, 10);

    rerun_init(&s, &rerun_rules);
    for (unsigned i = 0; i < RERUN_RETRIES; i++) {
        step_at(&a, &rl, 100, 10, 5, result(10, 2, 0, 100, 3000000), 100);
        assert_int_equal(rerun_next(&rerun_rules, &s, &rl, NULL, &a, why, sizeof why), RERUN_MORE);
    }
    step_at(&a, &rl, 100, 10, 5, result(10, 2, 0, 100, 3000000), 100);
    assert_int_equal(rerun_next(&rerun_rules, &s, &rl, NULL, &a, why, sizeof why), RERUN_STOP);
    assert_non_null(strstr(why, "the tester limited the step at 100.0 msg/s: 100 of 800 arrivals waited"));

    rerun_init(&s, &rerun_rules);
    step_at(&a, &rl, 100, 40, 5, result(10, 2, 0, 100, 3000000), 100);   /* already the most senders */
    assert_int_equal(rerun_next(&rerun_rules, &s, &rl, NULL, &a, why, sizeof why), RERUN_STOP);
    step_at(&a, &rl, 100, 10, 5, result(10, 2, 0, 100, 3000000), 0);
    a.f->c.late_engine = 10;
    step_judge(&rl, a.f, 0, &a.j);
    assert_int_equal(rerun_next(&rerun_rules, &s, &rl, NULL, &a, why, sizeof why), RERUN_STOP);
    assert_non_null(strstr(why, "engine"));
    free(a.f);
    a = (struct step_record){ .rate = 100, .j = { .verdict = STEP_INVALID, .why = "its run wrote no result" } };
    assert_int_equal(rerun_next(&rerun_rules, &s, &rl, NULL, &a, why, sizeof why), RERUN_STOP);
    assert_non_null(strstr(why, "its run wrote no result"));
}

/* A step whose backlog swung is run again with twice the window, up to the longest,
 * which is judged on its trend; a judged step brings the window back. */
static void rerun_doubles_the_window(void **st)
{
    (void)st;
    struct step_rules rl;
    step_rules_specmail(&rl, 0.05);
    struct rerun_state s;
    rerun_init(&s, &rerun_rules);
    struct step_record a = { 0 }, b = { 0 };
    char why[300] = "";
    for (unsigned k = 0; k < 3; k++) {
        json_t *r = result(10, 2, 0, 100, 3000000);
        for (unsigned i = 1; i < 10; i++) {      /* up 20 a second to t = 6, then down */
            double t = i + 1.0, u = t <= 6 ? 50 + 20 * (t - 2) : 130 - 20 * (t - 6);
            json_object_set_new(json_array_get(json_object_get(r, "timeline"), i), "unread",
                                json_integer((json_int_t)u));
        }
        struct step_record *cur = k % 2 ? &b : &a, *prev = k % 2 ? &a : &b;
        step_at(cur, &rl, 100, 10, 5, r, 0);
        assert_int_equal(cur->j.fix, FIX_WINDOW);
        enum rerun_action next = rerun_next(&rerun_rules, &s, &rl, k ? prev : NULL, cur, why, sizeof why);
        if (k < 2) {
            assert_int_equal(next, RERUN_WINDOW);
            assert_true(s.window == (k ? 40000000000ull : 20000000000ull));
            assert_int_equal(cur->ruled_out, 0);         /* the step before's longest is not carried */
        } else {
            assert_int_equal(next, RERUN_JUDGED);          /* the longest: judged on its trend, flat */
            assert_int_equal(cur->ruled_out, 1u << FIX_WINDOW);
            assert_int_equal(cur->j.verdict, STEP_PASS);
            assert_true(s.window == 10000000000ull);
            assert_int_equal(s.retries, 0);
        }
    }
    free(a.f);
    free(b.f);
}

/* What one step showed of the tester counts at its rate only, and only for what it
 * lacked: a step that ran again with more senders and then lacked readers has not
 * shown the senders futile; senders ruled the server's at 100 msg/s are added again
 * at 200; the longest window's judgement is not carried to a new step at the rate;
 * more sessions stop at capacity.max_senders and max_readers, and the window at
 * window_max however it doubles. */
static void rerun_rules_out_only_what_a_step_showed(void **st)
{
    (void)st;
    struct step_rules rl;
    step_rules_specmail(&rl, 0.05);
    struct rerun_state s;
    struct step_record a = { 0 }, b = { 0 }, c = { 0 };
    char why[300] = "";
    unsigned snd, rd;

    /* senders lacked, then (with twice as many, no more accepted) readers lacked */
    rerun_init(&s, &rerun_rules);
    step_at(&a, &rl, 100, 10, 5, result(10, 2, 0, 100, 3000000), 100);
    assert_int_equal(rerun_next(&rerun_rules, &s, &rl, NULL, &a, why, sizeof why), RERUN_MORE);
    step_at(&b, &rl, 100, 20, 5, result_srv(10, 2, 9, 91, 3000000, 0, 9), 0);
    assert_int_equal(b.j.fix, FIX_READERS);
    assert_int_equal(rerun_next(&rerun_rules, &s, &rl, &a, &b, why, sizeof why), RERUN_MORE);
    assert_int_equal(b.ruled_out, 0);            /* the senders were not shown futile */
    rerun_sessions(&s, &rerun_rules, 100, &snd, &rd);
    assert_int_equal(snd, 20);

    /* senders ruled the server's at 100 msg/s: at 200 they are the tester's again */
    rerun_init(&s, &rerun_rules);
    step_at(&a, &rl, 100, 10, 5, result(10, 2, 0, 100, 3000000), 100);
    assert_int_equal(rerun_next(&rerun_rules, &s, &rl, NULL, &a, why, sizeof why), RERUN_MORE);
    step_at(&b, &rl, 100, 20, 5, result(10, 2, 0, 100, 3000000), 100);
    assert_int_equal(rerun_next(&rerun_rules, &s, &rl, &a, &b, why, sizeof why), RERUN_JUDGED);
    assert_int_equal(b.ruled_out, 1u << FIX_SENDERS);
    step_at(&c, &rl, 200, 10, 5, result(10, 2, 0, 100, 3000000), 100);
    assert_int_equal(rerun_next(&rerun_rules, &s, &rl, &b, &c, why, sizeof why), RERUN_MORE);
    assert_int_equal(c.ruled_out, 0);

    /* twice 30 senders is past the 40 allowed: 40 */
    rerun_init(&s, &rerun_rules);
    step_at(&a, &rl, 100, 30, 5, result(10, 2, 0, 100, 3000000), 100);
    assert_int_equal(rerun_next(&rerun_rules, &s, &rl, NULL, &a, why, sizeof why), RERUN_MORE);
    rerun_sessions(&s, &rerun_rules, 100, &snd, &rd);
    assert_int_equal(snd, 40);

    /* a step at the longest window judged on its trend; the next step at that rate
     * that swings is run again with a longer window, not judged on its short one */
    struct rerun_rules r30 = rerun_rules;
    r30.window_max = 30000000000ull;              /* not a doubling of 10 s */
    rerun_init(&s, &r30);
    for (unsigned k = 0; k < 4; k++) {
        json_t *r = result(10, 2, 0, 100, 3000000);
        for (unsigned i = 1; i < 10; i++) {       /* up 20 a second to t = 6, then down */
            double t = i + 1.0, u = t <= 6 ? 50 + 20 * (t - 2) : 130 - 20 * (t - 6);
            json_object_set_new(json_array_get(json_object_get(r, "timeline"), i), "unread",
                                json_integer((json_int_t)u));
        }
        struct step_record *cur = k % 2 ? &b : &a, *prev = k % 2 ? &a : &b;
        step_at(cur, &rl, 100, 10, 5, r, 0);
        enum rerun_action next = rerun_next(&r30, &s, &rl, k ? prev : NULL, cur, why, sizeof why);
        if (k == 0 || k == 3) {
            assert_int_equal(next, RERUN_WINDOW);
            assert_int_equal(cur->ruled_out, 0);
            assert_true(s.window == 20000000000ull);
        } else if (k == 1) {
            assert_int_equal(next, RERUN_WINDOW);
            assert_true(s.window == 30000000000ull);  /* doubled, kept to window_max */
        } else {
            assert_int_equal(next, RERUN_JUDGED);
            assert_int_equal(cur->ruled_out, 1u << FIX_WINDOW);
        }
    }
    free(a.f);
    free(b.f);
    free(c.f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(brackets_known_ceilings), cmocka_unit_test(goes_down_and_stops),
        cmocka_unit_test(noisy_ceiling_reconfirmed), cmocka_unit_test(confirmation_rounds),
        cmocka_unit_test(needs_by_rate), cmocka_unit_test(readers_sized_by_rate), cmocka_unit_test(tester_ruled_out),
        cmocka_unit_test(window_figures), cmocka_unit_test(tester_limits), cmocka_unit_test(where_the_backlog_grows),
        cmocka_unit_test(swing_is_not_a_trend), cmocka_unit_test(rerun_adds_senders_until_futile),
        cmocka_unit_test(rerun_stops_when_the_tester_cannot), cmocka_unit_test(rerun_doubles_the_window),
        cmocka_unit_test(rerun_rules_out_only_what_a_step_showed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
