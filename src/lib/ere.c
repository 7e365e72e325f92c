/* ere: a guard in front of regcomp() for expressions from settings. The estimate
 * walks the expression once: an atom costs 1, a group what it holds, and a
 * repetition multiplies the cost of the atom before it (by 2 for * + ?, by the
 * larger bound plus one for {m,n}), as glibc's duplicate_tree() does. */
#include "lib/ere.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define ERE_MAX_COST 2000            /* regcomp's epsilon closures grow with its square: 2000 is about 30 MB */
#define ERE_MAX_DEPTH 64

static uint64_t capped(uint64_t v) { return v > ERE_MAX_COST + 1 ? ERE_MAX_COST + 1 : v; }

const char *ere_bracket_end(const char *p)
{
    const char *q = p + 1;
    if (*q == '^')
        q++;
    if (*q == ']')
        q++;
    for (; *q && *q != ']'; q++)
        if (q[0] == '[' && (q[1] == ':' || q[1] == '.' || q[1] == '=')) {
            char close = q[1];
            for (q += 2; *q && !(q[0] == close && q[1] == ']'); q++)
                ;
            if (!*q)
                return p;
            q++;
        }
    return *q ? q : p;
}

static uint64_t cost(const char *p)
{
    uint64_t sum[ERE_MAX_DEPTH + 1] = { 0 }, last[ERE_MAX_DEPTH + 1] = { 0 };
    int d = 0;
    for (; *p; p++) {
        uint64_t atom = 1, factor = 0;
        switch (*p) {
        case '\\':
            if (p[1])
                p++;
            break;
        case '[':
            p = ere_bracket_end(p);
            break;
        case '(':
            if (d == ERE_MAX_DEPTH)
                return ERE_MAX_COST + 1;
            d++;
            sum[d] = last[d] = 0;
            continue;
        case ')':
            if (d == 0)
                break;               /* a literal ')' in an ERE */
            atom = sum[d] ? sum[d] : 1;
            d--;
            break;
        case '|':
            last[d] = 0;
            continue;
        case '*': case '+': case '?':
            factor = 2;
            break;
        case '{': {
            char *end;
            unsigned long m = strtoul(p + 1, &end, 10), n = m;
            if (*end == ',')
                n = end[1] == '}' ? m : strtoul(end + 1, &end, 10);
            else if (*end != '}')
                break;               /* not a bound: regcomp will say so */
            factor = (m > n ? m : n) + 1;
            while (*p && *p != '}')
                p++;
            if (!*p)
                return ERE_MAX_COST + 1;
            break;
        }
        default:
            break;
        }
        if (factor) {                /* repeats the atom before it */
            sum[d] -= last[d];
            last[d] = capped(last[d] * factor);
            sum[d] = capped(sum[d] + last[d]);
        } else {
            last[d] = atom;
            sum[d] = capped(sum[d] + atom);
        }
        if (sum[d] > ERE_MAX_COST)
            return sum[d];
    }
    return sum[0];
}

int ere_compile(regex_t *re, const char *pattern, int flags, char *err, size_t errlen)
{
    if (cost(pattern) > ERE_MAX_COST) {
        snprintf(err, errlen, "too many repetitions (stacked or nested, they would take gigabytes to compile)");
        return -1;
    }
    int rc = regcomp(re, pattern, REG_EXTENDED | flags);
    if (rc) {
        char why[200];
        regerror(rc, re, why, sizeof why);
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}
