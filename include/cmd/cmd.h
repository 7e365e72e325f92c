/* docs: the table of mailsoak's commands (kept in main.c) and what is generated
 * from it and from the settings table: the parts of mailsoak(1) and
 * mailsoak.conf(5) that list commands, flags and keys, and the bash completion's
 * data (`mailsoak doc WHAT`, run by scripts/gen-doc at build time). A command
 * added to the table appears in --help, the manual and the completion. */
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

/* `mailsoak doc commands|synopsis|flags|keys|bash`: 0, or 2 on a bad argument. */
int docs_main(const struct command *cmds, int argc, char **argv);

#endif
