/* docgen: a settings table as documentation. The man pages and the bash completion
 * are generated from the same table as --help and the example INI file, so they
 * cannot drift from what the program accepts (scripts/gen-doc fills the templates
 * in doc/ with this output). */
#ifndef MS_DOCGEN_H
#define MS_DOCGEN_H

#include <stdio.h>

#include "lib/opts.h"

/* Text for a man page: backslashes and hyphens escaped (so --flag stays ASCII and
 * copy-pastes), a line starting with '.' or '\'' made literal. Newlines pass. */
void roff_puts(FILE *f, const char *s);
/* before, then text escaped as above, then after: before and after are roff. */
void roff_print(FILE *f, const char *before, const char *text, const char *after);
/* Every key, one .TP entry per key under a .SS heading per section: its value's
 * form, the help, the default, the flag and whether it repeats (mailsoak.conf(5)). */
void docgen_man_keys(FILE *f, const struct opt *t);
/* Every --flag of the table and the key it sets (a page's OPTIONS). */
void docgen_man_flags(FILE *f, const struct opt *t);
/* bash assignments PREFIX_keys (section.key), PREFIX_flags (--flag) and the
 * associative array PREFIX_values (key or flag -> the values it takes, for enums
 * and booleans), global even when bash-completion sources the file in a function. */
void docgen_bash(FILE *f, const struct opt *t, const char *prefix);

#endif
