/* store_sqlite: the store backend of every mailbox in one SQLite database
 * (store_sqlite.c). */
#ifndef MS_SERVER_STORE_SQLITE_H
#define MS_SERVER_STORE_SQLITE_H

#include "server/store/store.h"

extern const struct srv_backend_ops srv_store_sqlite;

#endif
