/* cli: the one option parser of every command, with one set of conventions, and
 * the one way messages that quote untrusted text (result files hold a server's
 * words) reach a terminal. A command describes its options in a table; the words
 * that are not its own are files, or go on to a settings reader (-c, --set, the
 * flags of a settings table: lib/opts.h), which the parser calls. */
#ifndef MS_LIB_CLI_H
#define MS_LIB_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "lib/opts.h"

/* One option. A flag (value == NULL) sets *flag to 1. An option taking a value
 * stores it in *val, or appends it to *list (repeatable), or reads it into *num as
 * a number from min to max; value names what it takes, for "CMD: --x needs VALUE"
 * and "CMD: --x: expected VALUE from MIN to MAX, not 'y'". A row with settings set
 * is the settings reader's (-c, --set): the word and its value are handed on to it. */
struct cli_opt {
    const char *name;         /* "--output" */
    const char *alias;        /* "-o", or NULL */
    const char *value;        /* "a file name"; NULL for a flag */
    const char **val;
    int *flag;
    const char *required;     /* an option that must be given: "CMD: required" when it is not */
    struct strlist *list;
    unsigned long *num, min, max;
    int settings;
};

/* What a command's words other than its options are. */
enum cli_words {
    CLI_NONE,                 /* none ("takes no arguments") */
    CLI_FILES,                /* files, at least one ("no result files given") */
    CLI_FILES_ANY,            /* files, none or more */
    CLI_SETTINGS,             /* the settings reader's, in order; -h/--help too, so that the
                                 -c files before it are read (`run -c FILE --help` checks FILE) */
};

struct cli_cmd {
    const char *name;         /* the prefix of messages: "compare", "mailsoak check" */
    void (*usage)(FILE *f);
    const struct cli_opt *opts;   /* ended by a row with a NULL name; NULL: none */
    enum cli_words words;
    /* The settings reader, or NULL: called once, after the command's own options,
     * with the words that are its own (in order), and the usage to print on --help.
     * Returns 0; 1 when it printed the usage; 2 when it said why not (on stderr). */
    int (*settings)(void *ud, int argc, char **argv, void (*usage)(FILE *f));
    void *ud;
};

/* Parses argv[1..argc) (argv[0] is the command's name) against c: "--x VALUE" and
 * "--x=VALUE" for a long option (a short alias takes its value as the next word),
 * -h and --help, "--" ending the options (but for CLI_SETTINGS), a lone "-" as a
 * file. Returns 1 with the files in *files (the caller frees it; NULL for
 * CLI_NONE and CLI_SETTINGS, where files and nfiles may be NULL), every required
 * option given (not empty) and the settings read;
 * or 0, *files NULL, when the command is done: --help printed the usage on out
 * (*status 0), or "CMD: reason" and the usage went to err, or the settings reader
 * refused (*status 2). */
int cli_parse(const struct cli_cmd *c, int argc, char **argv, FILE *out, FILE *err, char ***files,
              size_t *nfiles, int *status);

/* "CMD: MSG\n" on f ("MSG\n" when cmd is NULL), or "CMD: warning: MSG\n" when
 * warning, one line per line of msg, each made printable (lib/printable.h): the
 * messages quote result files, and a result file can hold a server's words. */
void cli_say(FILE *f, const char *cmd, int warning, const char *msg);

#endif
