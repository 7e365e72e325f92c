/* alloc: the one out-of-memory policy of both programs. Allocation failure aborts:
 * a load tester or a test server without its bookkeeping cannot go on, and a clean
 * abort (with a core) says more than a half-written result would. */
#ifndef MS_ALLOC_H
#define MS_ALLOC_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static inline void *alloc_check(void *p)
{
    if (!p)
        abort();
    return p;
}

/* Zero sizes are rounded up to one byte, so a NULL return always means failure. */
static inline void *xmalloc(size_t size) { return alloc_check(malloc(size ? size : 1)); }
static inline void *xcalloc(size_t n, size_t size) { return alloc_check(calloc(n ? n : 1, size ? size : 1)); }
static inline void *xrealloc(void *p, size_t size) { return alloc_check(realloc(p, size ? size : 1)); }
static inline char *xstrdup(const char *s) { return alloc_check(strdup(s)); }
static inline char *xstrndup(const char *s, size_t n) { return alloc_check(strndup(s, n)); }
__attribute__((format(printf, 1, 2))) static inline char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return alloc_check(n < 0 ? NULL : s);
}

/* The one way arrays grow: double the capacity until n more items fit. */
static inline void *grow(void *p, size_t *cap, size_t used, size_t more, size_t elem)
{
    if (used + more <= *cap)
        return p;
    size_t c = *cap ? *cap : 16;
    while (c < used + more)
        c *= 2;
    void *q = xrealloc(p, c * elem);
    *cap = c;
    return q;
}

/* Large blocks that come and go (a ledger chunk): mapped, so that freeing one gives
 * its pages back, whatever malloc's threshold has become. */
static inline void *xpages(size_t size)
{
    void *p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return alloc_check(p == MAP_FAILED ? NULL : p);
}
static inline void xpages_free(void *p, size_t size)
{
    if (p)
        munmap(p, size ? size : 1);
}

#endif
