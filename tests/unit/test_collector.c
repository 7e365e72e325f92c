/* test_collector: the collector's spool and store counts on directories built here
 * and on stores written by Dovecot, its settings, and log hits on the timeline
 * (its process set: test_procset). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "probe/collector.h"
#include "probe/store.h"
#include "result/probe_output.h"

#include "collector_test.h"

static int collector_table_row(struct collector *c, int i, char *name, size_t nlen, char *value, size_t vlen)
{
    struct probe_summary ps;
    collector_summary(c, &ps);
    int more = probe_table_row(&ps, i, name, nlen, value, vlen);
    probe_summary_free(&ps);
    return more;
}

/* ------------------------------------------------------------------------------ */
/* Spool and store */

static struct collector *watch_dirs(struct tested_server *cfg, const char *spool, const char *store,
                                    const char *format)
{
    char err[400];
    memset(cfg, 0, sizeof *cfg);
    cfg->sample_interval = 1000000000ull;
    cfg->store_format = (char *)format;
    if (spool)
        strlist_add(&cfg->spool_dirs, spool);
    if (store)
        strlist_add(&cfg->store_dirs, store);
    struct collector_opts o = { .manual = 1 };
    struct collector *c = collector_start_opts(cfg, now_ns(), &o, err, sizeof err);
    if (!c)
        print_error("%s\n", err);
    assert_non_null(c);
    return c;
}

static void release(struct collector *c, struct tested_server *cfg)
{
    collector_free(c);
    strlist_free(&cfg->spool_dirs);
    strlist_free(&cfg->store_dirs);
}

/* A Postfix queue root: messages in hashed subdirectories count, a link does not, and
 * an incoming file counts once cleanup marked it complete (owner execute bit). */
static void spool_counts_queue_files_in_hashed_dirs(void **state)
{
    char *q = tmpdir(), path[200];
    put(q, "incoming/4Ml2Wd1x3Kz9vD", "x");
    snprintf(path, sizeof path, "%s/incoming/4Ml2Wd1x3Kz9vD", q);
    assert_int_equal(chmod(path, 0700), 0);
    put(q, "incoming/4Ml2Wd1x3Kz9vG", "being written");
    put(q, "active/4Ml2Wd1x3Kz9vE", "x");
    put(q, "deferred/A/4Ml2Wd1x3Kz9vA", "x");
    put(q, "deferred/B/4Ml2Wd1x3Kz9vB", "x");
    put(q, "deferred/B/4Ml2Wd1x3Kz9vC", "x");
    snprintf(path, sizeof path, "%s/hold", q);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/active/link", q);
    assert_int_equal(symlink("/etc/passwd", path), 0);     /* not a queue file */
    struct tested_server cfg;
    struct collector *c = watch_dirs(&cfg, q, NULL, NULL);
    struct series_now now;
    collector_now(c, &now);
    assert_int_equal(now.spool, 5);
    put(q, "incoming/4Ml2Wd1x3Kz9vF", "x");
    snprintf(path, sizeof path, "%s/incoming/4Ml2Wd1x3Kz9vF", q);
    assert_int_equal(chmod(path, 0700), 0);
    collector_stop(c);
    json_t *s = summary_of(c);
    assert_int_equal(summary_u64(s, "spool"), 6);
    assert_int_equal(summary_u64(s, "spool_peak"), 6);
    assert_true(json_is_null(json_object_get(s, "mem")));
    assert_true(json_is_null(json_object_get(s, "store_messages")));
    json_decref(s);
    char name[32], value[32];
    assert_int_equal(collector_table_row(c, 0, name, sizeof name, value, sizeof value), 1);
    assert_string_equal(name, "spool");
    assert_string_equal(value, "6");
    assert_int_equal(collector_table_row(c, 1, name, sizeof name, value, sizeof value), 1);
    assert_string_equal(name, "mem");
    assert_string_equal(value, "-");
    assert_int_equal(collector_table_row(c, 6, name, sizeof name, value, sizeof value), 1);
    assert_string_equal(name, "log hits");
    assert_int_equal(collector_table_row(c, 7, name, sizeof name, value, sizeof value), 1);
    assert_string_equal(name, "cpu");
    assert_string_equal(value, "-");
    /* no parts, no database: nothing more is shown */
    int i = 8, rc;
    while ((rc = collector_table_row(c, i, name, sizeof name, value, sizeof value)) < 0)
        i++;
    assert_int_equal(rc, 0);
    release(c, &cfg);
    rmtree(q);
}

