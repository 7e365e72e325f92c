/* logwatch_classes: the built-in log classes logwatch_add_defaults() installs: a
 * name, an extended regular expression, one whose lines are left out, whether
 * case is ignored, and whether a class's line opens a Java stack trace. */
#ifndef MS_PROBE_LOGWATCH_CLASSES_H
#define MS_PROBE_LOGWATCH_CLASSES_H

#include <stddef.h>

struct logwatch_builtin {
    const char *name, *re, *except;
    int icase, trace;
};

extern const struct logwatch_builtin logwatch_builtins[];
extern const size_t logwatch_nbuiltins;

#endif
