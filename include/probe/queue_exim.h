/* queue_exim: Exim's queue (queue_exim.c): input/ID-H and ID-D per message. */
#ifndef MS_PROBE_QUEUE_EXIM_H
#define MS_PROBE_QUEUE_EXIM_H

#include <dirent.h>

#include "probe/queue_walk.h"

/* Walks one directory of an Exim spool, counting or reading. */
void queue_exim_walk(struct walk *w, DIR *d, int depth);
/* Whether name is an Exim message file ID-SUFFIX ('H', 'D', 'J'): what says a
 * directory holds Exim's queue while auto has not decided. */
int queue_exim_file(const char *name, char suffix);

#endif
