/* users: parsing of the users file and the pattern. Both programs read the same
 * file, so the load tester and the reference server agree on who exists. */
#include "lib/users.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/alloc.h"

static void add(struct users *u, const char *addr, size_t alen, const char *pass, size_t plen)
{
    struct user *v = xrealloc(u->v, (u->n + 1) * sizeof *v);
    u->v = v;
    v[u->n].addr = xstrndup(addr, alen);
    v[u->n].pass = xstrndup(pass, plen);
    u->n++;
}

int users_load_file(struct users *u, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0;
    memset(u, 0, sizeof *u);
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            continue;
        char *a = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        size_t alen = (size_t)(p - a);
        while (*p == ' ' || *p == '\t')
            p++;
        char *pw = p;
        size_t plen = strcspn(pw, "\r\n");
        while (plen && isspace((unsigned char)pw[plen - 1]))
            plen--;
        if (!memchr(a, '@', alen)) {
            snprintf(err, errlen, "%s:%d: '%.*s' is not an address (expected 'address password')",
                     path, lineno, (int)alen, a);
            rc = -1;
            break;
        }
        if (!plen) {
            snprintf(err, errlen, "%s:%d: '%.*s' has no password (expected 'address password')",
                     path, lineno, (int)alen, a);
            rc = -1;
            break;
        }
        add(u, a, alen, pw, plen);
    }
    free(line);
    fclose(f);
    if (rc == 0 && u->n == 0) {
        snprintf(err, errlen, "%s: no users in file", path);
        rc = -1;
    }
    if (rc < 0)
        users_free(u);
    return rc;
}

/* A user-supplied format must have at most one conversion, and it must be an int. */
static int one_int_conversion(const char *fmt)
{
    int n = 0;
    for (const char *p = fmt; *p; p++) {
        if (*p != '%')
            continue;
        if (p[1] == '%') {
            p++;
            continue;
        }
        p++;
        while (*p && strchr("0123456789-+ #", *p))
            p++;
        if (*p != 'd' && *p != 'u' && *p != 'i')
            return -1;
        n++;
    }
    return n <= 1 ? n : -1;
}

int users_from_pattern(struct users *u, const char *pattern, const char *password,
                       size_t count, char *err, size_t errlen)
{
    memset(u, 0, sizeof *u);
    if (one_int_conversion(pattern) != 1 || !strchr(pattern, '@')) {
        snprintf(err, errlen, "users.pattern: '%s' needs one %%d conversion and an @domain", pattern);
        return -1;
    }
    if (one_int_conversion(password) < 0) {
        snprintf(err, errlen, "users.password: at most one %%d conversion allowed");
        return -1;
    }
    if (count == 0) {
        snprintf(err, errlen, "users.count: must be at least 1");
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        char a[256], p[256];
        /* The pattern was checked above to hold one int conversion at most. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        int an = snprintf(a, sizeof a, pattern, (int)i);
        int pn = snprintf(p, sizeof p, password, (int)i);
#pragma GCC diagnostic pop
        if (an >= (int)sizeof a || pn >= (int)sizeof p) {
            snprintf(err, errlen, "users.pattern: address or password too long");
            users_free(u);
            return -1;
        }
        add(u, a, (size_t)an, p, (size_t)pn);
    }
    return 0;
}

int users_keep_shard(struct users *u, size_t k, size_t n, char *err, size_t errlen)
{
    if (n == 0 || k >= n || u->n <= k) {
        snprintf(err, errlen, "run.shard: %zu/%zu owns no user of %zu", k, n, u->n);
        return -1;
    }
    size_t kept = 0;
    for (size_t i = 0; i < u->n; i++) {
        if (i % n == k) {
            u->v[kept++] = u->v[i];
            continue;
        }
        free(u->v[i].addr);
        free(u->v[i].pass);
    }
    u->n = kept;
    return 0;
}

long users_find(const struct users *u, const char *addr)
{
    for (size_t i = 0; i < u->n; i++)
        if (!strcasecmp(u->v[i].addr, addr))
            return (long)i;
    return -1;
}

void users_free(struct users *u)
{
    for (size_t i = 0; i < u->n; i++) {
        free(u->v[i].addr);
        free(u->v[i].pass);
    }
    free(u->v);
    memset(u, 0, sizeof *u);
}
