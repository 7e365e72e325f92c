/* store: counts the messages and bytes of the server's mail store, by walking its
 * directories: maildir (files in cur/ and new/; sizes from ",S=" in the name, else
 * stat), mbox (dated "From " separators, skipping bodies by Content-Length when it
 * lands on the next separator), sdbox (u.N files) and mdbox (each mailbox's
 * dovecot.index plus a replay of its transaction log; bytes are the m.N storage
 * files, which keep expunged mail until `doveadm purge`). What did not change since
 * the last walk (an mbox file, a dbox mailbox's index and logs) is not read again. */
#ifndef MS_PROBE_STORE_H
#define MS_PROBE_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum store_format { FMT_AUTO, FMT_MAILDIR, FMT_MBOX, FMT_SDBOX, FMT_MDBOX };

/* "auto", "maildir", "mbox", "sdbox" or "mdbox", in any case; -1 for anything else. */
int store_format_parse(const char *name, enum store_format *out);

struct store;
struct store *store_new(enum store_format fmt);
void store_free(struct store *st);
/* One walk of every directory; caches what it counted for the next walk. why: the
 * first file it could not read ("path: reason", counted without it), else "". */
void store_walk(struct store *st, char *const *dirs, size_t ndirs, uint64_t *messages, uint64_t *bytes, char *why,
                size_t whylen);
/* The messages of the mbox file open at fd, whose size fstat gave. The file may
 * shrink or be rewritten while it is read (Dovecot truncates an mbox on expunge):
 * the count is then of what was read, and the next walk counts again. *err: the
 * errno of a read that failed (the count is of what came before it), else 0. */
uint64_t store_mbox_count(int fd, off_t size, int *err);

#endif
