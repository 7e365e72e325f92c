/* cmd_compare: `mailsoak compare FILE.json...`: the classic table of result files (cmd/cmd_compare.c). */
#ifndef MS_CMD_COMPARE_H
#define MS_CMD_COMPARE_H

#include <stdio.h>

/* argv[0] is "compare". 0, 1 (an output could not be written) or 2 (bad arguments,
 * files refused). */
int cmd_compare(int argc, char **argv);
/* The same, printing on out and err instead of stdout and stderr (the tests'). */
int cmd_compare_io(int argc, char **argv, FILE *out, FILE *err);

#endif
