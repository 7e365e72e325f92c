/* cmd_version: `mailsoak version` prints the build's version (lib/version.c: git's
 * description of the checkout, or debian/changelog's), the one a result file's
 * "version" key carries, so a result can be matched to the program that wrote it. */
#include "cmd/cmd_version.h"

#include <stdio.h>

#include "lib/cli.h"
#include "lib/version.h"

static void usage(FILE *f)
{
    fputs("usage: mailsoak version\n"
          "  Prints 'mailsoak VERSION', the version result files carry (also: mailsoak --version).\n", f);
}

int cmd_print_version(void)
{
    printf("mailsoak %s\n", mailsoak_version);
    return 0;
}

int cmd_version(int argc, char **argv)
{
    const struct cli_cmd cmd = { .name = "mailsoak version", .usage = usage, .words = CLI_NONE };
    int rc;
    if (!cli_parse(&cmd, argc, argv, stdout, stderr, NULL, NULL, &rc))
        return rc;
    return cmd_print_version();
}
