#!/usr/bin/env bash
# t_db_mysql.sh: the collector's MariaDB counters (server.database = mysql:...) against
# MariaDB's own answers through the mariadb client, on `testbed --sql mysql` under a soak.
# Mid-run the test holds every row of the quota table FOR UPDATE for 12 s, past the
# testbed's innodb_lock_wait_timeout (5 s): the quota dict's UPDATEs wait (counted, as
# Innodb_row_lock_waits counts them) and time out (Dovecot logs "Lock wait timeout
# exceeded": the class lock_wait); then one deadlock of its own. Each counter's growth over the run is
# what SHOW GLOBAL STATUS says; the limit is @@max_connections; the connections at the end
# are the client's Threads_connected less its own.
# shellcheck disable=SC2317 # helpers called through check and wait_for
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/sql_lib.sh
source "$(dirname "$0")/sql_lib.sh"
need_root
"$TOP/scripts/deps" install test >/dev/null || { echo "skip: scripts/deps install test failed" >&2; exit 77; }
testbed_up maildir 10 --sql mysql

status() { db_query "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = '$1'"; }
waits0=$(status INNODB_ROW_LOCK_WAITS) deadlocks0=$(status INNODB_DEADLOCKS) rollbacks0=$(status HANDLER_ROLLBACK)
R=$WORK/r.json
soak_bg "$R" 18

quota_rows() { [[ $(db_query 'SELECT count(*) FROM quota') -gt 0 ]]; }
check "deliveries write the quota dict" wait_for 30 quota_rows
# The lock holds 12 s, so every update that comes in its first 7 s times out, and the
# test waits for Dovecot's line meanwhile (held 7 s, under load no update came in the
# first 2 s once, and nothing timed out).
db_query 'BEGIN; SELECT count(*) FROM quota FOR UPDATE; SELECT SLEEP(12); COMMIT' >/dev/null &
lock=$!
timed_out() { grep -q 'Lock wait timeout exceeded' "$DOVECOT_LOG"; }
check "an update behind the lock timed out (Dovecot's log)" wait_for 12 timed_out
wait "$lock"
check "the quota dict's updates waited for the lock" gt $(($(status INNODB_ROW_LOCK_WAITS) - waits0)) 0

db_query 'CREATE TABLE dl (k int PRIMARY KEY, v int) ENGINE=InnoDB; INSERT INTO dl VALUES (1, 0), (2, 0)'
db_query 'BEGIN; UPDATE dl SET v = 1 WHERE k = 1; SELECT SLEEP(1); UPDATE dl SET v = 1 WHERE k = 2; COMMIT' \
    >/dev/null 2>&1 &
a=$!
db_query 'BEGIN; UPDATE dl SET v = 2 WHERE k = 2; SELECT SLEEP(1); UPDATE dl SET v = 2 WHERE k = 1; COMMIT' \
    >/dev/null 2>&1 &
b=$!
wait "$a" "$b"
soak_wait "$R"
check "the soak wrote its result" test -s "$R"

waits1=$(status INNODB_ROW_LOCK_WAITS) deadlocks1=$(status INNODB_DEADLOCKS) rollbacks1=$(status HANDLER_ROLLBACK)
# Our own connection is one of them.
conns=$(($(status THREADS_CONNECTED) - 1))
j() { jget "$R" "$1"; }
check "db.kind is mysql" eq "$(j .summary.db.kind)" mysql
check "no reading failed" eq "$(j .summary.db.unreadable)" 0
check "db.lock_waits: Innodb_row_lock_waits' growth" eq "$(j .summary.db.lock_waits)" $((waits1 - waits0))
# Ours, and those of the quota dict's own transactions behind the lock (InnoDB's gap locks:
# 4 more here), as InnoDB counts them.
check "db.deadlocks: Innodb_deadlocks' growth" eq "$(j .summary.db.deadlocks)" $((deadlocks1 - deadlocks0))
check "db.deadlocks: at least the one made" gt "$(j .summary.db.deadlocks)" 0
check "db.errors: Handler_rollback's growth" eq "$(j .summary.db.errors)" $((rollbacks1 - rollbacks0))
check "db.errors: the timed-out updates and the deadlock's victim rolled back" gt "$(j .summary.db.errors)" 1
check "db.conns_max: @@max_connections" eq "$(j .summary.db.conns_max)" "$(db_query 'SELECT @@max_connections')"
check "db.conns_final: Threads_connected now, less the client's own" eq "$(j .summary.db.conns_final)" "$conns"
check "db.waiting_peak: sessions seen waiting" gt "$(j .summary.db.waiting_peak)" 0
check "log class lock_wait: Dovecot's 'Lock wait timeout exceeded'" gt "$(j '.summary.log_classes.lock_wait.count')" 0
check "... the example is that line" grep -q 'Lock wait timeout exceeded' \
    <<<"$(j '.summary.log_classes.lock_wait.examples[0].line')"
check "log class deadlock: InnoDB's 'deadlock detected'" gt "$(j '.summary.log_classes.deadlock.count')" 0
check "the database is a part of the server: its CPU" test "$(j '.summary.parts.db.cpu > 0')" = true
check "the table has the database's rows" grep -qE "^db deadlocks +$(j .summary.db.deadlocks)\$" "$R.log"
finish
