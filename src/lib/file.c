/* file: whole-file reads, shared by the reference server and the probe. */
#include "lib/file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int file_read(int dfd, const char *path, int flags, struct buf *out)
{
    int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | flags);
    if (fd < 0)
        return -1;
    struct stat st;
    int e = fstat(fd, &st) < 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : 0;
    /* The size is a hint (the file may grow while we read; we read to its end); the
     * byte beyond it lets the read that finds the end need no more room. */
    if (!e)
        buf_reserve(out, (size_t)st.st_size + 1);
    while (!e) {
        if (out->cap == out->len)
            buf_reserve(out, 65536);
        ssize_t r = read(fd, out->p + out->len, out->cap - out->len);
        if (r > 0)
            out->len += (size_t)r;
        else if (r == 0)
            break;
        else if (errno != EINTR)
            e = errno;
    }
    close(fd);
    if (e) {
        errno = e;
        return -1;
    }
    return 0;
}
