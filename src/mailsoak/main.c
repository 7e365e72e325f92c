/* mailsoak: subcommand dispatch. Each subcommand owns its argument parsing. */
#include <stdio.h>
#include <string.h>

#include "config.h"

int main(int argc, char **argv)
{
    struct config cfg;
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        puts("usage: mailsoak run [options]   (mailsoak run --help)");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "run")) {
        int r = config_from_args(&cfg, argc - 2, argv + 2);
        config_free(&cfg);
        return r == 1 ? 0 : r;
    }
    fprintf(stderr, "mailsoak: unknown command '%s'\n", argv[1]);
    return 2;
}
