/* Unit tests of the verdict (verdict/verdict.c): its state (proven, failed,
 * unproven, no proof) and headline from the ledger's outcomes; "lost 0" with half
 * the mail unproven says so; the remedy measured from the run (the server's
 * delivery rate, 80 % of it as the rate to rerun with, the sweep time the pending
 * mail needs at that rate); kept up as verdict/keptup.c judged it, the server
 * cleared when its side shows our readers fell behind, the queue's growth named
 * where it was counted and the backlog's where it was not, and a queue's rate never
 * from two counts close together; the send window's samples (the first interval and
 * the ramp left out, a short last entry replacing the one before); a run that sent or read nothing names the target and its most
 * frequent error; a run the tester held back says so, and says the server's when its
 * queue grew under the lighter load all the same; a run whose sessions mostly
 * failed says so beside a proven ledger. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "verdict/verdict.h"

struct fix {
    struct counters c;
    struct ledger_outcome lo;
    struct err_count err[3];
    struct verdict_input in;
    struct run_verdict v;
};

/* 60 s of sending at 300 msg/s, all of it read: 18000 messages. */
static struct fix *clean(void)
{
    static struct fix f;
    memset(&f, 0, sizeof f);
    f.c = (struct counters){ .sent = 18000, .read = 18000, .smtp_sessions = 6000, .pop3_sessions = 3000 };
    f.lo = (struct ledger_outcome){ .accepted = 18000, .delivered = 18000 };
    f.in = (struct verdict_input){
        .c = &f.c, .lo = &f.lo, .settled = -1, .senders = 20, .readers = 10, .elapsed_s = 70,
        .send = { .seconds = 60, .accepted = 18000, .read = 17000 }, .sweep_timeout_s = 60, .settle_s = 10,
        .err = f.err,
    };
    return &f;
}

static struct run_verdict *make(struct fix *f)
{
    verdict_make(&f->in, &f->v);
    return &f->v;
}

static void everything_read_once_is_proven(void **st)
{
    struct run_verdict *v = make(clean());
    assert_int_equal(v->state, VERDICT_PROVEN);
    assert_string_equal(v->headline, "PROVEN: all 18000 accepted messages delivered exactly once");
    assert_true(v->proven_share == 1);
    assert_string_equal(v->remedy, "");
    assert_int_equal(v->kept_up, -1);           /* the queue was not counted */
}

static void losses_fail(void **st)
{
    struct fix *f = clean();
    f->lo.lost = 3;
    f->lo.corrupted = 1;
    f->lo.delivered = 17996;
    struct run_verdict *v = make(f);
    assert_int_equal(v->state, VERDICT_FAILED);
    assert_string_equal(v->headline, "FAILED: 3 lost, 0 duplicated, 1 corrupted of 18000 accepted");
    assert_non_null(strstr(v->remedy, "server's logs"));
    /* true of merge too, which prints no examples above its verdict */
    assert_null(strstr(v->remedy, "above"));
    assert_non_null(strstr(v->remedy, "run.ledger_csv lists every one"));
}

/* The run: sent 18666, read 8692, lost 0, pending 9974 (queued 3715,
 * unsettled 6259). */
static void half_unproven_says_so_and_what_to_change(void **st)
{
    struct fix *f = clean();
    f->c.sent = 18666;
    f->c.read = 8692;
    f->lo = (struct ledger_outcome){ .accepted = 18666, .delivered = 8692, .pending = 9974,
                                     .pending_by = { [PR_QUEUED] = 3715, [PR_UNSETTLED] = 6259 } };
    f->in.settled = 0;
    f->in.swept = 1;
    f->in.elapsed_s = 180;                       /* 60 s of sending, 120 of drain and sweep */
    f->in.send = (struct verdict_window){ .seconds = 60, .accepted = 18666, .read = 3000, .has_spool = 1,
                                          .spool_t0 = 1, .spool_t1 = 59, .spool_first = 0, .spool_last = 5800 };
    struct keptup_result k = { .outcome = KEPTUP_BEHIND, .value = 300, .bound = 15 };
    f->in.kept = &k;
    struct run_verdict *v = make(f);
    assert_int_equal(v->state, VERDICT_UNPROVEN);
    assert_non_null(strstr(v->headline, "UNPROVEN: 9974 of 18666 accepted messages (53.4 %)"));
    assert_non_null(strstr(v->headline, "\"lost 0\" says nothing"));
    assert_true(v->pending_share[PR_QUEUED] > 0.199 && v->pending_share[PR_QUEUED] < 0.2);
    /* the queue grew 100 msg/s of the 311 accepted: the server delivered 211 */
    assert_int_equal(v->kept_up, 0);
    assert_true(v->queue_rate > 99.9 && v->queue_rate < 100.1);
    assert_true(v->delivered_rate > 211 && v->delivered_rate < 212);
    /* after the window it read (8692 - 3000) / 120 = 47 msg/s: the higher rate counts */
    assert_true(v->suggested_rate == 168);       /* 80 % of 211.1 */
    assert_true(v->more_sweep_s == 58);          /* 9974 / 211.1 = 47.2 s, + settle 10 s */
    assert_string_equal(v->remedy, "the server delivered 211 msg/s (it accepted 311): rerun with smtp.rate = 168, "
                                   "or give the sweep 58 s more (run.sweep_timeout = 118s)");
}

