/* cmd_report: `mailsoak report -o REPORT.html [--csv F] [--force] FILE.json...`: the HTML
 * report of result files (cmd/cmd_report.c). */
#ifndef MS_CMD_REPORT_H
#define MS_CMD_REPORT_H

#include <stdio.h>

/* argv[0] is "report". 0, 1 (an output could not be written) or 2 (bad arguments,
 * files refused). */
int cmd_report(int argc, char **argv);
/* The same, printing on out and err instead of stdout and stderr (the tests'). */
int cmd_report_io(int argc, char **argv, FILE *out, FILE *err);

#endif
