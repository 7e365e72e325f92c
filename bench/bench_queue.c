/* bench_queue: what the queue costs the collector: counting a big queue in messages
 * (every sample) and reading every queued message's X-Mailsoak-Id (the sweep's
 * passes and the end of a run), for Postfix and Exim queues made of copies of the
 * queue files those MTAs wrote (tests/fixtures/queue), beside the old count of
 * files. Best of ROUNDS, page cache warm.
 * Usage: queue [MESSAGES] [DIR]   (MESSAGES default 20000; DIR default $TMPDIR or /tmp)
 * Run from the top of the repository (it reads tests/fixtures/queue). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "probe/queue.h"

enum { ROUNDS = 5 };

static void die(const char *what)
{
    fprintf(stderr, "bench_queue: %s: %s\n", what, strerror(errno));
    exit(1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die(path);
    static char buf[1 << 16];
    *n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

static void put(const char *path, const char *data, size_t n, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0 || write(fd, data, n) != (ssize_t)n)
        die(path);
    close(fd);
}

static void mkdirs(const char *path)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    if (system(cmd) != 0)
        die(path);
}

/* A Postfix queue_directory: the real deferred file, n times in deferred/X/. */
static void make_postfix(const char *root, long n)
{
    char path[4096];
    size_t len;
    const char *file = slurp("tests/fixtures/queue/postfix/deferred/4/47551A78CC4", &len);
    static const char *const queues[] = { "incoming", "active", "deferred", "hold", "maildrop", "defer" };
    for (int q = 0; q < 6; q++) {
        snprintf(path, sizeof path, "%s/%s", root, queues[q]);
        mkdirs(path);
    }
    for (int h = 0; h < 16; h++) {
        snprintf(path, sizeof path, "%s/deferred/%X", root, h);
        mkdirs(path);
    }
    for (long i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/deferred/%lX/%08lXAB", root, i % 16, i);
        put(path, file, len, 0700);
    }
}

/* An Exim spool_directory: the real -H and -D files, n times in input/. */
static void make_exim(const char *root, long n)
{
    char path[4096], id[32];
    size_t hlen, dlen;
    char *h = strdup(slurp("tests/fixtures/queue/exim/input/1xXxvJ-00059h-0A-H", &hlen));
    const char *d = slurp("tests/fixtures/queue/exim/input/1xXxvJ-00059h-0A-D", &dlen);
    snprintf(path, sizeof path, "%s/input", root);
    mkdirs(path);
    snprintf(path, sizeof path, "%s/msglog", root);
    mkdirs(path);
    for (long i = 0; i < n; i++) {
        snprintf(id, sizeof id, "1xXxvJ-%06lX-0A", i);
        snprintf(path, sizeof path, "%s/input/%s-H", root, id);
        put(path, h, hlen, 0640);
        snprintf(path, sizeof path, "%s/input/%s-D", root, id);
        put(path, d, dlen, 0640);
    }
    free(h);
}

static void bench(const char *label, const char *dir, enum queue_format fmt, long n)
{
    struct queue *q = queue_new(dir, fmt);
    double count = 1e9, scan = 1e9;
    uint64_t counted = 0;
    struct queue_totals t = { 0 };
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_s();
        counted = queue_count(q);
        double t1 = now_s();
        memset(&t, 0, sizeof t);
        if (fmt != QUEUE_FILES)
            queue_scan(q, NULL, NULL, &t);
        double t2 = now_s();
        count = t1 - t0 < count ? t1 - t0 : count;
        scan = t2 - t1 < scan ? t2 - t1 : scan;
    }
    if (fmt == QUEUE_FILES)
        printf("  %-40s %8llu counted  count %7.1f ms\n", label, (unsigned long long)counted, count * 1e3);
    else
        printf("  %-40s %8llu counted  count %7.1f ms  read ids %7.1f ms (%.1f us/message, %llu with id)\n", label,
               (unsigned long long)counted, count * 1e3, scan * 1e3, scan * 1e6 / (double)n,
               (unsigned long long)t.with_id);
    queue_free(q);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    const char *base = argc > 2 ? argv[2] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char root[1024], dir[1100];
    snprintf(root, sizeof root, "%s/mailsoak-queue.XXXXXX", base);
    if (!mkdtemp(root))
        die(root);
    printf("queue cost, %ld queued messages, best of %d (page cache warm)\n", n, ROUNDS);
    snprintf(dir, sizeof dir, "%s/postfix", root);
    make_postfix(dir, n);
    bench("postfix queue_directory (hashed)", dir, QUEUE_AUTO, n);
    bench("same, counted as files", dir, QUEUE_FILES, n);
    snprintf(dir, sizeof dir, "%s/exim", root);
    make_exim(dir, n);
    bench("exim spool_directory", dir, QUEUE_AUTO, n);
    bench("same, counted as files (-H and -D)", dir, QUEUE_FILES, n);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : 1;
}
