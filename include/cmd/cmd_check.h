/* cmd_check: `mailsoak check [--sample N] [the options of run]`: the preflight alone
 * (cmd/cmd_check.c, over preflight/check.c). */
#ifndef MS_CMD_CHECK_H
#define MS_CMD_CHECK_H

/* argv[0] is "check". 0 every check passed, 3 one found a problem, 2 bad options. */
int cmd_check(int argc, char **argv);

#endif
