/* cmd_config_example: `mailsoak config-example` prints every key of the settings table
 * commented out at its default, with its help (lib/opts.c writes it). */
#include "cmd/cmd_config_example.h"

#include <stdio.h>

#include "lib/cli.h"
#include "settings/config.h"

static void usage(FILE *f)
{
    fputs("usage: mailsoak config-example\n"
          "  Prints an INI file with every key of mailsoak run, commented out at its\n"
          "  default, with its help (conf/mailsoak.conf is this output).\n", f);
}

int cmd_config_example(int argc, char **argv)
{
    const struct cli_cmd cmd = { .name = "mailsoak config-example", .usage = usage, .words = CLI_NONE };
    int rc;
    if (!cli_parse(&cmd, argc, argv, stdout, stderr, NULL, NULL, &rc))
        return rc;
    fputs("; mailsoak run: every key at its default (conf/mailsoak.conf is this output).\n"
          "; Durations 250ms 90s 10m 1h; counts 1k = 1000; byte sizes 1k = 1024.\n\n", stdout);
    opts_example(stdout, config_opts);
    return 0;
}
