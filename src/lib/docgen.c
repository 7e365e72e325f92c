/* docgen: a settings table written as man-page text and as bash completion data.
 * It knows the table's types and roff's escapes, nothing of which program it serves. */
#include "lib/docgen.h"

#include <string.h>

void roff_puts(FILE *f, const char *s)
{
    int bol = 1;
    for (; *s; s++) {
        if (bol && (*s == '.' || *s == '\''))
            fputs("\\&", f);
        bol = *s == '\n';
        if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else
            fputc(*s, f);
    }
}

void roff_print(FILE *f, const char *before, const char *text, const char *after)
{
    fputs(before, f);
    roff_puts(f, text);
    fputs(after, f);
}

/* The form of a value as the page shows it after "key =": a placeholder, or the
 * choices. A switch without default, so a new type fails the build (-Wswitch)
 * until it has a form here. */
static const char *form_of(enum opt_type type)
{
    switch (type) {
    case OPT_STR: case OPT_SECRET: case OPT_LIST: return "TEXT";
    case OPT_COUNT: return "N";
    case OPT_BYTES: return "SIZE";
    case OPT_DURATION: return "DURATION";
    case OPT_RANGE: case OPT_BYTERANGE: return "MIN-MAX";
    case OPT_DOUBLE: return "NUMBER";
    case OPT_SHARD: return "K/N";
    case OPT_STAGES: return "DURATION@RATE,...";
    case OPT_BOOL: case OPT_ENUM: return NULL;
    }
    return "VALUE";
}

static const char *const yesno[] = { "yes", "no", NULL };

/* The values an enum or a boolean takes; NULL for other types. */
static const char *const *choices_of(const struct opt *o)
{
    return o->type == OPT_ENUM ? o->choices : o->type == OPT_BOOL ? yesno : NULL;
}

static void value_form(FILE *f, const struct opt *o)
{
    const char *const *c = choices_of(o);
    if (c) {
        for (int i = 0; c[i]; i++)
            roff_print(f, i ? "|\\fB" : "\\fB", c[i], "\\fR");
        return;
    }
    roff_print(f, "\\fI", form_of(o->type), "\\fR");
}

/* The help, ended as a sentence, since "Default:" follows. It keeps its case: the
 * tables' help texts are phrases that may open with a value (auto|maildir...). */
static void help_sentence(FILE *f, const char *help)
{
    size_t n = strlen(help);
    roff_puts(f, help);
    fputs(n && help[n - 1] == '.' ? "\n" : ".\n", f);
}

/* A number's bounds (its choices, { MIN, MAX }, "" for an open side), in the words
 * of the error that enforces them. */
static void bounds(FILE *f, const struct opt *o)
{
    if (!o->choices || o->type == OPT_ENUM || !o->choices[0] || !o->choices[1])
        return;
    const char *min = o->choices[0], *max = o->choices[1];
    if (*min && *max) {
        roff_print(f, "Must be between \\fB", min, "\\fR");
        roff_print(f, " and \\fB", max, "\\fR.\n");
    } else if (*min || *max) {
        roff_print(f, *min ? "Must be at least \\fB" : "Must be at most \\fB", *min ? min : max, "\\fR.\n");
    }
}

void docgen_man_keys(FILE *f, const struct opt *t)
{
    const char *section = "";
    for (const struct opt *o = t; o->key; o++) {
        if (strcmp(section, o->section)) {
            section = o->section;
            roff_print(f, ".SS [", section, "]\n");
        }
        roff_print(f, ".TP\n\\fB", o->key, "\\fR = ");
        value_form(f, o);
        fputc('\n', f);
        help_sentence(f, o->help);
        if (o->def && *o->def)
            roff_print(f, "Default: \\fB", o->def, "\\fR.\n");
        else
            fputs(o->type == OPT_LIST ? "Default: none.\n" : "Default: empty.\n", f);
        bounds(f, o);
        if (OPT_IS_PATH(o))
            fputs("A relative path in a configuration file is taken against that file's directory.\n", f);
        if (o->type == OPT_LIST)
            fputs("The key may be repeated; each value is added.\n", f);
        if (o->flag)
            roff_print(f, "Command line: \\fB\\-\\-", o->flag, "\\fR.\n");
    }
}

void docgen_man_flags(FILE *f, const struct opt *t)
{
    for (const struct opt *o = t; o->key; o++) {
        if (!o->flag)
            continue;
        roff_print(f, ".TP\n\\fB\\-\\-", o->flag, "\\fR ");
        value_form(f, o);
        roff_print(f, "\nSets \\fB", o->section, ".");
        roff_print(f, "", o->key, "\\fR: ");
        help_sentence(f, o->help);
    }
}

static void bash_values(FILE *f, const struct opt *o, const char *name_prefix, const char *name)
{
    const char *const *c = choices_of(o);
    if (!c)
        return;
    fprintf(f, "    [%s%s]=\"", name_prefix, name);
    for (int i = 0; c[i]; i++)
        fprintf(f, "%s%s", i ? " " : "", c[i]);
    fputs("\"\n", f);
}

void docgen_bash(FILE *f, const struct opt *t, const char *prefix)
{
    fprintf(f, "%s_keys=\"", prefix);
    for (const struct opt *o = t; o->key; o++)
        fprintf(f, "%s%s.%s", o == t ? "" : " ", o->section, o->key);
    fprintf(f, "\"\n%s_flags=\"", prefix);
    int first = 1;
    for (const struct opt *o = t; o->key; o++)
        if (o->flag) {
            fprintf(f, "%s--%s", first ? "" : " ", o->flag);
            first = 0;
        }
    fprintf(f, "\"\ndeclare -gA %s_values=(\n", prefix);
    for (const struct opt *o = t; o->key; o++) {
        char key[200];
        snprintf(key, sizeof key, "%s.%s", o->section, o->key);
        bash_values(f, o, "", key);
        if (o->flag)
            bash_values(f, o, "--", o->flag);
    }
    fputs(")\n", f);
}
