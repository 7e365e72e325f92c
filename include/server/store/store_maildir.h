/* store_maildir: the store backend of a file per message in
 * STORE_DIR/ADDRESS/{tmp,new,cur} (store_maildir.c). */
#ifndef MS_SERVER_STORE_MAILDIR_H
#define MS_SERVER_STORE_MAILDIR_H

#include "server/store/store.h"

extern const struct srv_backend_ops srv_store_maildir;

#endif
