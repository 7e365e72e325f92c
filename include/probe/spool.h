/* spool: the server's queue ([server] spool_dir, spool_format), counted in messages
 * per sample and read message by message when the run asks (probe/queue.h has the
 * formats). */
#ifndef MS_PROBE_SPOOL_H
#define MS_PROBE_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "probe/queue.h"
#include "settings/config.h"

struct spool;

/* The spool_dir list in spool_format. NULL with err (naming the key and the value)
 * for a setting that cannot work; directories that do not exist yet are waited for
 * (spool_awaited). */
struct spool *spool_new(const struct tested_server *cfg, char *err, size_t errlen);
void spool_free(struct spool *s);

/* The i-th directory that did not exist when the spool was set up (NULL past the
 * last): what the caller warns about at the start. */
const char *spool_awaited(const struct spool *s, size_t i);

/* The i-th spool_dir and what it was recognised as ("postfix queue root", ...; ""
 * while auto has not decided or it does not exist yet); NULL past the last. */
const char *spool_path(const struct spool *s, size_t i);
const char *spool_layout(const struct spool *s, size_t i);

/* Queued messages, from directory entries only: cheap enough for every sample. */
uint64_t spool_count(struct spool *s);

/* Reads every queued message (queue_scan) of every directory. Not thread-safe
 * against spool_count on the same spool: give the reader its own spool_new. */
void spool_scan(struct spool *s, queue_msg_fn fn, void *ctx, struct queue_totals *t);

#endif
