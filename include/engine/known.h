/* known: the messages a mailbox holds that the readers leave where they are, by
 * POP3 UIDL: the filled messages (fill.messages), verified once after the fill
 * and skipped by every later listing, as a mail client skips what it already has;
 * and what a leave-on-server client (pop3.leave) has retrieved, with how many of
 * its checks have seen each since. Per mailbox a sorted array of UID keys
 * (foreign_key()) and their counts; written and read only by the reader holding
 * the mailbox (pop3.exclusive), so it needs no atomics: the mailbox's busy flag
 * (acquire, release) orders its users. */
#ifndef MS_KNOWN_H
#define MS_KNOWN_H

#include <stddef.h>
#include <stdint.h>

struct known_box {
    uint64_t *k;
    uint32_t *seen;                  /* per key: listings that showed it since it was added (IMAP's
                                      * imap.delete = DURATION: the run's ms it was accepted at) */
    uint32_t n, cap;
};

struct known {
    size_t nusers;
    struct known_box *box;           /* NULL: nothing known (no fill) */
    uint64_t total;
};

/* 0 (an allocation failure aborts: lib/alloc.h). */
int known_init(struct known *k, size_t nusers);
void known_free(struct known *k);
static inline int known_any(const struct known *k, uint32_t user)
{
    return k && k->box && user < k->nusers && k->box[user].n;
}
int known_has(const struct known *k, uint32_t user, uint64_t key);
/* 1 if key was new for user, 0 if it was known. */
int known_add(struct known *k, uint32_t user, uint64_t key);
/* The count of key's listings, or NULL when key is not known for user. */
uint32_t *known_seen(struct known *k, uint32_t user, uint64_t key);
/* Forgets key (the message was deleted). */
void known_del(struct known *k, uint32_t user, uint64_t key);

#endif
