#!/usr/bin/env bash
# t_db_pgsql.sh: the collector's PostgreSQL counters (server.database = pgsql:...) against
# PostgreSQL's own answers through psql, on `testbed --sql pgsql` under a soak. Mid-run the
# test holds LOCK TABLE quota for 3 s (the quota dict's UPDATEs wait: the lock waits are
# counted, and PostgreSQL's log_lock_waits line hits the class lock_wait), makes one
# deadlock and three failing statements; then each counter is what psql says: deadlocks
# and rollbacks grew by the same as pg_stat_database's, the connection limit is
# max_connections less the reserved ones, the connections at the end are the client
# backends psql sees, the lock waits are at least the long waits psql saw and at most
# twice all it saw.
# shellcheck disable=SC2317 # helpers called through check and wait_for
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/sql_lib.sh
source "$(dirname "$0")/sql_lib.sh"
need_root
"$TOP/scripts/deps" install test >/dev/null || { echo "skip: scripts/deps install test failed" >&2; exit 77; }
testbed_up maildir 10 --sql pgsql

stat_sum() { db_query "SELECT sum($1) FROM pg_stat_database"; }
deadlocks0=$(stat_sum deadlocks) rollbacks0=$(stat_sum xact_rollback)
R=$WORK/r.json
# Every wait one psql session sees, every 50 ms (\watch): more often than the collector
# samples (250 ms), though a short wait can still fall between its samples. It watches from before
# the soak to its end, as the collector does: the soak's dict updates also wait for each
# other, before and after the lock below (a watch of the lock alone saw 12, the run 15).
# Each line is a wait and how long it had lasted then (its age in seconds).
printf '%s\n' "SELECT pid || ':' || waitstart || ' ' || extract(epoch FROM clock_timestamp() - waitstart)
    FROM pg_locks WHERE NOT granted AND waitstart IS NOT NULL;" \
    '\watch 0.05' | setpriv --reuid=postgres --regid="$(id -g postgres)" --init-groups -- \
    /usr/lib/postgresql/15/bin/psql -X -q -At -h "$DB_RUN" -p "$DB_PORT" -U postgres -d mail >"$WORK/waits" 2>&1 &
watcher=$!
soak_bg "$R" 16

# Once deliveries write the quota dict, lock its table for 3 s.
quota_rows() { [[ $(db_query 'SELECT count(*) FROM quota') -gt 0 ]]; }
check "deliveries write the quota dict" wait_for 30 quota_rows
db_query 'BEGIN; LOCK TABLE quota IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3); COMMIT' >/dev/null

# One deadlock: two sessions update two rows in opposite orders.
db_query 'CREATE TABLE dl (k int PRIMARY KEY, v int); INSERT INTO dl VALUES (1, 0), (2, 0)' >/dev/null
db_query 'BEGIN; UPDATE dl SET v = 1 WHERE k = 1; SELECT pg_sleep(1); UPDATE dl SET v = 1 WHERE k = 2; COMMIT' \
    >/dev/null 2>&1 &
a=$!
db_query 'BEGIN; UPDATE dl SET v = 2 WHERE k = 2; SELECT pg_sleep(1); UPDATE dl SET v = 2 WHERE k = 1; COMMIT' \
    >/dev/null 2>&1 &
b=$!
wait "$a" "$b"
# Three failing statements, each its transaction rolled back.
for _ in 1 2 3; do db_query 'SELECT 1 / 0' >/dev/null 2>&1; done
soak_wait "$R"
check "the soak wrote its result" test -s "$R"
# the client backends now, with the watcher still among them as at the soak's last sample
conns=$(db_query "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
# SIGINT ends psql's \watch, and then psql at the end of its input, writing out what it
# buffered (SIGTERM would lose it); stop_pid only if it has not ended in 5 s.
kill -INT "$watcher"
wait_for 5 eval '! alive "$watcher"' || stop_pid "$watcher"
wait "$watcher" 2>/dev/null
# Distinct waits, and those psql saw last 2 s or more: at least eight of the collector's
# readings, so it cannot have missed them.
ages=$(grep -E '^[0-9]+:' "$WORK/waits" | awk '{ k = $1 " " $2; if ($3 > a[k]) a[k] = $3 } END { for (k in a) print a[k] }')
seen=$(grep -c . <<<"$ages")
long=$(awk '$1 >= 2' <<<"$ages" | grep -c .)
check "psql saw sessions wait for locks" gt "$seen" 0

deadlocks1=$(stat_sum deadlocks) rollbacks1=$(stat_sum xact_rollback)
limit=$(db_query "SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int")
j() { jget "$R" "$1"; }
check "db.kind is pgsql" eq "$(j .summary.db.kind)" pgsql
check "no reading failed" eq "$(j .summary.db.unreadable)" 0
check "db.deadlocks: 1, as pg_stat_database grew" eq "$(j .summary.db.deadlocks)/$((deadlocks1 - deadlocks0))" 1/1
check "db.errors: pg_stat_database's rollbacks over the run" eq "$(j .summary.db.errors)" $((rollbacks1 - rollbacks0))
check "db.errors: at least the four made (3 failures, 1 deadlock victim)" gt "$(j .summary.db.errors)" 3
check "db.conns_max: max_connections less the reserved ones" eq "$(j .summary.db.conns_max)" "$limit"
check "db.conns_final: the client backends psql sees now" eq "$(j .summary.db.conns_final)" "$conns"
check "db.conns_peak: at least those" test "$(j .summary.db.conns_peak)" -ge "$conns"
waits=$(j .summary.db.lock_waits)
# psql's samples can miss a wait shorter than their period (50 ms) that one of the
# collector's catches, so the collector may count a few more than psql saw; twice as many
# is a wait counted again at each reading it spans (the 3 s lock spans twelve).
check "db.lock_waits: at least the $long waits of 2 s psql saw, at most twice its $seen ($waits)" \
    test "$waits" -ge "$long" -a "$waits" -ge 1 -a "$waits" -le $((2 * seen))
check "db.waiting_peak: sessions seen waiting" gt "$(j .summary.db.waiting_peak)" 0
check "log class lock_wait: PostgreSQL's 'still waiting' line" gt "$(j '.summary.log_classes.lock_wait.count')" 0
check "... the example is that line" grep -q 'still waiting for' <<<"$(j '.summary.log_classes.lock_wait.examples[0].line')"
check "log class deadlock: PostgreSQL's 'deadlock detected'" gt "$(j '.summary.log_classes.deadlock.count')" 0
check "the database is a part of the server: its CPU" test "$(j '.summary.parts.db.cpu > 0')" = true
check "... and the MTA's and the POP3 server's" test "$(j '.summary.parts.mta.cpu > 0 and .summary.parts.pop3.cpu > 0')" = true
pg_procs=$(ps -e -o ppid=,pid= | awk -v m="$(head -n1 "$DB_PIDFILE")" '$1 == m || $2 == m' | grep -c .)
check "parts.db.procs_peak: at least the postmaster and its children now ($pg_procs)" \
    test "$(j .summary.parts.db.procs_peak)" -ge "$pg_procs"
check "the table has the database's rows" grep -qE '^db waits +[0-9]' "$R.log"
finish
