/* cmd_doc: `mailsoak doc WHAT` prints what the manual and the completion take from the
 * program: the commands (from main.c's table, each with its own --help), the flags
 * and the keys (from the settings table), and the bash completion's data.
 * scripts/gen-doc puts this output into the templates of doc/ at build time. */
#include "cmd/cmd_doc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/alloc.h"
#include "lib/cli.h"
#include "lib/docgen.h"
#include "settings/config.h"

/* A command's --help output, which every command prints on stdout and exits 0: its
 * function runs with stdout pointed at a temporary file. NULL if it did not. */
static char *help_of(const struct command *c)
{
    char *argv[] = { (char *)c->name, (char *)"--help", NULL };
    FILE *tmp = tmpfile();
    int saved = dup(STDOUT_FILENO), rc = -1;
    fflush(stdout);
    if (tmp && saved >= 0 && dup2(fileno(tmp), STDOUT_FILENO) >= 0) {
        rc = c->fn(2, argv);
        fflush(stdout);
        dup2(saved, STDOUT_FILENO);
    }
    if (saved >= 0)
        close(saved);
    long n = tmp ? ftell(tmp) : -1;
    char *text = NULL;
    if (rc == 0 && n >= 0) {
        text = xmalloc((size_t)n + 1);
        rewind(tmp);
        text[fread(text, 1, (size_t)n, tmp)] = 0;
    }
    if (tmp)
        fclose(tmp);
    return text;
}

/* "mailsoak NAME ARGS" with the name in bold. */
static void command_line(const struct command *c)
{
    roff_print(stdout, "\\fBmailsoak ", c->name, "\\fR");
    roff_print(stdout, *c->args ? " " : "", c->args, "\n");
}

static int man_commands(const struct command *cmds)
{
    for (const struct command *c = cmds; c->name; c++) {
        fputs(".TP\n", stdout);
        command_line(c);
        /* The summary is a phrase in --help; here it opens a sentence. */
        fputc(toupper((unsigned char)c->summary[0]), stdout);
        roff_puts(stdout, c->summary + 1);
        fputs(".\n", stdout);
        if (c->man) {
            roff_print(stdout, "", c->man, "\n");
            continue;
        }
        char *help = help_of(c);
        if (!help) {
            fprintf(stderr, "mailsoak doc: '%s --help' did not print its usage and exit 0\n", c->name);
            return 1;
        }
        roff_print(stdout, ".RS\n.PP\n.EX\n", help, ".EE\n.RE\n");
        free(help);
    }
    return 0;
}

static void man_synopsis(const struct command *cmds)
{
    for (const struct command *c = cmds; c->name; c++) {
        fputs(c == cmds ? "" : ".br\n", stdout);
        command_line(c);
    }
}

static void bash_data(const struct command *cmds)
{
    fputs("_mailsoak_commands=\"", stdout);
    for (const struct command *c = cmds; c->name; c++)
        printf("%s%s", c == cmds ? "" : " ", c->name);
    fputs("\"\ndeclare -gA _mailsoak_command_words=(\n", stdout);
    for (const struct command *c = cmds; c->name; c++)
        printf("    [%s]=\"%s%s\"\n", c->name, c->complete, c->settings ? " -c --config --set" : "");
    fputs(")\n", stdout);
    docgen_bash(stdout, config_opts, "_mailsoak");
}

static void usage(FILE *f)
{
    fputs("usage: mailsoak doc commands|synopsis|flags|keys|bash\n"
          "  Prints what the manual and the bash completion take from the program:\n"
          "  commands, synopsis  the command table, as man-page text\n"
          "  flags, keys         the settings table, as man-page text\n"
          "  bash                the completion's data (commands, flags, keys, values)\n"
          "  scripts/gen-doc puts it into the templates of doc/ when building.\n", f);
}

int cmd_doc(int argc, char **argv)
{
    const struct cli_cmd cmd = { .name = "mailsoak doc", .usage = usage, .words = CLI_FILES_ANY };
    const struct command *cmds = mailsoak_commands;
    char **words;
    size_t n;
    int rc;
    if (!cli_parse(&cmd, argc, argv, stdout, stderr, &words, &n, &rc))
        return rc;
    const char *what = n == 1 ? words[0] : "";
    free(words);
    if (!strcmp(what, "commands"))
        return man_commands(cmds);
    if (!strcmp(what, "synopsis"))
        man_synopsis(cmds);
    else if (!strcmp(what, "flags"))
        docgen_man_flags(stdout, config_opts);
    else if (!strcmp(what, "keys"))
        docgen_man_keys(stdout, config_opts);
    else if (!strcmp(what, "bash"))
        bash_data(cmds);
    else {
        usage(stderr);
        return 2;
    }
    return 0;
}
