/* collector_test: what the collector's unit tests (test_procset, test_collector)
 * share: a clock, private temporary directories and files, and the collector's data
 * formatted with the run's writers. Include it after <cmocka.h> (its asserts). */
#ifndef MS_COLLECTOR_TEST_H
#define MS_COLLECTOR_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe/collector.h"
#include "result/probe_output.h"
#include "tmpdir.h"

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline char *tmpdir(void)
{
    static char buf[8][256];
    static int next;
    char *p = buf[next++ % 8];
    test_tmpname(p, sizeof buf[0], "test_collector.XXXXXX");
    assert_non_null(mkdtemp(p));
    return p;
}

static inline void rmtree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static inline void put(const char *dir, const char *rel, const char *content)
{
    char path[512], cmd[600];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static inline uint64_t summary_u64(json_t *summary, const char *key)
{
    json_t *v = json_object_get(summary, key);
    assert_non_null(v);
    assert_true(json_is_integer(v));
    return (uint64_t)json_integer_value(v);
}

/* The collector hands out plain data; these format it with the run's writers, as
 * `mailsoak run` does, so each test reads what a result file would hold. */
static inline void collector_json_summary(struct collector *c, json_t *summary)
{
    struct probe_summary ps;
    collector_summary(c, &ps);
    probe_json_summary(&ps, summary);
    probe_summary_free(&ps);
}

static inline void collector_json_interval(struct collector *c, json_t *entry, uint64_t from_ns, uint64_t to_ns)
{
    struct probe_interval iv;
    collector_interval(c, from_ns, to_ns, &iv);
    probe_json_interval(&iv, entry);
    probe_interval_free(&iv);
}

static inline json_t *summary_of(struct collector *c)
{
    json_t *s = json_object();
    collector_json_summary(c, s);
    return s;
}

#endif