/* A server that fell behind empties its queue faster once nobody sends (the testbed
 * accepted 152 msg/s and delivered 127, then read its backlog at 187): the rate to
 * send at is 80 % of what it delivered while accepting, never more than it failed at. */
static void behind_suggests_what_it_delivered_while_accepting(void **st)
{
    struct fix *f = clean();
    f->c.sent = 9150;
    f->c.read = 9150;
    f->lo = (struct ledger_outcome){ .accepted = 9150, .delivered = 9150 };
    f->in.elapsed_s = 80;                        /* 60 s of sending, 20 of drain */
    f->in.send = (struct verdict_window){ .seconds = 60, .accepted = 9150, .read = 5400, .has_spool = 1,
                                          .spool_t0 = 1, .spool_t1 = 59, .spool_first = 0, .spool_last = 1542 };
    struct keptup_result k = { .outcome = KEPTUP_BEHIND, .value = 62.5, .bound = 7.6 };
    f->in.kept = &k;
    struct run_verdict *v = make(f);
    assert_int_equal(v->kept_up, 0);
    assert_true(v->after_rate > 187 && v->after_rate < 188);  /* (9150 - 5400) / 20 */
    assert_true(v->delivered_rate > 125 && v->delivered_rate < 126);
    assert_true(v->suggested_rate == 100);       /* 80 % of 125.9 */
    assert_non_null(strstr(v->remedy, "rerun with smtp.rate = 100"));
}

/* A send shorter than run.interval leaves no send window in the timeline (or a merged
 * file's has none): the remedy names the rate the server delivered at after it, and no
 * accepted rate it never measured ("it accepted 0"). */
static void no_send_window_no_accepted_rate(void **st)
{
    struct fix *f = clean();
    f->c.read = 9000;
    f->lo = (struct ledger_outcome){ .accepted = 18000, .delivered = 9000, .pending = 9000,
                                     .pending_by = { [PR_UNSETTLED] = 9000 } };
    f->in.settled = 0;
    f->in.swept = 1;
    f->in.elapsed_s = 90;
    f->in.send = (struct verdict_window){ 0 };
    struct run_verdict *v = make(f);
    assert_true(v->accepted_rate == 0);
    assert_true(v->suggested_rate == 80);       /* 80 % of 9000 read in 90 s */
    assert_string_equal(v->remedy, "the server delivered 100 msg/s: rerun with smtp.rate = 80, or give the sweep "
                                   "100 s more (run.sweep_timeout = 160s)");
}

/* One message unproven in a million reads as such, never as 0.0 %. */
static void a_share_never_rounds_to_its_bound(void **st)
{
    struct fix *f = clean();
    f->c.sent = 1000000;
    f->c.read = 999999;
    f->lo = (struct ledger_outcome){ .accepted = 1000000, .delivered = 999999, .pending = 1,
                                     .pending_by = { [PR_UNSETTLED] = 1 } };
    f->in.settled = 0;
    f->in.swept = 1;
    struct run_verdict *v = make(f);
    assert_int_equal(v->state, VERDICT_UNPROVEN);
    assert_non_null(strstr(v->headline, "UNPROVEN: 1 of 1000000 accepted messages (<0.01 %)"));
}

