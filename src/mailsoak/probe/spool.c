/* spool: counts the server's queue as the regular files below its spool
 * directories. Postfix keeps one file per message; other MTAs keep more, which is
 * theirs to tell (a later per-format count). */
#include "probe/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "probe/dirs.h"

/* Regular files below fd, recursively (Postfix hashes its queues into subdirectories).
 * Takes ownership of fd. */
static uint64_t count_files(int fd, int depth)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return 0;
    }
    uint64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (dirs_dots(e->d_name))
            continue;
        unsigned char type = dirs_entry_type(dirfd(d), e);
        if (type == DT_REG) {
            n++;
        } else if (type == DT_DIR && depth < DIRS_MAX_DEPTH) {
            int sub = dirs_open_at(dirfd(d), e->d_name);
            if (sub >= 0)
                n += count_files(sub, depth + 1);
        }
    }
    closedir(d);
    return n;
}

uint64_t spool_count(char *const *dirs, size_t ndirs)
{
    uint64_t n = 0;
    for (size_t i = 0; i < ndirs; i++) {
        int fd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0)
            n += count_files(fd, 0);
    }
    return n;
}

