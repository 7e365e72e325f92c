/* ere: compiling a POSIX extended regular expression that came from a setting
 * (log_class, server.process), refusing one whose compiled form would explode. */
#ifndef MS_ERE_H
#define MS_ERE_H

#include <regex.h>
#include <stddef.h>

/* regcomp(re, pattern, REG_EXTENDED | flags), but first an estimate of the tree
 * glibc builds: it copies what a repetition repeats, so stacked or nested
 * repetitions grow exponentially ("k" and 24 '+' took 12 GB; "k*" and 13 '+',
 * which fuzz_logwatch found, 3.5 GB and 20 s). 0, or -1 with the reason in err
 * (and nothing to regfree). */
int ere_compile(regex_t *re, const char *pattern, int flags, char *err, size_t errlen);

/* The ']' ending the bracket expression that starts at p ('['), its "[:class:]",
 * "[.coll.]" and "[=equiv=]" and a leading ']' or "^]" skipped; or p itself when
 * unterminated. For walking an expression as regcomp reads it. */
const char *ere_bracket_end(const char *p);

#endif
