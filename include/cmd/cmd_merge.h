/* cmd_merge: `mailsoak merge A.json B.json ... -o all.json [--force] [--label NAME]`: the
 * shards' result files added up into one (cmd/cmd_merge.c). */
#ifndef MS_CMD_MERGE_H
#define MS_CMD_MERGE_H

#include <stdio.h>

/* argv[0] is "merge". 0, 1 (the output could not be written) or 2 (bad arguments,
 * files refused). */
int cmd_merge(int argc, char **argv);
/* The same, printing on out and err instead of stdout and stderr (the tests'). */
int cmd_merge_io(int argc, char **argv, FILE *out, FILE *err);

#endif
