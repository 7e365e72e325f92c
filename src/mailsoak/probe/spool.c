/* spool: the configured queue directories, each a struct queue in the configured
 * format: set-up checks, the per-sample count and the per-message scan. */
#include "probe/spool.h"

#include <stdio.h>
#include <stdlib.h>

#include "lib/alloc.h"
#include "probe/sample.h"

struct spool {
    struct queue **q;
    unsigned char *awaited;
    size_t n;
};

struct spool *spool_new(const struct tested_server *cfg, char *err, size_t errlen)
{
    const char *name = cfg->spool_format && *cfg->spool_format ? cfg->spool_format : "auto";
    enum queue_format fmt;
    if (queue_format_parse(name, &fmt) < 0) {
        probe_fail(err, errlen, "server.spool_format: '%s': expected auto, postfix, exim, opensmtpd, "
                   "sendmail or files", name);
        return NULL;
    }
    struct spool *s = xcalloc(1, sizeof *s);
    s->q = xcalloc(cfg->spool_dirs.n, sizeof *s->q);
    s->awaited = xcalloc(cfg->spool_dirs.n, 1);
    for (size_t i = 0; i < cfg->spool_dirs.n; i++) {
        char why[400];
        s->q[s->n++] = queue_new(cfg->spool_dirs.v[i], fmt);
        int rc = queue_check(s->q[i], why, sizeof why);
        if (rc < 0) {
            probe_fail(err, errlen, "server.spool_dir: '%s': %s", cfg->spool_dirs.v[i], why);
            spool_free(s);
            return NULL;
        }
        s->awaited[i] = rc == 1;
    }
    return s;
}

void spool_free(struct spool *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        queue_free(s->q[i]);
    free(s->q);
    free(s->awaited);
    free(s);
}

const char *spool_awaited(const struct spool *s, size_t i)
{
    for (size_t k = 0; s && k < s->n; k++)
        if (s->awaited[k] && i-- == 0)
            return queue_path(s->q[k]);
    return NULL;
}

const char *spool_path(const struct spool *s, size_t i)
{
    return s && i < s->n ? queue_path(s->q[i]) : NULL;
}

const char *spool_layout(const struct spool *s, size_t i)
{
    return s && i < s->n ? queue_layout(s->q[i]) : NULL;
}

uint64_t spool_count(struct spool *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += queue_count(s->q[i]);
    return n;
}

void spool_scan(struct spool *s, queue_msg_fn fn, void *ctx, struct queue_totals *t)
{
    for (size_t i = 0; i < s->n; i++)
        queue_scan(s->q[i], fn, ctx, t);
}