static void kept_up_is_the_judgements(void **st)
{
    struct fix *f = clean();
    /* the readers fell 1000 behind (mail in mailboxes), the queue stayed flat: the
     * judgement says the tester's, and the server's side showed it kept up */
    f->in.send = (struct verdict_window){ .seconds = 60, .accepted = 18000, .read = 17000, .has_spool = 1,
                                          .spool_t0 = 1, .spool_t1 = 59, .spool_first = 40, .spool_last = 60 };
    struct keptup_result k = { .outcome = KEPTUP_TESTER, .value = 16.7, .bound = 15, .server_seen = 1 };
    f->in.kept = &k;
    struct run_verdict *v = make(f);
    assert_int_equal(v->kept_up, 1);
    assert_int_equal(v->kept.outcome, KEPTUP_TESTER);
    assert_true(v->backlog_rate > 16 && v->backlog_rate < 17);
    assert_string_equal(v->remedy, "");
    k.server_seen = 0;                        /* our readers, and the server's side not seen */
    assert_int_equal(make(f)->kept_up, -1);
    /* fell behind, the queue counted: the queue's growth is named */
    f->in.send.spool_last = 1200;
    k = (struct keptup_result){ .outcome = KEPTUP_BEHIND, .value = 19.5, .bound = 15 };
    v = make(f);
    assert_int_equal(v->kept_up, 0);
    assert_int_equal(v->state, VERDICT_PROVEN);
    assert_non_null(strstr(v->remedy, "its queue grew 20.0 msg/s"));
    assert_non_null(strstr(v->remedy, "rerun with smtp.rate = 224"));   /* 80 % of 300 - 20 */
    /* not counted: the backlog's growth is, and the delivered rate is what was read */
    f->in.send.has_spool = 0;
    v = make(f);
    assert_int_equal(v->kept_up, 0);
    assert_false(v->has_queue_rate);
    assert_non_null(strstr(v->remedy, "its backlog grew 19.5 msg/s"));
    assert_non_null(strstr(v->remedy, "rerun with smtp.rate = 226"));   /* 80 % of 17000 / 60 */
    k.outcome = KEPTUP_YES;
    assert_int_equal(make(f)->kept_up, 1);
    k.outcome = KEPTUP_UNKNOWN;
    assert_int_equal(make(f)->kept_up, -1);
    f->in.kept = NULL;
    assert_int_equal(make(f)->kept_up, -1);
}

/* The 20 s run: two counts of the queue 0.8 s apart made "queue grew 758.3
 * msg/s" of 628 accepted. Counts spanning under half the window make no rate. */
static void no_queue_rate_from_close_counts(void **st)
{
    struct fix *f = clean();
    f->in.send = (struct verdict_window){ .seconds = 20, .accepted = 628, .read = 0, .has_spool = 1,
                                          .spool_t0 = 19.2, .spool_t1 = 20, .spool_first = 0, .spool_last = 607 };
    struct run_verdict *v = make(f);
    assert_false(v->has_queue_rate);
    assert_true(v->delivered_rate == v->read_rate);
    f->in.send.spool_t0 = 10;
    v = make(f);
    assert_true(v->has_queue_rate);
    f->in.send.walk_s = 10;                      /* the store's walks do not hold the queue's count */
    v = make(f);
    assert_true(v->has_queue_rate);
    f->in.send.queue_s = 10;                     /* 10 s apart: one count read twice */
    v = make(f);
    assert_false(v->has_queue_rate);
}

