/* spool: the server's queue, as the files below its spool directories. */
#ifndef MS_PROBE_SPOOL_H
#define MS_PROBE_SPOOL_H

#include <stddef.h>
#include <stdint.h>

/* Regular files below each directory, recursively (Postfix hashes its queues into
 * subdirectories); a directory that cannot be opened counts nothing. */
uint64_t spool_count(char *const *dirs, size_t ndirs);

#endif
