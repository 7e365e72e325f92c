/* dirs: the directory walking the spool and store walkers share. Nothing follows a
 * symbolic link: a link in a queue or a mailbox is not mail. */
#ifndef MS_PROBE_DIRS_H
#define MS_PROBE_DIRS_H

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

enum { DIRS_MAX_DEPTH = 64 };           /* deeper trees are not walked further */

static inline int dirs_open_at(int dfd, const char *name)
{
    return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* DT_REG, DT_DIR or DT_UNKNOWN, asking stat only when the listing did not say. */
static inline unsigned char dirs_type_at(int dfd, const char *name, unsigned char d_type)
{
    if (d_type != DT_UNKNOWN)
        return d_type;
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return DT_UNKNOWN;
    return S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : DT_UNKNOWN;
}

static inline unsigned char dirs_entry_type(int dfd, const struct dirent *e)
{
    return dirs_type_at(dfd, e->d_name, e->d_type);
}

static inline int dirs_dots(const char *name)
{
    return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

#endif
