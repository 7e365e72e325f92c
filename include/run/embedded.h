/* embedded: `mailsoak run` with no target — the zero-setup demo. Starts the
 * reference server (mailsoak-server) on free loopback ports in a temporary
 * directory, points the run at it, and stops it by PID afterwards. */
#ifndef MS_EMBEDDED_H
#define MS_EMBEDDED_H

#include <sys/types.h>

#include "settings/config.h"

struct embedded {
    pid_t pid;
    char dir[256];
};

/* Fills the run's targets (and the collector's [server] keys) in cfg. 0, or -1
 * with the reason printed. demo_duration: also shorten the run to 60 s. */
int embedded_start(struct config *cfg, struct embedded *e, int demo_duration);
void embedded_stop(struct embedded *e);

#endif