static void window_samples(void **st)
{
    struct verdict_window w = { 0 };
    /* interval 10 s, no ramp: warm until 10 s, a gap of 5 s */
    for (unsigned i = 1; i <= 6; i++) {
        struct verdict_sample s = { .t = 10.0 * i, .unread = 100 + 21.0 * 10 * i, .sent = 850 * i, .visits = 48 * i,
                                    .empty_visits = 30 * i, .has_spool = i >= 2, .spool = 200.0 * i };
        verdict_window_sample(&w, &s, 10, 5);
    }
    assert_int_equal(w.nkept, 6);
    struct verdict_sample early = { .t = 4 };
    verdict_window_sample(&w, &early, 10, 5);                    /* not before the warm-up: ignored */
    assert_int_equal(w.nkept, 6);
    assert_true(w.kept[0].t == 10);
    struct verdict_sample late = { .t = 60.4, .unread = 100 + 21.0 * 60.4, .sent = 5134, .visits = 290,
                                   .has_spool = 1, .spool = 1208 };
    verdict_window_sample(&w, &late, 10, 5);                     /* the phase's short last entry replaces */
    assert_int_equal(w.nkept, 6);
    assert_true(w.kept[5].t == 60.4);
    struct keptup_result k;
    verdict_keptup(&w, 0.05, 0, &k);
    assert_int_equal(k.outcome, KEPTUP_BEHIND);
    assert_true(fabs(k.value - 21) < 0.2);
    assert_true(fabs(k.bound - 0.05 * (5134 - 850) / 50.4) < 1e-9);   /* 5 % of the 85 msg/s accepted */
    assert_non_null(strstr(k.why, "of 242 reader visits"));      /* 290 - 48 */
    /* a queue counted every 30 s: its counts over 50 s span one reading, and say nothing */
    w.queue_s = 30;
    verdict_keptup(&w, 0.05, 0, &k);
    assert_int_equal(k.outcome, KEPTUP_BEHIND);
    for (unsigned i = 0; i < w.nkept; i++)
        w.kept[i].spool = 40;
    verdict_keptup(&w, 0.05, 0, &k);
    assert_int_equal(k.outcome, KEPTUP_BEHIND);   /* flat, but not seen over two counts */
    w.queue_s = 10;
    w.walk_s = 30;                                /* the store's walks are not the queue's */
    /* the queue counted, but flat: the growth is in the mailboxes, our readers' */
    for (unsigned i = 0; i < w.nkept; i++)
        w.kept[i].spool = 40;
    verdict_keptup(&w, 0.05, 0, &k);
    assert_int_equal(k.outcome, KEPTUP_TESTER);
    verdict_keptup(&w, 0.05, 1, &k);                             /* unless the server kept the readers waiting */
    assert_int_equal(k.outcome, KEPTUP_BEHIND);
    verdict_window_free(&w);
    assert_int_equal(w.nkept, 0);
    /* 40 intervals of 1 s at 100 msg/s: enough batches for the sequential test,
     * which then decides, and says so */
    for (unsigned i = 0; i < 40; i++) {
        struct verdict_sample s = { .t = 1.0 + i, .unread = 200 + (i % 2 ? 10 : -10), .sent = 100 * i };
        verdict_window_sample(&w, &s, 1, 0.5);
    }
    verdict_keptup(&w, 0.05, 0, &k);
    assert_int_equal(k.outcome, KEPTUP_YES);
    assert_string_equal(k.stat, KEPTUP_SPRT);
    /* a stage its own test left open is judged by the slope alone */
    verdict_keptup_slope(&w, 0.05, &k);
    assert_int_equal(k.outcome, KEPTUP_YES);
    assert_string_equal(k.stat, KEPTUP_STAT);
    for (unsigned i = 0; i < w.nkept; i++)
        w.kept[i].unread = 200 + 20.0 * i;
    verdict_keptup(&w, 0.05, 0, &k);
    assert_int_equal(k.outcome, KEPTUP_BEHIND);
    assert_string_equal(k.stat, KEPTUP_SPRT);
    assert_true(k.value > 19 && k.value < 21);
    verdict_window_free(&w);
    verdict_keptup(&w, 0.05, 0, &k);                             /* no samples: cannot tell */
    assert_int_equal(k.outcome, KEPTUP_UNKNOWN);
}

/* A fresh server's backlog fills to its steady level before it holds it: the
 * testbed at 185 msg/s, its queue and mailboxes at 2000 messages 20 s in, then
 * swinging about 1500 for ten minutes. The fill is not growth: kept up, where a
 * test from the first interval said behind at 16 s. A backlog that grows all
 * along is behind as ever. */
static void the_fill_is_not_growth(void **st)
{
    (void)st;
    struct verdict_window w = { 0 };
    for (unsigned i = 1; i <= 600; i++) {
        double u = i <= 20 ? 100.0 * i : 1500 + 500 * cos(2 * M_PI * (i - 20) / 80.0);
        struct verdict_sample s = { .t = i, .unread = u, .sent = 185 * i };
        verdict_window_sample(&w, &s, 1, 0.5);
    }
    struct keptup_result k;
    verdict_keptup(&w, 0.05, 0, &k);
    assert_int_equal(k.outcome, KEPTUP_YES);
    assert_string_equal(k.stat, KEPTUP_SPRT);
    assert_true(k.filled_s > 20 && k.filled_s <= 120);    /* said: judged once filled */
    for (unsigned i = 0; i < w.nkept; i++)
        w.kept[i].unread = 100.0 * (i + 1) + (i % 4 < 2 ? 30 : -30);
    verdict_keptup(&w, 0.05, 0, &k);
    assert_int_equal(k.outcome, KEPTUP_BEHIND);
    assert_true(k.filled_s == 0);                         /* growing all along: judged whole */
    verdict_window_free(&w);
}

