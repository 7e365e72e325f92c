/* fuzz_queue: the queue readers on queue files an MTA (or an attacker able to write
 * into the queue) wrote: the first byte picks the format (Postfix, Exim, sendmail,
 * OpenSMTPD), the rest is its queue file (for OpenSMTPD, the message and the
 * envelope), read by queue_scan as at the end of a run. */
#include "fuzz.h"

#include <sys/stat.h>

#include "probe/queue.h"

static char root[64];

static void remove_root(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        abort();
}

static void mkdirs(const char *rel)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    if (mkdir(path, 0700) < 0)
        abort();
}

static void put(const char *rel, const uint8_t *data, size_t size)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    if (!f || (size && fwrite(data, 1, size, f) != size))
        abort();
    fclose(f);
    if (chmod(path, 0700) < 0)      /* a complete Postfix queue file */
        abort();
}

static void noop(void *ctx, const struct queue_msg *m)
{
    (void)ctx;
    /* every byte the caller may read: the id and each recipient */
    for (size_t i = 0; m->id && i < m->idlen; i++)
        if (!m->id[i])
            abort();
    for (size_t i = 0; i < m->nrcpts; i++)
        if (strlen(m->rcpts[i]) > 4096)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!root[0]) {
        snprintf(root, sizeof root, "/tmp/fuzz_queue.XXXXXX");
        if (!mkdtemp(root))
            abort();
        atexit(remove_root);
        static const char *const dirs[] = { "pf", "pf/incoming", "pf/active", "pf/deferred", "pf/deferred/A",
                                            "ex", "ex/input", "sm", "sm/qf", "od", "od/queue", "od/queue/9a",
                                            "od/queue/9a/9a0b1c2d", "od/purge" };
        for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
            mkdirs(dirs[i]);
    }
    if (!size)
        return 0;
    static const char *const files[] = { "pf/deferred/A/ABCDEF123", "ex/input/1xXxvJ-00059h-07-H",
                                         "sm/qf/qf6AU9twvC026128", "od/queue/9a/9a0b1c2d/message" };
    static const char *const queues[] = { "pf", "ex", "sm", "od" };
    static const enum queue_format fmts[] = { QUEUE_POSTFIX, QUEUE_EXIM, QUEUE_SENDMAIL, QUEUE_OPENSMTPD };
    unsigned k = data[0] % 4;
    put(files[k], data + 1, size - 1);
    if (k == 3)
        put("od/queue/9a/9a0b1c2d/9a0b1c2d00000001", data + 1, size - 1);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", root, queues[k]);
    struct queue *q = queue_new(path, fmts[k]);
    struct queue_totals t = { 0 };
    queue_scan(q, noop, NULL, &t);
    if (t.messages != 1)
        abort();                    /* one queued message, whatever its content */
    (void)queue_count(q);
    queue_free(q);
    return 0;
}
