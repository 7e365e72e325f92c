/* util: the reference server's log and its address book (util.c). */
#ifndef MS_SERVER_UTIL_H
#define MS_SERVER_UTIL_H

#include <stddef.h>

#include "lib/users.h"
#include "server/config.h"

/* The log: syslog-style lines appended with one write() each, so the store thread
 * and the loop can both log. NULL path = stderr. */
int srv_log_open(const char *path, const char *ident);
void srv_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void srv_log_close(void);

/* Address -> user index, built once; lookups are lock-free reads. */
struct srv_book {
    const struct users *u;
    long *slot;
    size_t cap;
};
int srv_book_init(struct srv_book *b, const struct users *u);
long srv_book_find(const struct srv_book *b, const char *addr, size_t len);
void srv_book_free(struct srv_book *b);
int srv_users_load(const struct srv_config *cfg, struct users *u, char *err, size_t errlen);

#endif
