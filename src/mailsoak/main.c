/* mailsoak: the table of commands and the dispatch. Each command owns its argument
 * parsing; the table is also what --help, the manual (mailsoak(1)) and the bash
 * completion are generated from (run/docs.c), so a command is added here once. */
#include <stdio.h>
#include <string.h>

#include "analyse/compare.h"
#include "analyse/merge.h"
#include "analyse/report.h"
#include "preflight/check.h"
#include "probe/serve.h"
#include "settings/config.h"
#include "cmd/cmd.h"
#include "cmd/logscan.h"
#include "run/run.h"

static int do_run(int argc, char **argv)
{
    return cmd_run(argc - 1, argv + 1);
}

static int do_check(int argc, char **argv)
{
    return cmd_check(argc - 1, argv + 1);
}

static int do_probe(int argc, char **argv)
{
    return cmd_probe(argc - 1, argv + 1);
}

static int do_config_example(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        puts("usage: mailsoak config-example\n"
             "  Prints an INI file with every key of mailsoak run, commented out at its\n"
             "  default, with its help (conf/mailsoak.conf is this output).");
        return 0;
    }
    fputs("; mailsoak run: every key at its default (conf/mailsoak.conf is this output).\n"
          "; Durations 250ms 90s 10m 1h; counts 1k = 1000; byte sizes 1k = 1024.\n\n", stdout);
    opts_example(stdout, config_opts);
    return 0;
}

static int do_doc(int argc, char **argv);

static const struct command commands[] = {
    { "run", "[-c FILE]... [--FLAG VALUE]... [--set SECTION.KEY=VALUE]... [--no-check]",
      "soak a mail server: SMTP senders, POP3 readers, a ledger of every message",
      do_run, "--no-check", 1,
      "Every key of mailsoak.conf(5) can be given in a -c FILE, with --set SECTION.KEY=VALUE, "
      "or with its flag (see OPTIONS). Without an SMTP target, run starts the reference "
      "server on free loopback ports and soaks it (the demo)." },
    { "check", "[--sample N] [the options of run]",
      "preflight with libcurl: targets, TLS, AUTH, sample logins",
      do_check, "--sample=", 1, NULL },
    { "compare", "[--format text|markdown|csv|json] [--runs] [--mark] [--force] FILE.json...",
      "the classic side-by-side table of result files",
      cmd_compare, "--format=text|markdown|csv|json --runs --mark --force", 0, NULL },
    { "report", "-o REPORT.html [--csv TIMELINE.csv] [--force] FILE.json...",
      "an HTML report with charts from result files",
      cmd_report, "-o= --output= --csv= --force", 0, NULL },
    { "merge", "FILE.json... -o MERGED.json [--force] [--label NAME]",
      "add up the result files of the shards of one load",
      cmd_merge, "-o= --output= --label= --force", 0, NULL },
    { "logscan", "[-c FILE]... [--set server.KEY=VALUE]... [--class 'NAME: ERE']... [--no-defaults] "
      "[--examples N] [--lines] [LOG...]",
      "the run's log watcher over existing logs: lines per class, to tune log_class",
      cmd_logscan, "-c= --set= --class= --no-defaults --examples= --lines", 0, NULL },
    { "probe", "[-c FILE]... [--listen ADDR:PORT] [--token TOKEN] [--set server.KEY=VALUE]...",
      "measure the server on its own host; serve the samples to Prometheus and to runs elsewhere",
      do_probe, "--listen= --token=", 1, NULL },
    { "config-example", "",
      "print an INI file with every key of run at its default",
      do_config_example, "", 0, NULL },
    { "doc", "commands|synopsis|flags|keys|bash",
      "print the generated parts of the manual, or the bash completion's data",
      do_doc, "commands synopsis flags keys bash", 0, NULL },
    { NULL, NULL, NULL, NULL, NULL, 0, NULL },
};

static int do_doc(int argc, char **argv)
{
    return docs_main(commands, argc, argv);
}

static void usage(FILE *f)
{
    fputs("usage: mailsoak COMMAND [options]\n\ncommands:\n", f);
    for (const struct command *c = commands; c->name; c++) {
        if (strlen(c->name) < 10)
            fprintf(f, "  %-9s %s\n", c->name, c->summary);
        else
            fprintf(f, "  %s\n            %s\n", c->name, c->summary);
    }
    fputs("\n'mailsoak COMMAND --help' describes a command's options; 'man mailsoak' all.\n"
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
    for (const struct command *c = commands; c->name; c++)
        if (!strcmp(argv[1], c->name))
            return c->fn(argc - 1, argv + 1);
    fprintf(stderr, "mailsoak: unknown command '%s' (see mailsoak --help)\n", argv[1]);
    return 2;
}
