/* imap: the reference server's IMAP sessions (imap.c). */
#ifndef MS_SERVER_IMAP_H
#define MS_SERVER_IMAP_H

#include <stddef.h>
#include <stdint.h>

#include "server/imap_box.h"

struct srv;
struct imap;

/* Called by the listener for each accepted descriptor; tls: implicit TLS (IMAPS). */
void srv_imap_accept(struct srv *srv, int fd, int tls);
/* The store's delivery watch (srv_store_watch): ud is the server. */
void srv_imap_delivered(void *ud, size_t user);

#endif
