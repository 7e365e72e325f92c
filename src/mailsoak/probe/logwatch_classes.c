/* logwatch_classes: the built-in log classes (include/probe/logwatch_classes.h):
 * what each one matches, as the real servers write it (tests/fixtures/logs). */
#include "probe/logwatch_classes.h"

/* The built-in classes. Case is ignored except for Java names. Overlap is intended:
 * "Deadlock found when trying to get lock" is both sql_lock and deadlock. */
const struct logwatch_builtin logwatch_builtins[] = {
    { "sql_lock",
      "database( table| schema)? is locked|SQLITE_(BUSY|LOCKED)|deadlock found when trying to get lock|"
      "lock wait timeout exceeded|could not obtain lock|deadlock detected|"
      "due to lock timeout|could not serialize access|ORA-000(54|60)",
      NULL, 1, 0 },
    { "deadlock", "deadlock", NULL, 1, 0 },
    /* Exim logs "Spool file for ID is locked (another process is handling this
     * message)" whenever a queue runner meets a delivery in progress: routine. The
     * contention that matters: mailutils "locking mailbox `X' failed: Conflict with
     * previous locker", Courier "LOCKED, user=", Dovecot "[IN-USE]". */
    { "lock",
      "(cannot|can't|couldn't|could not|unable to|failed to) (get |obtain |acquire |create |take )?"
      "(an? |the )?(exclusive |shared |write |read )?(dot)?lock|"
      "lock (timeout|timed out|wait timeout|failed)|locking failed|locking mailbox .* failed|"
      "conflict with previous locker|waiting for (the )?lock|dotlock|is locked|\\[IN-USE\\]|"
      "(^|[^[:alnum:]])LOCKED, user=",
      "another process is handling this message", 1, 0 },
    { "timeout",
      "timed out|time-?out( \\([^)]*\\))? (after|while|exceeded|expired|waiting|reading|writing|occurred)|"
      "(read|write|connect|connection|idle|lock|command|data) timeout|for inactivity|deadline exceeded|"
      "reason=timeout|(^|[^[:alnum:]])TIMEOUT, user=",
      NULL, 1, 0 },
    { "oom",
      "out of memory|cannot allocate memory|OutOfMemoryError|oom-kill|memory exhausted|"
      "insufficient memory|bad_alloc",
      NULL, 1, 0 },
    { "java_exception",
      "Exception in thread|"
      "(^|[[:space:]])([[:alpha:]_$][[:alnum:]_$]*\\.)+[[:alnum:]_$]*(Exception|Error)(:|$)|"
      "^[[:space:]]*at [[:alnum:]_$.<>]+\\([^)]*(\\.java:[0-9]+|Native Method|Unknown Source)\\)",
      NULL, 0, 1 },
    /* Dovecot logs "Killed with signal 15 (by pid=...)" when it is stopped: not a crash. */
    { "fatal",
      "(fatal|panic):|fatal error|segmentation fault|segfault|killed (by|with) signal|"
      "core dumped|assertion .*failed|terminate called after throwing|"
      "got signal .(aborted|bus error|illegal instruction|floating point exception)",
      "killed with signal 15", 1, 0 },
    /* A delivery the server will retry: Postfix status=deferred, Exim's "==" lines
     * ("defer (errno)"), OpenSMTPD result=TempFail, sendmail stat=Deferred. */
    { "defer",
      "status=deferred|[[:alnum:]]{6}-[[:alnum:]]{6,11}-[[:alnum:]]{2,4} == |defer \\(-?[0-9]+\\)|"
      "result=\"?TempFail|stat=Deferred",
      NULL, 1, 0 },
    /* I/O and TLS failures: OpenSMTPD "io-error: ... EVP lib", mailutils "got signal
     * `Broken pipe'", Courier "I/O error", OpenSSL's "SSL routines", a full disk. */
    { "io",
      "I/O error|input/output error|(^|[^[:alnum:]])io[- ]error|EVP lib|SSL routines|"
      "SSL_[a-z_]+(\\(\\))? (error|failed)|TLS (library problem|error|failure|handshake failed)|"
      "broken pipe|no space left on device|disk quota exceeded|short write",
      NULL, 1, 0 },
    /* The database's and the dicts' failures, as PostgreSQL 15, MariaDB 10.11, SQLite
     * (through Dovecot and Postfix) and Dovecot's dict and quota plugins write them
     * (tests/fixtures/logs/sql.tsv, made by the real programs). lock_wait: PostgreSQL's
     * log_lock_waits ("still waiting for ShareLock"), InnoDB's timeout, SQLite's busy
     * database and its locked table or schema (SQLite's three wordings: its lock waits,
     * counted for server.database = sqlite:). */
    { "lock_wait", "still waiting for [[:alpha:]]*lock|lock wait timeout exceeded|database( table| schema)? is locked|"
      "SQLITE_BUSY", NULL, 1, 0 },
    /* A server at its connection or process limit: the database's, and Dovecot's
     * (mail_max_userip_connections, a service's process_limit or client_limit:
     * tests/fixtures/logs/imap.tsv), where thousands of idle IMAP clients meet it. */
    { "too_many_connections",
      "too many (connections|clients)|remaining connection slots are reserved|max_user_connections|"
      "maximum number of connections|(process|client)_limit \\([0-9]+\\) reached", NULL, 1, 0 },
    /* A message given a new UID (Dovecot's "Expunged message reappeared, giving a new
     * UID", the reference server's fault again): an IMAP client fetches it again. */
    { "uid_changed", "giving a new UID|expunged message reappeared|UIDVALIDITY changed", NULL, 1, 0 },
    /* A server that can no longer be told of new mail and polls instead: Dovecot's
     * "Inotify instance limit for user ... exceeded, disabling" (one per imap process
     * past fs.inotify.max_user_instances), after which its IDLE clients hear of new
     * mail only every mailbox_idle_check_interval: push latency, not loss. */
    { "notify_limit", "inotify (instance|watch) limit|max_user_(instances|watches)", NULL, 1, 0 },
    /* Dovecot's dict clients and server ("quota-dict: Quota update failed", "last_login_dict:
     * Failed to write value", "dict(PID): Error: quota: dict(pgsql): ...", a dict process
     * killed by a signal). */
    { "dict",
      "[[:alnum:]_-]*dict(\\([^)]*\\))?: (.*(failed|error|fatal|panic)|write was unconfirmed)|"
      "dict-server returned failure", NULL, 1, 0 },
    /* A query or a connection to the database that failed, as the mail servers log it
     * (Dovecot's sql and sqlpool, Postfix's pgsql/mysql/sqlite tables and proxymap); for
     * server.database = sqlite: its errors. */
    { "db_error",
      "query failed|connect failed to database|lookup error for|sql (step|prepare|finalize) failed|"
      "finalize failed|server has gone away|connect to (pgsql|mysql) server|"
      "dict_proxy_lookup: service proxymap: application error", NULL, 1, 0 },
};

const size_t logwatch_nbuiltins = sizeof logwatch_builtins / sizeof logwatch_builtins[0];
