/* cmd: the dispatch over the table of commands, and mailsoak's own --help and
 * --version. */
#include "cmd/cmd.h"

#include <stdio.h>
#include <string.h>

#include "cmd/cmd_version.h"

static void usage(FILE *f)
{
    fputs("usage: mailsoak COMMAND [options]\n\ncommands:\n", f);
    for (const struct command *c = mailsoak_commands; c->name; c++) {
        if (strlen(c->name) < 10)
            fprintf(f, "  %-9s %s\n", c->name, c->summary);
        else
            fprintf(f, "  %s\n            %s\n", c->name, c->summary);
    }
    fputs("\n'mailsoak COMMAND --help' describes a command's options; 'man mailsoak' all\n"
          "(in a build tree: man -l build/doc/mailsoak.1).\n"
          "\n"
          "exit status: 0 done (a run: every gate passed), 1 run-time failure, 2 bad\n"
          "configuration or arguments, 3 the preflight check found a problem (run,\n"
          "check), 4 an integrity gate failed (mail lost, duplicated, corrupted, or\n"
          "too little proven), 5 only quality-of-service gates failed, 128+N ended\n"
          "early by signal N (the report is still written).\n", f);
}

int cmd_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
        return cmd_print_version();
    for (const struct command *c = mailsoak_commands; c->name; c++)
        if (!strcmp(argv[1], c->name))
            return c->fn(argc - 1, argv + 1);
    fprintf(stderr, "mailsoak: unknown command '%s' (see mailsoak --help)\n", argv[1]);
    return 2;
}
