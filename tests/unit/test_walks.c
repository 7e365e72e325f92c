/* test_walks: what keeps the collector cheap must not cost a figure. The store and
 * PSS are read at walks (every server.walk_interval, and at the baseline, the final
 * sample and a sample asked for fresh), the spool at walks and every
 * server.queue_interval; samples between readings carry the last one's figures,
 * never zeros. The store's listings are reused only for directories
 * that did not change: every change a maildir sees (delivery, a move from new/ to cur/,
 * an expunge, a new folder) is counted at the next walk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "probe/collector.h"
#include "testfiles.h"

#define MS 1000000ull

static void move(const char *from, const char *to)
{
    char a[320];
    snprintf(a, sizeof a, "%s", tf_path(from));
    assert_int_equal(rename(a, tf_path(to)), 0);
}

static void drop(const char *name)
{
    assert_int_equal(unlink(tf_path(name)), 0);
}

static uint64_t samples_of(struct collector *c)
{
    struct probe_summary s;
    collector_summary(c, &s);
    uint64_t n = s.samples;
    probe_summary_free(&s);
    return n;
}

/* Waits (at most 10 s) until `more` samples were added after the call. */
static void wait_samples(struct collector *c, uint64_t more)
{
    uint64_t want = samples_of(c) + more, deadline = mono_ns() + 10000 * MS;
    while (samples_of(c) < want && mono_ns() < deadline)
        usleep(5000);
    assert_true(samples_of(c) >= want);
}

static struct collector *start(struct tested_server *cfg, const char *spool, uint64_t sample, uint64_t walk,
                               uint64_t queue)
{
    char err[400], me[32];
    memset(cfg, 0, sizeof *cfg);
    cfg->sample_interval = sample;
    cfg->walk_interval = walk;
    cfg->queue_interval = queue;
    cfg->spool_format = "files";
    strlist_add(&cfg->spool_dirs, spool);
    snprintf(me, sizeof me, "%d", (int)getpid());
    strlist_add(&cfg->pids, me);
    struct collector *c = collector_start(cfg, mono_ns(), err, sizeof err);
    if (!c)
        print_error("%s\n", err);
    assert_non_null(c);
    return c;
}

static void stop(struct collector *c, struct tested_server *cfg)
{
    collector_free(c);
    strlist_free(&cfg->spool_dirs);
    strlist_free(&cfg->pids);
}

/* Between walks every sample carries the baseline's spool and PSS (not zeros, not
 * new readings); a sample asked for fresh, and the final one, read them anew. */
static void samples_between_walks_carry_the_last_walk(void **state)
{
    tf_put("q1/a", "x");
    tf_put("q1/b", "x");
    struct tested_server cfg;
    struct collector *c = start(&cfg, tf_path("q1"), 10 * MS, 3600000 * MS, 3600000 * MS);
    struct probe_summary s;
    collector_summary(c, &s);
    assert_int_equal(s.last.spool, 2);
    uint64_t pss = s.last.pss;
    assert_true(pss > 0);
    probe_summary_free(&s);

    tf_put("q1/c", "x");
    wait_samples(c, 3);
    collector_summary(c, &s);
    assert_true(s.samples >= 4);
    assert_int_equal(s.last.spool, 2);          /* carried: no walk since the baseline */
    assert_int_equal(s.last.pss, pss);
    assert_int_equal(s.spool_peak, 2);
    probe_summary_free(&s);

    assert_int_equal(collector_sample_fresh(c, 0, 10000 * MS), 0);
    struct series_now now;
    collector_now(c, &now);
    assert_int_equal(now.spool, 3);             /* asked for fresh: walked */

    tf_put("q1/d", "x");
    collector_stop(c);
    collector_now(c, &now);
    assert_int_equal(now.spool, 4);             /* the final sample walks */
    stop(c, &cfg);
}

/* The spool is counted at walks, which come every walk_interval on their own, and
 * every queue_interval between them; an interval of 0 is every sample. */
static void walks_come_every_walk_interval(void **state)
{
    const uint64_t hour = 3600000 * MS, walks[] = { 50 * MS, 0, hour, hour }, queues[] = { hour, hour, 50 * MS, 0 };
    for (int i = 0; i < 4; i++) {
        char dir[16], file[32];
        snprintf(dir, sizeof dir, "q2-%d", i);
        snprintf(file, sizeof file, "%s/a", dir);
        tf_put(file, "");
        drop(file);
        struct tested_server cfg;
        struct collector *c = start(&cfg, tf_path(dir), 10 * MS, walks[i], queues[i]);
        tf_put(file, "x");
        struct series_now now;
        uint64_t deadline = mono_ns() + 10000 * MS;
        do {
            usleep(5000);
            collector_now(c, &now);
        } while (now.spool != 1 && mono_ns() < deadline);
        assert_int_equal(now.spool, 1);
        stop(c, &cfg);
    }
}

/* A queue whose count costs more is counted less often: a deep one is not read
 * every second on the host of the server it measures. Asked for every sample (5 ms),
 * a queue of 10,000 files is counted a few times a second. */
