/* cmd_config_example: `mailsoak config-example`: an INI file with every key of run at
 * its default, with its help; conf/mailsoak.conf is this output (cmd/cmd_config_example.c). */
#ifndef MS_CMD_CONFIG_EXAMPLE_H
#define MS_CMD_CONFIG_EXAMPLE_H

/* argv[0] is "config-example". 0, or 2 on a bad argument. */
int cmd_config_example(int argc, char **argv);

#endif
