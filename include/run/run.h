/* run: the controller of `mailsoak run` — setup, the run window (send, drain,
 * sweep), the interval line, signals; at its end the result, as plain data
 * (result/run_result.h), goes to result/'s writers. */
#ifndef MS_RUN_H
#define MS_RUN_H

#include <jansson.h>

#include "result/run_result.h"
#include "settings/config.h"

/* `mailsoak run` once its settings are read (cmd/cmd_run.c): the demo's server when no
 * target is set (its run shortened to 60 s when demo_duration), the preflight when
 * run.check, then the soak; SIGINT and SIGTERM end it in order. The exit status. */
int run_configured(struct config *cfg, int demo_duration);

#endif
