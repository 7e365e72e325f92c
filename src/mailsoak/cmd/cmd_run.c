/* cmd_run: `mailsoak run`: reads the settings and hands them to the run (run/run.c).
 * A run without targets is the demo, shortened to 60 s unless the command line
 * sets the duration. */
#include "cmd/cmd_run.h"

#include <stdio.h>
#include <string.h>

#include "lib/cli.h"
#include "run/run.h"
#include "settings/config.h"

static void usage(FILE *f)
{
    fputs("usage: mailsoak run [-c FILE]... [--FLAG VALUE]... [--set SECTION.KEY=VALUE]...\n"
          "\n"
          "Runs a soak: SMTP senders and POP3 readers for a fixed window, then a drain,\n"
          "then prints a table (and writes --json). Every key below can be set in an INI\n"
          "file (-c, repeatable, later files win), with its --flag, or with --set.\n"
          "Durations: 250ms 90s 10m 1h. Counts: 1k = 1000. Byte sizes: 1k = 1024.\n", f);
    config_help(f);
}

static int duration_on_command_line(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (!strncmp(argv[i], "--duration", 10) || strstr(argv[i], "run.duration="))
            return 1;
    return 0;
}

int cmd_run(int argc, char **argv)
{
    struct config cfg = { 0 };
    const struct cli_cmd cmd = { .name = "mailsoak run", .usage = usage, .words = CLI_SETTINGS,
                                 .settings = config_from_words, .ud = &cfg };
    int rc;
    if (cli_parse(&cmd, argc, argv, stdout, stderr, NULL, NULL, &rc))
        rc = run_configured(&cfg, !duration_on_command_line(argc, argv));
    config_free(&cfg);
    return rc;
}
