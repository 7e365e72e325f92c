/* store_mbox: the store backend of one mboxrd file per user (store_mbox.c). */
#ifndef MS_SERVER_STORE_MBOX_H
#define MS_SERVER_STORE_MBOX_H

#include "server/store/store.h"

extern const struct srv_backend_ops srv_store_mbox;

#endif
