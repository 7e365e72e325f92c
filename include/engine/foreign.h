/* foreign: mail in the users' mailboxes that is not ours, known by its POP3 UIDL,
 * so readers skip it instead of retrieving the same newsletters every session
 * (and starving on them), and count each such message once. Shared by the
 * readers of every worker, lock-free: a per-mailbox open-addressed set of UID
 * hashes, allocated when the mailbox's first foreign message is seen. */
#ifndef MS_FOREIGN_H
#define MS_FOREIGN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Per mailbox at most this many are remembered; more are retrieved again and
 * counted again, which is bounded, only slower. */
#define FOREIGN_PER_BOX 128

struct foreign {
    size_t nusers;
    _Atomic(_Atomic uint64_t *) *box;     /* per user: FOREIGN_PER_BOX slots, 0 = free */
};

/* 0 (an allocation failure aborts: lib/alloc.h). */
int foreign_init(struct foreign *f, size_t nusers);
void foreign_free(struct foreign *f);
/* A UID as the key of the set (never 0). */
uint64_t foreign_key(const char *uid, size_t len);
/* Whether any foreign message of user is known (then a reader lists by UIDL). */
int foreign_any(const struct foreign *f, uint32_t user);
int foreign_has(const struct foreign *f, uint32_t user, uint64_t key);
/* Remembers key for user: 1 if it was new (count the message), else 0. */
int foreign_add(struct foreign *f, uint32_t user, uint64_t key);

#endif
