/* cmd_capacity: `mailsoak capacity [the settings of run]`: the highest arrival rate a
 * server sustains with its gates passing (cmd/cmd_capacity.c, over capacity/). */
#ifndef MS_CMD_CAPACITY_H
#define MS_CMD_CAPACITY_H

/* argv[0] is "capacity". 0 when a capacity was found, 1 when none was (no rate
 * passed, or the search ended before one failed), 2 on bad settings or a step that
 * could not run, 128 + N after signal N (the report written). */
int cmd_capacity(int argc, char **argv);

#endif
