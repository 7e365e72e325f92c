/* queue_postfix: Postfix's queue (queue_postfix.c): one file per message, read as Postfix
 * writes its records. */
#ifndef MS_PROBE_QUEUE_POSTFIX_H
#define MS_PROBE_QUEUE_POSTFIX_H

#include <dirent.h>

#include "probe/queue_walk.h"

/* Walks one directory of a Postfix queue, counting or reading. */
void queue_postfix_walk(struct walk *w, DIR *d, int depth, int ready_check);
/* Reads every message of Postfix queues dirs[n] (ready_check as for the walk) once,
 * though qmgr moves files between them meanwhile. */
void queue_postfix_scan(struct walk *w, char *const *dirs, const unsigned char *ready_check, size_t n);

#endif
