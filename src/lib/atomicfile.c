/* atomicfile: temp file + fsync + rename. mkstemp makes files 0600; results are
 * for sharing, so they get 0644. */
#include "lib/atomicfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int atomic_open(struct atomic_file *a, const char *path, char *err, size_t errlen)
{
    a->f = NULL;
    if ((size_t)snprintf(a->tmp, sizeof a->tmp, "%s.tmp.XXXXXX", path) >= sizeof a->tmp) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    int fd = mkstemp(a->tmp);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    fchmod(fd, 0644);
    a->f = fdopen(fd, "w");
    if (!a->f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        unlink(a->tmp);
        return -1;
    }
    return 0;
}

int atomic_commit(struct atomic_file *a, const char *path, int ok, char *err, size_t errlen)
{
    int e = 0;
    if (fflush(a->f) != 0 || ferror(a->f) || fsync(fileno(a->f)) != 0)
        e = errno ? errno : EIO;
    if (fclose(a->f) != 0 && !e)
        e = errno;
    a->f = NULL;
    if (ok && !e && rename(a->tmp, path) != 0)
        e = errno;
    if (e)
        snprintf(err, errlen, "%s: %s", path, strerror(e));
    else if (!ok)                    /* the caller's writing failed: its errno is gone */
        snprintf(err, errlen, "%s: write failed", path);
    if (!ok || e) {
        unlink(a->tmp);
        return -1;
    }
    return 0;
}
