/* prefilter: one regular expression standing for several, to skip them all on the
 * lines none of them matches (most lines of a server's log match no class). One
 * search of the union costs about what one of its members does; glibc would
 * otherwise search each member in turn, restarting at every byte for patterns that
 * may start anywhere ([[:alnum:]]{6}-..., (^|[^[:alnum:]])...). Exact: the union
 * matches a line exactly when one of its members does; a pattern that cannot join
 * (see prefilter_add) is left to be searched on its own. */
#ifndef MS_PROBE_PREFILTER_H
#define MS_PROBE_PREFILTER_H

struct prefilter;

struct prefilter *prefilter_new(void);
void prefilter_free(struct prefilter *p);

/* Adds an ERE to the union. The union ignores case: a pattern that does not can only
 * match where its case-blind self does, so one search stands for both kinds. 1 when
 * it joined; 0 when it cannot: a back-reference (the union numbers groups anew), a
 * ')' closing nothing (a literal alone, it would close the group around it), or a
 * union the compile guard (lib/ere.h) refuses. */
int prefilter_add(struct prefilter *p, const char *pattern);

/* 0 when no pattern that joined the union can match line. */
int prefilter_maybe(const struct prefilter *p, const char *line);

#endif
