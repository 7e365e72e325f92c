/* tmpdir: where the unit tests make their scratch files and folders: under $TMPDIR,
 * as mktemp(1), tests/integration/lib.sh and server_lib.sh take it, else /tmp. A
 * runner that gives each test a folder of its own (scripts/mutate) then removes
 * whatever a test it made fail left behind. */
#ifndef MS_TEST_TMPDIR_H
#define MS_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

/* buf = $TMPDIR/name (name a mkstemp or mkdtemp template), or /tmp/name. */
static inline char *test_tmpname(char *buf, size_t n, const char *name)
{
    const char *d = getenv("TMPDIR");
    snprintf(buf, n, "%s/%s", d && *d ? d : "/tmp", name);
    return buf;
}

#endif
