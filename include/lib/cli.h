/* cli: what the offline commands (compare, merge, report) share on the command line:
 * one option parser with one set of conventions, and the one way their messages,
 * which quote result files, reach a terminal. */
#ifndef MS_LIB_CLI_H
#define MS_LIB_CLI_H

#include <stddef.h>
#include <stdio.h>

/* One option: a flag (value == NULL) sets *flag to 1; an option taking a value
 * stores it in *val. value names what it takes, for "CMD: --x needs VALUE". */
struct cli_opt {
    const char *name;         /* "--output" */
    const char *alias;        /* "-o", or NULL */
    const char *value;        /* "a file name"; NULL for a flag */
    const char **val;
    int *flag;
    const char *required;     /* an option that must be given: "CMD: required" when it is not */
};

/* Parses argv[1..argc) against opts (ended by a row with a NULL name): "--x VALUE"
 * and "--x=VALUE" for a long option (a short alias takes its value as the next
 * word), -h and --help, "--" ending the options, a lone "-" as a file. Every other
 * word is a file, collected in *files (the caller frees it). Returns 1 with the
 * files (at least one) and every required option given (not empty); or 0, *files NULL, when the command is done: --help printed
 * the usage on out (*status 0), or "CMD: reason" and the usage went to err
 * (*status 2). */
int cli_parse(const char *cmd, int argc, char **argv, const struct cli_opt *opts, void (*usage)(FILE *),
              FILE *out, FILE *err, char ***files, size_t *nfiles, int *status);

/* "CMD: MSG\n" on f ("MSG\n" when cmd is NULL), or "CMD: warning: MSG\n" when
 * warning, one line per line of msg, each made printable (lib/printable.h): the
 * messages quote result files, and a result file can hold a server's words. */
void cli_say(FILE *f, const char *cmd, int warning, const char *msg);

#endif
