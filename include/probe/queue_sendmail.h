/* queue_sendmail: sendmail's queue (queue_sendmail.c): qfID and dfID per message. */
#ifndef MS_PROBE_QUEUE_SENDMAIL_H
#define MS_PROBE_QUEUE_SENDMAIL_H

#include <dirent.h>

#include "probe/queue_walk.h"

/* Walks one directory of a sendmail queue, counting or reading. */
void queue_sendmail_walk(struct walk *w, DIR *d, int depth);
/* Whether name is a sendmail qfID or hfID: what says a directory holds sendmail's
 * queue while auto has not decided. */
int queue_sendmail_qf(const char *name);

#endif