static void nothing_sent_or_read_names_the_target(void **st)
{
    struct fix *f = clean();
    f->c = (struct counters){ .errors = 3 };
    f->lo = (struct ledger_outcome){ 0 };
    f->in.send = (struct verdict_window){ .seconds = 2 };
    f->err[0] = (struct err_count){ "smtp_banner_unanswered", 3 };
    f->in.nerr = 1;
    struct run_verdict *v = make(f);
    assert_int_equal(v->state, VERDICT_FAILED);
    assert_string_equal(v->headline, "FAILED: nothing was sent (3 errors, most smtp_banner_unanswered)");
    assert_string_equal(v->remedy, "no message was accepted: check smtp.target (smtp_banner_unanswered: see errors "
                                   "by class)");
    f = clean();
    f->c.read = 0;
    f->lo.delivered = 0;
    f->lo.pending = 18000;
    f->lo.pending_by[PR_UNSWEPT] = 18000;
    f->c.errors = 40;
    f->err[0] = (struct err_count){ "smtp_rcpt_450", 4 };
    f->err[1] = (struct err_count){ "pop3_pass_auth", 30 };
    f->err[2] = (struct err_count){ "pop3_user_other", 6 };
    f->in.nerr = 3;
    v = make(f);
    assert_int_equal(v->state, VERDICT_FAILED);
    assert_string_equal(v->headline, "FAILED: none of the 18000 accepted messages was read (40 errors, most "
                                     "pop3_pass_auth)");
    assert_non_null(strstr(v->remedy, "pop3.target and the users' passwords (pop3_pass_auth"));
}

static void no_readers_no_proof(void **st)
{
    struct fix *f = clean();
    f->in.readers = 0;
    f->c.read = 0;
    f->lo.delivered = 0;
    f->lo.pending = 18000;
    struct run_verdict *v = make(f);
    assert_int_equal(v->state, VERDICT_NO_PROOF);
    assert_non_null(strstr(v->headline, "NO PROOF: no readers"));
}

static void the_tester_held_back(void **st)
{
    struct fix *f = clean();
    f->in.tester_limited = 1;
    f->lo.delivered = 17000;
    f->lo.pending = 1000;
    f->in.settled = 0;
    struct run_verdict *v = make(f);
    assert_non_null(strstr(v->remedy, "this run measured mailsoak, not the server"));
    /* held back, and the server's queue grew under the lighter load all the same: the
     * server's limit, never "measured mailsoak" (the testbed at 367 msg/s: 353
     * accepted, 285 delivered, 35,165 arrivals late with 20 senders busy) */
    f->in.send = (struct verdict_window){ .seconds = 60, .accepted = 18000, .read = 17000, .has_spool = 1,
                                          .spool_t0 = 1, .spool_t1 = 59, .spool_first = 40, .spool_last = 1200 };
    struct keptup_result k = { .outcome = KEPTUP_BEHIND, .value = 19.5, .bound = 15 };
    f->in.kept = &k;
    v = make(f);
    assert_int_equal(v->kept_up, 0);
    assert_null(strstr(v->remedy, "measured mailsoak"));
    assert_non_null(strstr(v->remedy, "the server fell behind even the part of the load it got"));
    assert_non_null(strstr(v->remedy, "rerun with smtp.rate = 224"));
}

static void a_queue_that_does_not_move(void **st)
{
    struct fix *f = clean();
    f->c.read = 0;
    f->c.sent = 500;
    f->lo = (struct ledger_outcome){ .accepted = 500, .pending = 500, .pending_by = { [PR_QUEUED] = 500 } };
    f->in.readers = 10;
    f->in.send = (struct verdict_window){ .seconds = 10, .accepted = 500, .read = 0 };
    struct run_verdict *v = make(f);
    assert_int_equal(v->state, VERDICT_FAILED);                  /* nothing read: the queue holds it */
    assert_non_null(strstr(v->remedy, "the server's queue still holds 500 of them, it delivered none"));
    f->c.read = 1;                                               /* one message, read at once */
    f->lo.delivered = 1;
    f->lo.pending = 499;
    f->lo.pending_by[PR_QUEUED] = 499;
    f->in.send.read = 1;
    f->in.send.has_spool = 1;
    f->in.send.spool_t0 = 1;
    f->in.send.spool_t1 = 9;
    f->in.send.spool_last = 400;
    f->in.swept = 1;
    f->in.settled = 0;
    v = make(f);
    assert_int_equal(v->state, VERDICT_UNPROVEN);
    assert_true(v->delivered_rate == 0);
    assert_non_null(strstr(v->remedy, "its queue does not move"));
}

