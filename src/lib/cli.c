/* cli: the option parser every command shares, and the messages that quote
 * untrusted text, so the commands take their words the same way and keep a result
 * file's control bytes off the terminal. */
#include "lib/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/printable.h"

/* The row a word names, and where its value starts when it is "--x=VALUE". */
static const struct cli_opt *find(const struct cli_opt *opts, const char *a, const char **inline_val)
{
    *inline_val = NULL;
    for (const struct cli_opt *o = opts; o && o->name; o++) {
        size_t n = strlen(o->name);
        if (!strcmp(a, o->name) || (o->alias && !strcmp(a, o->alias)))
            return o;
        if (o->value && !strncmp(a, o->name, n) && a[n] == '=') {
            *inline_val = a + n + 1;
            return o;
        }
    }
    return NULL;
}

/* A number from o->min to o->max into *o->num; 0, or -1 with the reason in msg. */
static int take_number(const struct cli_opt *o, const char *v, char *msg, size_t msglen)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (!*v || *end || errno || n < o->min || n > o->max) {
        snprintf(msg, msglen, "%s: expected %s from %lu to %lu, not '%s'", o->name, o->value, o->min, o->max, v);
        return -1;
    }
    *o->num = n;
    return 0;
}

int cli_parse(const struct cli_cmd *c, int argc, char **argv, FILE *out, FILE *err, char ***files,
              size_t *nfiles, int *status)
{
    char msg[300];
    char **rest = xcalloc((size_t)argc + 1, sizeof *rest), **words = xcalloc((size_t)argc + 1, sizeof *words);
    size_t nwords = 0;
    int nrest = 0;
    *status = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--") && c->words != CLI_SETTINGS) {
            while (++i < argc)
                words[nwords++] = argv[i];
            break;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (c->words == CLI_SETTINGS) {
                rest[nrest++] = argv[i];
                continue;
            }
            c->usage(out);
            goto done;
        }
        const struct cli_opt *o = find(c->opts, a, &v);
        if (o && !o->value) {
            *o->flag = 1;
        } else if (o) {
            if (!v && i + 1 >= argc) {
                snprintf(msg, sizeof msg, "%s needs %s", a, o->value);
                goto usage_error;
            }
            if (o->settings) {
                rest[nrest++] = argv[i];
                if (!v)
                    rest[nrest++] = argv[++i];
                continue;
            }
            if (!v)
                v = argv[++i];
            if (o->list)
                strlist_add(o->list, v);
            else if (o->num && take_number(o, v, msg, sizeof msg) < 0)
                goto usage_error;
            else if (o->val)
                *o->val = v;
        } else if (c->words == CLI_SETTINGS) {
            rest[nrest++] = argv[i];
        } else if (a[0] == '-' && a[1]) {
            snprintf(msg, sizeof msg, "unknown option '%s'", a);
            goto usage_error;
        } else {
            words[nwords++] = argv[i];
        }
    }
    if (c->words == CLI_FILES && !nwords) {
        snprintf(msg, sizeof msg, "no result files given");
        goto usage_error;
    }
    if (c->words == CLI_NONE && nwords) {
        snprintf(msg, sizeof msg, "takes no arguments");
        goto usage_error;
    }
    for (const struct cli_opt *o = c->opts; o && o->name; o++)
        if (o->required && (!*o->val || !**o->val)) {
            snprintf(msg, sizeof msg, "%s", o->required);
            goto usage_error;
        }
    if (c->settings) {
        int rc = c->settings(c->ud, nrest, rest, c->usage);
        if (rc) {
            *status = rc == 1 ? 0 : 2;
            goto done;
        }
    }
    free(rest);
    if (files) {
        *files = c->words == CLI_NONE || c->words == CLI_SETTINGS ? NULL : words;
        *nfiles = nwords;
    }
    if (!files || !*files)
        free(words);
    return 1;
usage_error:
    cli_say(err, c->name, 0, msg);
    c->usage(err);
    *status = 2;
done:
    free(rest);
    free(words);
    if (files)
        *files = NULL;
    return 0;
}

void cli_say(FILE *f, const char *cmd, int warning, const char *msg)
{
    while (*msg) {
        size_t len = strcspn(msg, "\n");
        char *safe = printable_dup(msg, len);
        fprintf(f, "%s%s%s%s\n", cmd ? cmd : "", cmd ? ": " : "", warning ? "warning: " : "", safe);
        free(safe);
        msg += len + (msg[len] == '\n');
    }
}
