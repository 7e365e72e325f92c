/* store_memory: the store backend of mailboxes in the store thread's memory, lost at
 * exit (store_memory.c). */
#ifndef MS_SERVER_STORE_MEMORY_H
#define MS_SERVER_STORE_MEMORY_H

#include "server/store/store.h"

extern const struct srv_backend_ops srv_store_memory;

#endif
