/* fill_file: a fill kept for later soaks. A --fill-only run writes its summary and
 * the UIDLs it verified, per mailbox, to its --json; a later run's fill.from reads
 * them back, so its readers leave that fill's messages as if it had filled them
 * itself (a filled store, measured several times: the capacity search, the SQL
 * matrix). */
#ifndef MS_RUN_FILL_FILE_H
#define MS_RUN_FILL_FILE_H

#include <stddef.h>

#include "engine/known.h"
#include "lib/users.h"
#include "result/run_result.h"

/* {"format": "mailsoak-fill", "fill": {...}, "known": {"ADDRESS": ["UIDKEY", ...]}},
 * atomically. 0, or -1 with err set. */
int fill_write_json(const char *path, const struct fill_summary *fs, const struct users *u, const struct known *k,
                    char *err, size_t errlen);
/* The summary and the UIDLs of such a file, for this run's users (known is set up
 * here; mailboxes of other users are left out). 0, or -1 with "path: reason". */
int fill_read_json(const char *path, struct fill_summary *fs, const struct users *u, struct known *k, char *err,
                   size_t errlen);

#endif