static void maildir_store(void **state)
{
    char *m = tmpdir();
    put(m, "test.local/u1/Maildir/cur/1700000000.M1P2.host,S=1234,W=1260:2,S", "abc");  /* size from name */
    put(m, "test.local/u1/Maildir/new/1700000001.M3P4.host", "12345");                   /* from stat */
    put(m, "test.local/u1/Maildir/tmp/1700000002.M5P6.host", "being delivered");
    put(m, "test.local/u1/Maildir/dovecot-uidlist", "3 V1 N3\n");
    put(m, "test.local/u1/Maildir/.Sent/cur/1700000003.M7P8.host,S=10:2,", "0123456789");
    put(m, "test.local/u1/Maildir/.Sent/new/.hidden", "x");
    put(m, "test.local/u2/Maildir/new/1700000004.M9P1.host,S=7", "1234567");
    put(m, "test.local/u2/Maildir/cur/keep", "");
    struct tested_server cfg;
    const char *formats[] = { "maildir", "auto" };
    for (int i = 0; i < 2; i++) {
        struct collector *c = watch_dirs(&cfg, NULL, m, formats[i]);
        struct series_now now;
        collector_now(c, &now);
        assert_int_equal(now.store_messages, 5);
        assert_int_equal(now.store_bytes, 1234 + 5 + 10 + 7 + 0);
        release(c, &cfg);
    }
    rmtree(m);
}

static void sdbox_store(void **state)
{
    char *m = tmpdir();
    put(m, "u1/sdbox/mailboxes/INBOX/dbox-Mails/u.1", "0123456789");
    put(m, "u1/sdbox/mailboxes/INBOX/dbox-Mails/u.22", "01234");
    put(m, "u1/sdbox/mailboxes/INBOX/dbox-Mails/dovecot.index.log", "not read for sdbox");
    put(m, "u1/sdbox/mailboxes/INBOX/dbox-Mails/u.tmp", "x");
    put(m, "u1/sdbox/mailboxes/Trash/dbox-Mails/u.3", "012");
    struct tested_server cfg;
    const char *formats[] = { "sdbox", "auto" };
    for (int i = 0; i < 2; i++) {
        struct collector *c = watch_dirs(&cfg, NULL, m, formats[i]);
        struct series_now now;
        collector_now(c, &now);
        assert_int_equal(now.store_messages, 3);
        assert_int_equal(now.store_bytes, 18);
        release(c, &cfg);
    }
    rmtree(m);
}

static const char *fixture(const char *rel)
{
    static char path[4096];
    const char *top = getenv("TOP");
    snprintf(path, sizeof path, "%s/tests/fixtures/store/%s", top ? top : ".", rel);
    return path;
}

/* Counts Dovecot itself gave for these files: see tests/fixtures/store/README. */
static void copy_tree(const char *from, const char *to)
{
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "cp -a '%s/.' '%s/'", from, to);
    assert_int_equal(system(cmd), 0);
}

static void mdbox_store_written_by_dovecot(void **state)
{
    struct tested_server cfg;
    struct series_now now;
    const char *formats[] = { "mdbox", "auto" };
    for (int i = 0; i < 2; i++) {
        struct collector *c = watch_dirs(&cfg, NULL, fixture("mdbox"), formats[i]);
        collector_now(c, &now);
        assert_int_equal(now.store_messages, 36 + 2 + 194);
        assert_int_equal(now.store_bytes, 5820);
        release(c, &cfg);
    }
    /* Unchanged mailboxes come from the cache; a changed one is replayed again. */
    char *m = tmpdir(), cmd[300];
    copy_tree(fixture("mdbox"), m);
    struct collector *c = watch_dirs(&cfg, NULL, m, "mdbox");
    collector_sample(c);
    collector_now(c, &now);
    assert_int_equal(now.store_messages, 232);
    snprintf(cmd, sizeof cmd, "rm '%s/user2/mdbox/mailboxes/INBOX/dbox-Mails/dovecot.index.log'", m);
    assert_int_equal(system(cmd), 0);
    collector_sample(c);
    collector_now(c, &now);
    assert_int_equal(now.store_messages, 36 + 2 + 193);     /* its index alone: one expunge short */
    release(c, &cfg);
    rmtree(m);
}

