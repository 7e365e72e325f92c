/* cmd_logscan: `mailsoak logscan`, the log watcher over existing logs (cmd/cmd_logscan.c). */
#ifndef MS_CMD_LOGSCAN_H
#define MS_CMD_LOGSCAN_H

/* argv[0] is "logscan". Returns the exit status. */
int cmd_logscan(int argc, char **argv);

#endif
