/* queue_smtpd: OpenSMTPD's queue (queue_smtpd.c): queue/XX/MSGID/ per message. */
#ifndef MS_PROBE_QUEUE_SMTPD_H
#define MS_PROBE_QUEUE_SMTPD_H

#include <dirent.h>

#include "probe/queue_walk.h"

/* Walks an OpenSMTPD queue directory, counting or reading. */
void queue_smtpd_walk(struct walk *w, DIR *d);

#endif
