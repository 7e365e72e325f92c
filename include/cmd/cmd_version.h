/* cmd_version: `mailsoak version` (and `mailsoak --version`, cmd/cmd.c): the build's
 * version on stdout (cmd/cmd_version.c). */
#ifndef MS_CMD_VERSION_H
#define MS_CMD_VERSION_H

/* argv[0] is "version". 0, or 2 on an argument (it takes none). */
int cmd_version(int argc, char **argv);

/* "mailsoak VERSION\n" on stdout; 0. */
int cmd_print_version(void);

#endif
