/* atomicfile: results written so a reader never sees half a file and a failure
 * leaves the old one in place — a temporary file beside the target, fsynced,
 * then renamed over it. Shared by the JSON writer, the report and the server's
 * ready file. */
#ifndef MS_ATOMICFILE_H
#define MS_ATOMICFILE_H

#include <stddef.h>
#include <stdio.h>

struct atomic_file {
    FILE *f;
    char tmp[4096];
};

/* Opens the temporary file (mode 0644). 0, or -1 with "path: reason" in err. */
int atomic_open(struct atomic_file *a, const char *path, char *err, size_t errlen);
/* ok: the caller's writing succeeded. Flushes, fsyncs and renames into place; on any
 * failure (or !ok) removes the temporary file. 0, or -1 with "path: reason" in err
 * ("path: write failed" when only the caller's writing failed). */
int atomic_commit(struct atomic_file *a, const char *path, int ok, char *err, size_t errlen);

#endif