static void mbox_store_and_its_cache(void **state)
{
    struct tested_server cfg;
    struct collector *c = watch_dirs(&cfg, NULL, fixture("mbox"), "mbox");
    struct series_now now;
    collector_now(c, &now);
    assert_int_equal(now.store_messages, 3 + 2 + 2 + 2);
    assert_int_equal(now.store_bytes, 652 + 123 + 114 + 3846);
    release(c, &cfg);

    char *m = tmpdir(), path[200];
    copy_tree(fixture("mbox"), m);
    c = watch_dirs(&cfg, NULL, m, "auto");
    collector_now(c, &now);
    assert_int_equal(now.store_messages, 9);
    snprintf(path, sizeof path, "%s/user4/mbox", m);
    FILE *f = fopen(path, "a");
    fputs("\nFrom a@b Sat Nov 29 19:00:02 2025\nSubject: three\n\nFrom here, an unescaped line\n", f);
    fclose(f);
    collector_sample(c);
    collector_now(c, &now);
    assert_int_equal(now.store_messages, 10);        /* an undated "From " body line separates nothing */
    assert_int_equal(truncate(path, 0), 0);
    collector_sample(c);
    collector_now(c, &now);
    assert_int_equal(now.store_messages, 7);
    release(c, &cfg);
    rmtree(m);
}


/* An mbox of n messages with bodies of many lengths (some above any read buffer, some
 * empty, some with a Content-Length that lands on the next separator, some with an
 * undated "From " body line), so that separators fall at every offset of a read. */
static uint64_t write_mbox(const char *path, int n)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    uint64_t x = 12345;
    for (int i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t len = i % 50 == 7 ? 0 : i % 97 == 3 ? 70000 + (x >> 50) : (size_t)(x >> 33) % 9000;
        if (i)
            fputc('\n', f);
        fprintf(f, "From a@b Sat Nov 29 19:00:%02d 2025\nSubject: %d\n", i % 60, i);
        if (i % 3 == 0)
            fprintf(f, "Content-Length: %zu\n", len);
        fputc('\n', f);
        for (size_t k = 0; k < len; k++) {
            int c = k + 1 == len || (k * 31 + (size_t)i) % 80 == 0 ? '\n' : 'a' + (int)(k % 26);
            if (k + 14 < len && k % 4000 == 100 && i % 5 == 1) {
                fputs("\nFrom here on", f);
                k += 12;
                continue;
            }
            fputc(c, f);
        }
    }
    fclose(f);
    return (uint64_t)n;
}

/* The mbox is read in bounded pieces: every separator counts, wherever it falls. */
static void mbox_counted_across_reads(void **state)
{
    char *d = tmpdir(), path[200];
    snprintf(path, sizeof path, "%s/mbox", d);
    uint64_t n = write_mbox(path, 400);
    int fd = open(path, O_RDONLY);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    int err = -1;
    assert_int_equal(store_mbox_count(fd, st.st_size, &err), n);
    assert_int_equal(err, 0);
    close(fd);
    rmtree(d);
}

/* Dovecot truncates an mbox on expunge, perhaps between the walker's fstat and its
 * reads: what is left counts, without a fault. */
static void mbox_shrinking_under_the_walker(void **state)
{
    char *d = tmpdir(), path[200];
    snprintf(path, sizeof path, "%s/mbox", d);
    write_mbox(path, 400);
    int fd = open(path, O_RDONLY);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    /* Cut just after the separator line of the 201st message: 201 separators are left. */
    char *text = malloc((size_t)st.st_size);
    assert_int_equal(pread(fd, text, (size_t)st.st_size, 0), st.st_size);
    off_t cut = 0;
    for (int seen = 0; seen < 200; cut++)
        seen += !memcmp(text + cut, "\n\nFrom a@b ", 11);
    cut += 1 + 40;
    free(text);
    assert_int_equal(truncate(path, cut), 0);
    int err;
    assert_int_equal(store_mbox_count(fd, st.st_size, &err), 201);
    assert_int_equal(err, 0);                  /* a shrink is no error: the file's new end */
    assert_int_equal(truncate(path, 0), 0);
    assert_int_equal(store_mbox_count(fd, st.st_size, &err), 0);
    close(fd);
    /* mail is anyone's: a first message with two X-IMAP headers is one folder's
     * internal data, not a count below zero */
    FILE *f = fopen(path, "w");
    fputs("From a@b Sat Nov 29 19:00:00 2025\nX-IMAP: 1\nX-IMAP: 2\n\nx\n\n"
          "From a@b Sat Nov 29 19:00:01 2025\nSubject: real\n\ny\n", f);
    fclose(f);
    fd = open(path, O_RDONLY);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(store_mbox_count(fd, st.st_size, &err), 1);
    close(fd);
    /* a read that fails is said, with its reason, never a crash or a silent 0 */
    write_mbox(path, 3);
    fd = open(path, O_WRONLY);
    assert_int_equal(store_mbox_count(fd, 4096, &err), 0);
    assert_int_equal(err, EBADF);
    close(fd);
    rmtree(d);
}

