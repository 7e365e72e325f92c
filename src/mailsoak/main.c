/* mailsoak: subcommand dispatch. Each subcommand owns its argument parsing. */
#include <stdio.h>
#include <string.h>

#include "preflight/check.h"
#include "analyse/compare.h"
#include "analyse/merge.h"
#include "run/config.h"
#include "analyse/report.h"
#include "run/run.h"

static void usage(FILE *f)
{
    fputs("usage: mailsoak COMMAND [options]\n"
          "\n"
          "commands:\n"
          "  run       soak a mail server: SMTP senders, POP3 readers, a fixed window, a ledger\n"
          "            of every message, the server's own resources (mailsoak run --help)\n"
          "  check     preflight with libcurl: targets, TLS, AUTH, sample logins (mailsoak check --help)\n"

          "  compare   the classic side-by-side table of result files (mailsoak compare --help)\n"
          "  report    an HTML report with charts from result files (mailsoak report --help)\n"
          "  merge     add up the result files of the shards of one load (mailsoak merge --help)\n"
          "  config-example\n"
          "            print an INI file with every key of run at its default\n"
          "\n"
          "exit status: 0 done, 1 run-time failure, 2 bad configuration or arguments,\n"
          "3 the preflight check found a problem (run, check), 128+N ended early by\n"
          "signal N (the report is still written).\n", f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "run"))
        return cmd_run(argc - 2, argv + 2);
    if (!strcmp(argv[1], "config-example")) {
        fputs("; mailsoak run: every key at its default (conf/mailsoak.conf is this output).\n"
              "; Durations 250ms 90s 10m 1h; counts 1k = 1000; byte sizes 1k = 1024.\n\n", stdout);
        opts_example(stdout, config_opts);
        return 0;
    }
    if (!strcmp(argv[1], "check"))
        return cmd_check(argc - 2, argv + 2);
    if (!strcmp(argv[1], "compare"))
        return cmd_compare(argc - 1, argv + 1);
    if (!strcmp(argv[1], "report"))
        return cmd_report(argc - 1, argv + 1);
    if (!strcmp(argv[1], "merge"))
        return cmd_merge(argc - 1, argv + 1);
    fprintf(stderr, "mailsoak: unknown command '%s' (see mailsoak --help)\n", argv[1]);
    return 2;
}
