/* mailsoak: the table of commands, and nothing else. Each command is a file of
 * cmd/ with one entry point (cmd/cmd.h says how one is added); the table is also
 * what --help, the dispatch (cmd/cmd.c), the manual (mailsoak(1)) and the bash
 * completion (cmd/cmd_doc.c) are made from, so a command is added here once. */
#include "cmd/cmd_capacity.h"
#include "cmd/cmd_check.h"
#include "cmd/cmd.h"
#include "cmd/cmd_compare.h"
#include "cmd/cmd_config_example.h"
#include "cmd/cmd_doc.h"
#include "cmd/cmd_logscan.h"
#include "cmd/cmd_merge.h"
#include "cmd/cmd_probe.h"
#include "cmd/cmd_report.h"
#include "cmd/cmd_run.h"
#include "cmd/cmd_version.h"

const struct command mailsoak_commands[] = {
    { "run", "[-c FILE]... [--FLAG VALUE]... [--set SECTION.KEY=VALUE]... [--no-check]",
      "soak a mail server: SMTP senders, POP3 readers, a ledger of every message",
      cmd_run, "--no-check", 1,
      "Every key of mailsoak.conf(5) can be given in a -c FILE, with --set SECTION.KEY=VALUE, "
      "or with its flag (see OPTIONS). Without an SMTP target, run starts the reference "
      "server on free loopback ports and soaks it (the demo)." },
    { "capacity", "[-c FILE]... [--FLAG VALUE]... [--set SECTION.KEY=VALUE]...",
      "find the highest arrival rate the server sustains with its gates passing (SPECmail2001's method)",
      cmd_capacity, "--no-check", 1,
      "A search over the arrival rate of open-loop Poisson arrivals: a probe above what the server "
      "takes, then runs of rising levels, each judged while it runs on the gates and a sequential test "
      "of the backlog and ended once decided, then 80 %, 100 % and 120 % of the capacity found "
      "(capacity.method = staircase, the default; capacity.method = steps runs a step per rate). "
      "The [capacity] keys of mailsoak.conf(5) shape it." },
    { "check", "[--sample N] [the options of run]",
      "preflight with libcurl: targets, TLS, AUTH, sample logins",
      cmd_check, "--sample=", 1, NULL },
    { "compare", "[--format text|markdown|csv|json] [--runs] [--mark] [--force] [--missing LABEL=WHY]... FILE.json...",
      "the classic side-by-side table of result files",
      cmd_compare, "--format=text|markdown|csv|json --runs --mark --force --missing=", 0, NULL },
    { "report", "-o REPORT.html [--csv TIMELINE.csv] [--force] [--missing LABEL=WHY]... FILE.json...",
      "an HTML report with charts from result files",
      cmd_report, "-o= --output= --csv= --force --missing=", 0, NULL },
    { "merge", "FILE.json... -o MERGED.json [--force] [--label NAME]",
      "add up the result files of the shards of one load",
      cmd_merge, "-o= --output= --label= --force", 0, NULL },
    { "logscan", "[-c FILE]... [--set server.KEY=VALUE]... [--class 'NAME: ERE']... [--no-defaults] "
      "[--examples N] [--lines] [LOG...]",
      "the run's log watcher over existing logs: lines per class, to tune log_class",
      cmd_logscan, "-c= --set= --class= --no-defaults --examples= --lines", 0, NULL },
    { "probe", "[-c FILE]... [--listen ADDR:PORT] [--token TOKEN] [--set server.KEY=VALUE]...",
      "measure the server on its own host; serve the samples to Prometheus and to runs elsewhere",
      cmd_probe, "--listen= --token=", 1, NULL },
    { "config-example", "",
      "print an INI file with every key of run at its default",
      cmd_config_example, "", 0, NULL },
    { "doc", "commands|synopsis|flags|keys|bash",
      "print the generated parts of the manual, or the bash completion's data",
      cmd_doc, "commands synopsis flags keys bash", 0, NULL },
    { "version", "",
      "print the version of this mailsoak (also: mailsoak --version)",
      cmd_version, "", 0, NULL },
    { NULL, NULL, NULL, NULL, NULL, 0, NULL },
};

int main(int argc, char **argv)
{
    return cmd_main(argc, argv);
}