/* 8611 of 9111 SMTP attempts refused, every accepted message read: proven, and the
 * verdict still says the load carried was not the load asked for. */
static void most_sessions_refused_says_so(void **st)
{
    struct fix *f = clean();
    f->c.smtp_sessions = 500;
    f->err[0] = (struct err_count){ "smtp_banner_421", 8600 };
    f->err[1] = (struct err_count){ "pop3_pass_auth", 40 };
    f->err[2] = (struct err_count){ "smtp_connect_io", 11 };
    f->in.nerr = 3;
    struct run_verdict *v = make(f);
    assert_int_equal(v->state, VERDICT_PROVEN);
    assert_string_equal(v->session_errors, "8611 SMTP errors in 9111 session attempts (95 %; most smtp_banner_421, "
                                           "8600): the load the server carried is not the load asked for");
    assert_true(v->session_error_share > 0.94 && v->session_error_share < 0.95);
    assert_non_null(strstr(v->remedy, "raise the server's session limits"));
    f->c.smtp_sessions = 6000;                   /* 311 of 6311 SMTP attempts failed: under 10 % */
    f->err[0].count = 300;
    v = make(f);
    assert_string_equal(v->session_errors, "");
    assert_string_equal(v->remedy, "");
    f->c.pop3_sessions = 100;                    /* POP3: 40 of 140 */
    v = make(f);
    assert_non_null(strstr(v->session_errors, "40 POP3 errors in 140 session attempts (29 %; most pop3_pass_auth, 40)"));
    /* the threshold holds at its value: 10 % of the attempts is not more than 10 % */
    f->c.pop3_sessions = 3000;
    f->c.smtp_sessions = 900;
    f->err[0].count = 89;                        /* with smtp_connect_io's 11: 100 of 1000 */
    v = make(f);
    assert_string_equal(v->session_errors, "");
    f->err[0].count = 90;                        /* 101 of 1001 */
    v = make(f);
    assert_non_null(strstr(v->session_errors, "101 SMTP errors in 1001 session attempts"));
    (void)st;
}

/* A run whose only fault is duplicates failed: it reads FAILED, not UNPROVEN, and its
 * proven share counts each message delivered once, never the copies. */
static void only_duplicates_is_a_failure(void **st)
{
    struct fix *f = clean();
    f->c.read = 18003;
    f->lo = (struct ledger_outcome){ .accepted = 18000, .delivered = 17997, .duplicated = 3 };
    struct run_verdict *v = make(f);
    assert_int_equal(v->state, VERDICT_FAILED);
    assert_string_equal(v->headline, "FAILED: 0 lost, 3 duplicated, 0 corrupted of 18000 accepted");
    assert_int_equal(v->proven, 17997);
    assert_true(v->proven_share < 1);
    (void)st;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(most_sessions_refused_says_so),
        cmocka_unit_test(only_duplicates_is_a_failure),
        cmocka_unit_test(everything_read_once_is_proven),
        cmocka_unit_test(losses_fail),
        cmocka_unit_test(half_unproven_says_so_and_what_to_change),
        cmocka_unit_test(kept_up_is_the_judgements),
        cmocka_unit_test(no_queue_rate_from_close_counts),
        cmocka_unit_test(window_samples),
        cmocka_unit_test(the_fill_is_not_growth),
        cmocka_unit_test(no_send_window_no_accepted_rate),
        cmocka_unit_test(behind_suggests_what_it_delivered_while_accepting),
        cmocka_unit_test(a_share_never_rounds_to_its_bound),
        cmocka_unit_test(nothing_sent_or_read_names_the_target),
        cmocka_unit_test(no_readers_no_proof),
        cmocka_unit_test(the_tester_held_back),
        cmocka_unit_test(a_queue_that_does_not_move),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
