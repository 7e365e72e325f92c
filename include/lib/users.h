/* users: the list of mailboxes a run spreads its mail over, from a file of
 * "address password" lines (rabid's format) or from a printf pattern. */
#ifndef MS_USERS_H
#define MS_USERS_H

#include <stddef.h>

struct user {
    char *addr;
    char *pass;
};

struct users {
    struct user *v;
    size_t n;
};

/* 0 ok; -1 with "file:line: reason" in err. */
int users_load_file(struct users *u, const char *path, char *err, size_t errlen);
/* pattern has one integer conversion (user%04d@test.local); password may too. */
int users_from_pattern(struct users *u, const char *pattern, const char *password,
                       size_t count, char *err, size_t errlen);
/* Keeps the users whose index mod n is k, in order (a shard of a load spread over
 * several hosts). 0, or -1 with a reason in err when none would be left. */
int users_keep_shard(struct users *u, size_t k, size_t n, char *err, size_t errlen);
/* Index of an address (case-insensitive), or -1. O(n): for setup, not the hot path. */
long users_find(const struct users *u, const char *addr);
void users_free(struct users *u);

#endif
