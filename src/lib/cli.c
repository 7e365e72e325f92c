/* cli: the option parser of compare, merge and report, and their messages, so the
 * three commands take their words the same way and quote result files safely. */
#include "lib/cli.h"

#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/printable.h"

/* The row a word names, and where its value starts when it is "--x=VALUE". */
static const struct cli_opt *find(const struct cli_opt *opts, const char *a, const char **inline_val)
{
    *inline_val = NULL;
    for (const struct cli_opt *o = opts; o->name; o++) {
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

int cli_parse(const char *cmd, int argc, char **argv, const struct cli_opt *opts, void (*usage)(FILE *),
              FILE *out, FILE *err, char ***files, size_t *nfiles, int *status)
{
    char msg[300];
    *files = xcalloc((size_t)argc + 1, sizeof **files);
    *nfiles = 0;
    *status = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--")) {
            while (++i < argc)
                (*files)[(*nfiles)++] = argv[i];
            break;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(out);
            goto done;
        }
        const struct cli_opt *o = find(opts, a, &v);
        if (o && !o->value) {
            *o->flag = 1;
        } else if (o) {
            if (!v && i + 1 >= argc) {
                snprintf(msg, sizeof msg, "%s needs %s", a, o->value);
                goto usage_error;
            }
            *o->val = v ? v : argv[++i];
        } else if (a[0] == '-' && a[1]) {
            snprintf(msg, sizeof msg, "unknown option '%s'", a);
            goto usage_error;
        } else {
            (*files)[(*nfiles)++] = argv[i];
        }
    }
    if (!*nfiles) {
        snprintf(msg, sizeof msg, "no result files given");
        goto usage_error;
    }
    for (const struct cli_opt *o = opts; o->name; o++)
        if (o->required && (!*o->val || !**o->val)) {
            snprintf(msg, sizeof msg, "%s", o->required);
            goto usage_error;
        }
    return 1;
usage_error:
    cli_say(err, cmd, 0, msg);
    usage(err);
    *status = 2;
done:
    free(*files);
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