/* The table's mem row: the server's own footprint (PSS) first, the RSS sum beside
 * it (counting each shared page once per process, several times the real use). */
static void mem_row_is_pss_with_rss_beside(void **state)
{
    struct probe_summary ps;
    memset(&ps, 0, sizeof ps);
    ps.has.active = ps.has.procs = 1;
    ps.mem_peak = 698ull << 20;
    ps.pss_peak = 75ull << 20;
    char name[32], value[64];
    assert_int_equal(probe_table_row(&ps, 1, name, sizeof name, value, sizeof value), 1);
    assert_string_equal(name, "mem");
    assert_non_null(strstr(value, "(RSS "));
    assert_true(strncmp(value, "75", 2) == 0);       /* PSS first */
    assert_non_null(strstr(value, "698"));
    ps.pss_peak = 0;                                  /* no PSS walk: RSS, said so */
    assert_int_equal(probe_table_row(&ps, 1, name, sizeof name, value, sizeof value), 1);
    assert_non_null(strstr(value, "698"));
    assert_non_null(strstr(value, " RSS"));
}

/* ------------------------------------------------------------------------------ */
/* Settings, logs and output */

static void bad_settings_name_the_key_and_value(void **state)
{
    char err[400];
    struct tested_server cfg = { .sample_interval = 1000000000ull };
    struct collector *c;

    strlist_add(&cfg.processes, "ma(ster");
    assert_null(collector_start(&cfg, now_ns(), err, sizeof err));
    assert_non_null(strstr(err, "server.process"));
    assert_non_null(strstr(err, "ma(ster"));
    strlist_free(&cfg.processes);
    strlist_add(&cfg.processes, "^no-such-process-name$");
    assert_null(collector_start(&cfg, now_ns(), err, sizeof err));
    assert_non_null(strstr(err, "matches no running process"));
    strlist_free(&cfg.processes);

    strlist_add(&cfg.pidfiles, "/nonexistent/master.pid");
    assert_null(collector_start(&cfg, now_ns(), err, sizeof err));
    assert_non_null(strstr(err, "server.pidfile"));
    assert_non_null(strstr(err, "/nonexistent/master.pid"));
    strlist_free(&cfg.pidfiles);
    char *d = tmpdir(), pf[128];
    snprintf(pf, sizeof pf, "%s/bad.pid", d);
    put(d, "bad.pid", "pid\n");
    strlist_add(&cfg.pidfiles, pf);
    assert_null(collector_start(&cfg, now_ns(), err, sizeof err));
    assert_non_null(strstr(err, "does not hold a process id"));
    strlist_free(&cfg.pidfiles);
    put(d, "bad.pid", "999999999\n");
    strlist_add(&cfg.pidfiles, pf);
    assert_null(collector_start(&cfg, now_ns(), err, sizeof err));
    assert_non_null(strstr(err, "not running"));
    strlist_free(&cfg.pidfiles);

    strlist_add(&cfg.pids, "12x");
    assert_null(collector_start(&cfg, now_ns(), err, sizeof err));
    assert_non_null(strstr(err, "server.pid: '12x'"));
    strlist_free(&cfg.pids);

    /* A queue that does not exist yet is waited for; a file is not a queue. */
    strlist_add(&cfg.spool_dirs, "/nonexistent/queue");
    c = collector_start(&cfg, now_ns(), err, sizeof err);
    assert_non_null(c);
    collector_free(c);
    strlist_free(&cfg.spool_dirs);
    strlist_add(&cfg.spool_dirs, pf);
    assert_null(collector_start(&cfg, now_ns(), err, sizeof err));
    assert_non_null(strstr(err, "server.spool_dir: '"));
    assert_non_null(strstr(err, "not a directory"));
    strlist_free(&cfg.spool_dirs);
    strlist_add(&cfg.spool_dirs, d);
    cfg.spool_format = "qmail";
    assert_null(collector_start(&cfg, now_ns(), err, sizeof err));
    assert_non_null(strstr(err, "server.spool_format: 'qmail'"));
    cfg.spool_format = NULL;
    strlist_free(&cfg.spool_dirs);
    strlist_add(&cfg.store_dirs, pf);
    assert_null(collector_start(&cfg, now_ns(), err, sizeof err));
    assert_non_null(strstr(err, "server.store_dir"));
    assert_non_null(strstr(err, "not a directory"));
    strlist_free(&cfg.store_dirs);
    strlist_add(&cfg.store_dirs, d);
    cfg.store_format = "maildirs";
    assert_null(collector_start(&cfg, now_ns(), err, sizeof err));
    assert_non_null(strstr(err, "server.store_format: 'maildirs'"));
    cfg.store_format = NULL;
    cfg.sample_interval = 0;
    assert_null(collector_start(&cfg, now_ns(), err, sizeof err));
    assert_non_null(strstr(err, "server.sample_interval"));
    strlist_free(&cfg.store_dirs);

    /* Nothing to sample is not an error. */
    c = collector_start(&cfg, now_ns(), err, sizeof err);
    assert_non_null(c);
    struct series_now now;
    collector_now(c, &now);
    assert_false(now.active);
    char name[32], value[32];
    assert_int_equal(collector_table_row(c, 0, name, sizeof name, value, sizeof value), 0);
    json_t *s = summary_of(c), *e = json_object();
    assert_true(json_is_null(json_object_get(s, "spool")));
    assert_true(json_is_null(json_object_get(s, "log_hits")));
    collector_json_interval(c, e, 0, now_ns());
    assert_null(json_object_get(e, "server"));
    json_decref(s);
    json_decref(e);
    collector_stop(c);
    collector_free(c);
    rmtree(d);
}

