/* ere: a guard in front of regcomp() for expressions from settings. The estimate
 * walks the expression once: an atom costs 1, a group what it holds, and a
 * repetition multiplies the cost of the atom before it (by 2 for * + ?, by the
 * larger bound plus one for {m,n}), as glibc's duplicate_tree() does. The same walk
 * finds a repetition of a repetition of what can match nothing ("a**", "(a?)*+",
 * "(x|y*)*{2}"): glibc's epsilon closures over those take time exponential in the
 * duplications even when the tree is small, and a second such level is refused. */
#include "lib/ere.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERE_MAX_COST 2000            /* regcomp's epsilon closures grow with its square: 2000 is about 30 MB */
#define ERE_MAX_DEPTH 64
#define ERE_MAX_EMPTY_LOOPS 1        /* "(a*)*" compiles at once; "a***" or "(a*)*{1,5}{1,5}" took minutes */

/* What the walk knows of the last atom of a group. */
struct shape {
    int empty;                       /* can match the empty string */
    int loops;                       /* repetitions over an empty-matching body, nested */
};

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

/* The estimated size (ERE_MAX_COST + 1 when larger), and in *loops how deep
 * repetitions of empty-matching bodies nest. */
static uint64_t cost(const char *p, int *loops)
{
    uint64_t sum[ERE_MAX_DEPTH + 1] = { 0 }, last[ERE_MAX_DEPTH + 1] = { 0 };
    /* per group: its last atom, whether its branch before that atom and any finished
     * branch can match nothing, and the deepest loops it holds */
    struct shape atom_of[ERE_MAX_DEPTH + 1];
    int before[ERE_MAX_DEPTH + 1], any_empty[ERE_MAX_DEPTH + 1], most[ERE_MAX_DEPTH + 1];
    int d = 0;
    before[0] = 1, any_empty[0] = most[0] = 0, atom_of[0] = (struct shape){ 1, 0 };
    *loops = 0;
    for (; *p; p++) {
        uint64_t atom = 1, factor = 0;
        int empty = 0, inner = 0, min_zero = 0;
        switch (*p) {
        case '\\':
            if (p[1])
                empty = strchr("bB<>`'", *++p) != NULL;     /* glibc's word and buffer anchors */
            break;
        case '[':
            p = ere_bracket_end(p);
            break;
        case '(':
            if (d == ERE_MAX_DEPTH)
                return ERE_MAX_COST + 1;
            d++;
            sum[d] = last[d] = 0;
            before[d] = 1, any_empty[d] = most[d] = 0, atom_of[d] = (struct shape){ 1, 0 };
            continue;
        case ')':
            if (d == 0)
                break;               /* a literal ')' in an ERE */
            atom = sum[d] ? sum[d] : 1;
            empty = any_empty[d] || (before[d] && atom_of[d].empty);
            inner = most[d];
            d--;
            break;
        case '|':
            last[d] = 0;
            any_empty[d] |= before[d] && atom_of[d].empty;
            before[d] = 1, atom_of[d] = (struct shape){ 1, 0 };
            continue;
        case '^': case '$':
            empty = 1;               /* anchors match no character */
            break;
        case '*': case '?':
            min_zero = 1;
            /* fall through */
        case '+':
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
            min_zero = m == 0;
            while (*p && *p != '}')
                p++;
            if (!*p)
                return ERE_MAX_COST + 1;
            break;
        }
        default:
            break;
        }
        struct shape *a = &atom_of[d];
        if (factor) {                /* repeats the atom before it */
            sum[d] -= last[d];
            last[d] = capped(last[d] * factor);
            sum[d] = capped(sum[d] + last[d]);
            if (a->empty)
                a->loops++;
            a->empty |= min_zero;
        } else {
            last[d] = atom;
            sum[d] = capped(sum[d] + atom);
            before[d] = before[d] && a->empty;
            *a = (struct shape){ empty, inner };
        }
        if (a->loops > most[d])
            most[d] = a->loops;
        if (most[d] > *loops)
            *loops = most[d];
        if (sum[d] > ERE_MAX_COST)
            return sum[d];
    }
    return sum[0];
}

int ere_compile(regex_t *re, const char *pattern, int flags, char *err, size_t errlen)
{
    int loops;
    if (cost(pattern, &loops) > ERE_MAX_COST) {
        snprintf(err, errlen, "too many repetitions (stacked or nested, they would take gigabytes to compile)");
        return -1;
    }
    if (loops > ERE_MAX_EMPTY_LOOPS) {
        snprintf(err, errlen, "too many repetitions of what can match nothing (as in \"a**\" or \"(a*)*+\"): "
                 "they take minutes to compile");
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
