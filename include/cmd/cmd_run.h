/* cmd_run: `mailsoak run [-c FILE]... [--FLAG VALUE]... [--set SECTION.KEY=VALUE]...`:
 * a soak of a mail server (cmd/cmd_run.c, over run/run.c). */
#ifndef MS_CMD_RUN_H
#define MS_CMD_RUN_H

/* argv[0] is "run". The exit status (their table is in `mailsoak --help`). */
int cmd_run(int argc, char **argv);

#endif
