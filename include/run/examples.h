/* examples: the messages of a run not delivered exactly once, shown one by one with
 * the server's evidence (examples.c). */
#ifndef MS_RUN_EXAMPLES_H
#define MS_RUN_EXAMPLES_H

#include "run/run.h"
#include "run/sources.h"

extern const char *const example_kind_names[EX_KINDS];

/* The examples of each kind from the ledger (after the verdicts), then
 * their trails from a second pass over the logs the local collector followed (after
 * sources_stop). Freed with examples_free. */
void examples_collect(struct run_result *res, struct sources *src);
void examples_free(struct run_result *res);

#endif
