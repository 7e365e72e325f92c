/* cmd: the row of the table of commands (kept in main.c, and nothing else is) and
 * the dispatch over it. A command is a file of cmd/ with one entry point,
 * int cmd_NAME(int argc, char **argv), argv[0] being its name; a row added to the
 * table appears in --help, the manual and the completion (cmd/cmd_doc.c). */
#ifndef MS_CMD_H
#define MS_CMD_H

struct command {
    const char *name;
    const char *args;                  /* the synopsis after "mailsoak NAME" */
    const char *summary;               /* one line, for --help and the manual */
    int (*fn)(int argc, char **argv);  /* argv[0] is the command's name */
    /* What completion offers after the command besides the settings' options:
     * "--flag", "--flag=" (takes a value: files are offered), "--flag=a|b|c" (one of
     * these) or plain words; space-separated. A test checks that every --flag of the
     * command's --help is here. */
    const char *complete;
    int settings;                      /* takes mailsoak run's settings: -c, --set, the flags */
    /* What mailsoak(1) says of the command's options; NULL = its --help output,
     * verbatim (so the page follows the program). */
    const char *man;
};

/* The table, ended by a row with a NULL name (main.c). */
extern const struct command mailsoak_commands[];

/* `mailsoak COMMAND ...`: runs the command argv[1] names with argv + 1, or prints
 * the list of commands (--help: stdout, 0; none or an unknown one: stderr, 2), or
 * the version (--version, -V: stdout, 0). */
int cmd_main(int argc, char **argv);

#endif