static void log_hits_on_the_timeline(void **state)
{
    char *d = tmpdir(), log[128], err[400];
    snprintf(log, sizeof log, "%s/maillog", d);
    put(d, "maillog", "Nov 29 19:40:00 localhost postfix/qmgr[1]: panic: before the run\n");
    struct tested_server cfg = { .sample_interval = 10000000ull, .log_defaults = 1, .log_examples = 5 };
    strlist_add(&cfg.logs, log);
    uint64_t t0 = now_ns();
    struct collector *c = collector_start(&cfg, t0, err, sizeof err);
    assert_non_null(c);
    FILE *f = fopen(log, "a");
    fputs("Nov 29 19:40:01 localhost postfix/smtpd[2]: timeout after DATA from localhost[127.0.0.1]\n", f);
    fputs("Nov 29 19:40:01 localhost postfix/smtpd[2]: connect from localhost[127.0.0.1]\n", f);
    fclose(f);
    /* A sample after the lines were written, asked for and waited on (a sleep
     * is no proof the sampler ran: 27 of 70 runs failed at a load of 13-16). */
    assert_int_equal(collector_sample_fresh(c, 0, 30 * 1000000000ull), 0);
    uint64_t mid = now_ns();
    struct series_now now;
    collector_now(c, &now);
    assert_int_equal(now.log_hits, 1);
    f = fopen(log, "a");
    fputs("Nov 29 19:40:02 lmtp(3): Error: Couldn't lock /m/u/mbox: Resource temporarily unavailable\n", f);
    fputs("Nov 29 19:40:02 lmtp(3): Error: dotlock file was overridden\n", f);
    fclose(f);
    collector_stop(c);
    uint64_t end = now_ns();

    json_t *e1 = json_object(), *e2 = json_object();
    collector_json_interval(c, e1, t0, mid);
    collector_json_interval(c, e2, mid, end);
    json_t *h1 = json_object_get(json_object_get(e1, "server"), "log_hits");
    json_t *h2 = json_object_get(json_object_get(e2, "server"), "log_hits");
    assert_int_equal(json_integer_value(json_object_get(h1, "timeout")), 1);
    assert_int_equal(json_integer_value(json_object_get(h1, "lock")), 0);
    assert_int_equal(json_integer_value(json_object_get(h2, "timeout")), 0);
    assert_int_equal(json_integer_value(json_object_get(h2, "lock")), 2);
    assert_int_equal(json_integer_value(json_object_get(h2, "fatal")), 0);
    assert_true(json_is_null(json_object_get(json_object_get(e1, "server"), "mem")));
    json_decref(e1);
    json_decref(e2);

    json_t *s = summary_of(c);
    assert_int_equal(summary_u64(s, "log_hits"), 3);
    json_t *lock = json_object_get(json_object_get(s, "log_classes"), "lock");
    assert_int_equal(json_integer_value(json_object_get(lock, "count")), 2);
    json_t *ex = json_object_get(lock, "examples");
    assert_int_equal(json_array_size(ex), 2);
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(ex, 0), "line")), "Couldn't lock"));
    double t = json_real_value(json_object_get(json_array_get(ex, 0), "t"));
    /* stamped when the sampler read it: after mid, by the final sample (the
     * result's times are cut to the millisecond) */
    assert_true(t + 0.001 >= (double)(mid - t0) / 1e9 && t <= (double)(end - t0) / 1e9);
    json_decref(s);
    char name[32], value[32];
    assert_int_equal(collector_table_row(c, 6, name, sizeof name, value, sizeof value), 1);
    assert_string_equal(value, "3");
    collector_free(c);
    strlist_free(&cfg.logs);
    rmtree(d);
}

