/* testfiles: what the tests that read result files share: they run from the top of
 * the repository (TOP, as tests/run sets it), write into a private temporary
 * directory removed at the end, and read whole files. */
#ifndef MS_TESTFILES_H
#define MS_TESTFILES_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmpdir.h"

static char tf_dir[256];

/* The whole file as a string (malloc'd), or NULL when it cannot be read. */
static inline char *tf_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = NULL, chunk[4096];
    size_t n = 0, k;
    FILE *m = open_memstream(&buf, &n);
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, k, m);
    fclose(f);
    fclose(m);
    return buf;
}

/* A path in the temporary directory; the last 32 stay valid. */
static inline char *tf_path(const char *name)
{
    static char paths[32][320];
    static unsigned next;
    char *p = paths[next++ % 32];
    snprintf(p, sizeof paths[0], "%s/%s", tf_dir, name);
    return p;
}

static inline char *tf_write(const char *name, const char *text)
{
    char *p = tf_path(name);
    FILE *f = fopen(p, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", p);
        abort();
    }
    return p;
}

/* Writes name (a path below the temporary directory, its directories made as
 * needed); returns its full path. */
static inline char *tf_put(const char *name, const char *text)
{
    char *p = tf_path(name);
    for (char *slash = strchr(p + strlen(tf_dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "cannot make %s\n", p);
            abort();
        }
        *slash = '/';
    }
    return tf_write(name, text);
}

static inline int tf_setup(void **state)
{
    (void)state;
    const char *top = getenv("TOP");
    if (top && chdir(top) != 0)
        return -1;
    return mkdtemp(test_tmpname(tf_dir, sizeof tf_dir, "mailsoak-test.XXXXXX")) ? 0 : -1;
}

static inline int tf_teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tf_dir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
