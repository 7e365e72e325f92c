/* db: the database the server uses ([server] database = KIND:PARAMETERS), read through
 * its own client library every sample, on the collector's thread. What each kind gives
 * (struct probe_db, probe/sample.h):
 *
 *              PostgreSQL (libpq)                  MariaDB / MySQL (libmariadb)
 * lock_waits   waits seen in pg_locks (a new        Innodb_row_lock_waits
 *              pid + waitstart per reading)
 * waiting      backends waiting on a Lock now       Innodb_row_lock_current_waits
 * deadlocks    pg_stat_database.deadlocks (sum)     Innodb_deadlocks
 * errors       pg_stat_database.xact_rollback       Handler_rollback (a failed statement
 *              (a failed statement rolls back)      rolls its transaction back)
 * conns        client backends but ours             Threads_connected but ours
 * conns_max    max_connections minus the            max_connections
 *              superuser_reserved_connections
 *
 * Cumulative counters are the server's own, since it started; the run's writers print
 * their growth over the run. PostgreSQL keeps no count of lock waits: a wait shorter
 * than the sample interval can be missed (waits past deadlock_timeout are logged with
 * log_lock_waits = on, log class lock_wait). SQLite has no server to ask: its lock
 * failures and errors are counted from the servers' logs (the collector fills them
 * from the classes db_locked and db_error); kind sqlite opens nothing here.
 *
 * One connection of our own, opened at the start (a setup error when it fails) and
 * again after a failed reading; each reading is one query, bounded by a 2 s timeout. */
#ifndef MS_PROBE_DB_H
#define MS_PROBE_DB_H

#include <stddef.h>

#include "probe/sample.h"

struct dbmon;

/* "pgsql:CONNINFO" (libpq's keyword=value pairs or a postgresql:// URI),
 * "mysql:KEY=VALUE ..." (socket, host, port, user, password, database), "sqlite:PATH".
 * NULL with "server.database: ..." in err (the password never shown). */
struct dbmon *dbmon_new(const char *spec, char *err, size_t errlen);
enum probe_db_kind dbmon_kind(const struct dbmon *m);
/* Fills out's counters from one reading; on a failure the last reading's stand and
 * out->unreadable counts it (and out->why says why, for the event). Returns 0 or -1. */
int dbmon_read(struct dbmon *m, struct probe_db *out, char *why, size_t whylen);
void dbmon_free(struct dbmon *m);

/* For the unit tests: the MariaDB spec's parser. 0, or -1 with the bad word in err. */
struct db_mysql_params {
    char socket[256], host[256], user[128], password[128], database[128];
    unsigned port;
};
int db_parse_mysql(const char *spec, struct db_mysql_params *p, char *err, size_t errlen);

#endif
