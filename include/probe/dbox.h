/* dbox: Dovecot's sdbox and mdbox mailboxes counted for the store walker
 * (dbox.c, under store.c). */
#ifndef MS_PROBE_DBOX_H
#define MS_PROBE_DBOX_H

#include <stdint.h>

/* The messages of one dbox mailbox (a dbox-Mails directory) from its index and
 * transaction logs. */
uint64_t dbox_mailbox_messages(int dfd);

#endif
