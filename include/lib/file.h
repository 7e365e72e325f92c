/* file: reading a whole file, for both programs (the reference server's mail stores,
 * the probe's Dovecot indexes). */
#ifndef MS_FILE_H
#define MS_FILE_H

#include "lib/conn.h"

/* Appends the whole of the regular file at path (relative to dfd, or absolute; dfd
 * may be AT_FDCWD) to out. flags are added to O_RDONLY | O_CLOEXEC (O_NOFOLLOW, say).
 * Anything but a regular file is refused (EINVAL): a FIFO would block the reader.
 * 0, or -1 with errno set and out holding what was read before the error. */
int file_read(int dfd, const char *path, int flags, struct buf *out);

#endif