static void a_deep_queue_is_counted_less_often(void **state)
{
    char name[32];
    for (int i = 0; i < 10000; i++) {
        snprintf(name, sizeof name, "q3/%d", i);
        tf_put(name, "");
    }
    struct tested_server cfg;
    struct collector *c = start(&cfg, tf_path("q3"), 5 * MS, 3600000 * MS, 0);
    uint64_t seen = 0, last = 0, end = mono_ns() + 1000 * MS;
    for (int i = 0; mono_ns() < end; i++) {
        snprintf(name, sizeof name, "q3/new%d", i);
        tf_put(name, "");
        struct series_now now;
        collector_now(c, &now);
        seen += now.spool != last;
        last = now.spool;
        usleep(2000);
    }
    struct probe_summary s;
    collector_summary(c, &s);
    assert_true(s.samples >= 40);        /* sampled all along */
    probe_summary_free(&s);
    print_message("%llu counts seen in 1 s\n", (unsigned long long)seen);
    assert_true(seen <= 20);
    stop(c, &cfg);
}

static struct collector *store_collector(struct tested_server *cfg, const char *dir)
{
    char err[400];
    memset(cfg, 0, sizeof *cfg);
    cfg->sample_interval = 1000 * MS;
    strlist_add(&cfg->store_dirs, dir);
    struct collector_opts o = { .manual = 1 };
    struct collector *c = collector_start_opts(cfg, mono_ns(), &o, err, sizeof err);
    if (!c)
        print_error("%s\n", err);
    assert_non_null(c);
    return c;
}

static void expect_store(struct collector *c, uint64_t messages, uint64_t bytes)
{
    collector_sample(c);
    struct series_now now;
    collector_now(c, &now);
    assert_int_equal(now.store_messages, messages);
    assert_int_equal(now.store_bytes, bytes);
}

/* A maildir store listed once its directories are old enough to trust their times,
 * then changed as a server changes it: each change counts at the next walk. */
static void every_change_of_a_cached_maildir_counts(void **state)
{
    tf_put("m/d/u1/Maildir/cur/1.M1P1.h,S=100:2,S", "");
    tf_put("m/d/u1/Maildir/new/2.M2P1.h,S=20", "");
    tf_put("m/d/u1/Maildir/tmp/3.M3P1.h", "");
    tf_put("m/d/u2/Maildir/new/4.M4P1.h", "12345"); /* no size in the name: stat */
    tf_put("m/d/u2/Maildir/cur/.keep", ""); /* a maildir has both cur/ and new/ */
    tf_put("m/d/u3/Maildir/cur/5.M5P1.h,S=7:2,", "");
    tf_put("m/d/u3/Maildir/new/.keep", "");
    struct tested_server cfg;
    struct collector *c = store_collector(&cfg, tf_path("m"));
    expect_store(c, 4, 100 + 20 + 5 + 7);
    usleep(2100 * 1000);        /* past the 2 s a listing needs to be trusted */
    expect_store(c, 4, 132);
    expect_store(c, 4, 132);    /* from the trusted listings */

    tf_put("m/d/u1/Maildir/tmp/6.M6P1.h,S=50", ""); /* delivery: tmp/ then new/ */
    expect_store(c, 4, 132);
    move("m/d/u1/Maildir/tmp/6.M6P1.h,S=50", "m/d/u1/Maildir/new/6.M6P1.h,S=50");
    expect_store(c, 5, 182);
    move("m/d/u1/Maildir/new/2.M2P1.h,S=20", "m/d/u1/Maildir/cur/2.M2P1.h,S=20:2,S"); /* read */
    expect_store(c, 5, 182);
    drop("m/d/u3/Maildir/cur/5.M5P1.h,S=7:2,"); /* expunged */
    expect_store(c, 4, 175);
    tf_put("m/d/u3/Maildir/.Sent/cur/7.M7P1.h,S=9:2,S", ""); /* a new folder */
    tf_put("m/d/u3/Maildir/.Sent/new/.hidden", "");
    expect_store(c, 5, 184);
    tf_put("m/d/u4/Maildir/cur/.keep", ""); /* a new user */
    tf_put("m/d/u4/Maildir/new/8.M8P1.h,S=1", "");
    expect_store(c, 6, 185);

    /* Changes to directories whose listing was trusted, after they aged again. */
    usleep(2100 * 1000);
    expect_store(c, 6, 185);
    drop("m/d/u2/Maildir/new/4.M4P1.h");
    tf_put("m/d/u1/Maildir/cur/9.M9P1.h,S=3:2,S", "");
    expect_store(c, 6, 183);
    collector_free(c);
    strlist_free(&cfg.store_dirs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(samples_between_walks_carry_the_last_walk),
        cmocka_unit_test(walks_come_every_walk_interval),
        cmocka_unit_test(a_deep_queue_is_counted_less_often),
        cmocka_unit_test(every_change_of_a_cached_maildir_counts),
    };
    return cmocka_run_group_tests(tests, tf_setup, tf_teardown);
}