/* SQLite's lock waits (server.database = sqlite:) come from the logs' lock_wait
 * class, counted in the sample that read the line: an interval ending at that sample
 * holds them, not the next one. Each of SQLite's three wordings is one wait. */
static void sqlite_lock_waits_in_their_sample(void **state)
{
    char *d = tmpdir(), log[128], err[400];
    snprintf(log, sizeof log, "%s/maillog", d);
    put(d, "maillog", "");
    struct tested_server cfg = { .sample_interval = 10000000ull, .log_defaults = 1, .log_examples = 5,
                                 .database = "sqlite:" };
    strlist_add(&cfg.logs, log);
    uint64_t t0 = now_ns();
    struct collector *c = collector_start(&cfg, t0, err, sizeof err);
    if (!c)
        print_error("%s\n", err);
    assert_non_null(c);
    FILE *f = fopen(log, "a");
    fputs("Dec  1 22:03:40 auth-worker(28727): Warning: sqlite: finalize failed: database is locked (5)\n", f);
    fputs("Dec  1 22:03:40 store: sqlite3_step: database table is locked: t\n", f);
    fputs("Dec  1 22:03:40 store: sqlite3_prepare: database schema is locked: main\n", f);
    fclose(f);
    assert_int_equal(collector_sample_fresh(c, 0, 30 * 1000000000ull), 0);
    uint64_t mid = now_ns();
    f = fopen(log, "a");
    fputs("Dec  1 22:03:41 store: sqlite3_step: database is locked\n", f);
    fclose(f);
    collector_stop(c);
    uint64_t end = now_ns();
    json_t *e1 = json_object(), *e2 = json_object();
    collector_json_interval(c, e1, t0, mid);
    collector_json_interval(c, e2, mid, end);
    json_t *d1 = json_object_get(json_object_get(e1, "server"), "db");
    json_t *d2 = json_object_get(json_object_get(e2, "server"), "db");
    assert_non_null(d1);
    assert_int_equal(json_integer_value(json_object_get(d1, "lock_waits")), 3);
    assert_int_equal(json_integer_value(json_object_get(d2, "lock_waits")), 1);
    json_decref(e1);
    json_decref(e2);
    collector_free(c);
    strlist_free(&cfg.logs);
    rmtree(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spool_counts_queue_files_in_hashed_dirs),
        cmocka_unit_test(sqlite_lock_waits_in_their_sample),
        cmocka_unit_test(maildir_store),
        cmocka_unit_test(sdbox_store),
        cmocka_unit_test(mdbox_store_written_by_dovecot),
        cmocka_unit_test(mbox_store_and_its_cache),
        cmocka_unit_test(mbox_counted_across_reads),
        cmocka_unit_test(mbox_shrinking_under_the_walker),
        cmocka_unit_test(mem_row_is_pss_with_rss_beside),
        cmocka_unit_test(bad_settings_name_the_key_and_value),
        cmocka_unit_test(log_hits_on_the_timeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
