#!/usr/bin/env bash
# t_db_sqlite.sh: SQLite's counters (server.database = sqlite:PATH), which come from the
# servers' logs, on `testbed --sql sqlite` under a soak. Mid-run a writer holds BEGIN
# EXCLUSIVE on the database for 3 s (Dovecot's sqlite driver gives up after 1 s, Postfix's
# at once): db.lock_waits is the lines of the class lock_wait, and those are the lines that
# say the database (or a table) is locked in the testbed's logs, SQLite's words for
# SQLITE_BUSY and SQLITE_LOCKED, logged while the run ran (grep's count, not ours; a
# line logged as the run starts or reads the logs for the last time may fall on either
# side); db.errors counts the class db_error; the database has no process of its own
# (no db part).
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/sql_lib.sh
source "$(dirname "$0")/sql_lib.sh"
need_root
"$TOP/scripts/deps" install test >/dev/null || { echo "skip: scripts/deps install test failed" >&2; exit 77; }
testbed_up maildir 10 --sql sqlite

R=$WORK/r.json
soak_bg "$R" 12
# shellcheck disable=SC2317 # called through wait_for
quota_rows() { [[ $(db_query 'SELECT count(*) FROM quota') -gt 0 ]]; }
# Dovecot's LMTP logs each message it stores ("saved mail to INBOX"): a witness that
# stays, where the store's count does not (the soak's readers empty the mailboxes as
# mail arrives, so a count of them could read 0 for a minute, as under ASan it did).
# shellcheck disable=SC2317 # called through wait_for
stored() { grep -q 'saved mail to' "$DOVECOT_LOG"; }
# The quota row is written as Dovecot stores a message: on a loaded machine the run's
# first delivery can come late, so its 30 s count from it. On a failure, what Dovecot
# said of its dict and the store's count say which step did not happen.
check "the soak's mail reaches the store" wait_for 60 stored
check "deliveries write the quota dict" wait_for 30 quota_rows || {
    "$TOP/scripts/testbed" count --dir "$TB" >&2
    grep -iE 'dict|quota|sqlite' "$TB/log/dovecot.log" | tail -n 20 >&2
}
python3 -c 'import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10); c.execute("BEGIN EXCLUSIVE")
time.sleep(3); c.execute("COMMIT")' "$SQLITE_DB"
soak_wait "$R"
check "the soak wrote its result" test -s "$R" || finish

LOCKED='database( table)? is locked|SQLITE_BUSY'
# The run counts the lines logged while it ran: from its start (start_unix_ms: its
# preflight's SMTP and POP3 logins come before it and can log one too, 9 logged and 8
# counted under ASan, whose preflight is slower) to its last sample (the timeline's last
# entry: start_unix_ms + t; the sweep's logins can log one as it reads the logs for the
# last time). A line stamped within 2 s of either end may fall on either side: the
# stamps' rounding to the second and the loggers' own delay (a Postfix process stamps
# its line before postlogd writes it).
read -r first last < <(jq -er '[.start_unix_ms / 1000, (.start_unix_ms + 1000 * .timeline[-1].t) / 1000]
    | map(floor) | @tsv' "$R")
check "the result says when the run started and sampled last" test -n "${last:-}" || finish
locked=0 within=0 maybe=0
while read -r stamp; do
    t=$(date -d "$stamp" +%s) || continue
    locked=$((locked + 1))
    ((t >= first + 2 && t < last - 2)) && within=$((within + 1))
    ((t >= first - 2)) && maybe=$((maybe + 1))
done < <(cat "$POSTFIX_LOG" "$DOVECOT_LOG" | grep -iE "$LOCKED" | cut -c1-15)
j() { jget "$R" "$1"; }
check "the servers logged the locked database while the run ran" gt "$within" 0
check "db.kind is sqlite" eq "$(j .summary.db.kind)" sqlite
waits=$(j .summary.db.lock_waits)
check "db.lock_waits $waits: the lines saying the database is locked while the run ran ($within, $maybe with those \
near its ends; $locked in all)" test "$waits" -ge "$within" -a "$waits" -le "$maybe"
check "db.lock_waits: the class lock_wait's count" eq "$(j .summary.db.lock_waits)" "$(j .summary.log_classes.lock_wait.count)"
check "db.errors: the class db_error's count" eq "$(j .summary.db.errors)" "$(j .summary.log_classes.db_error.count)"
check "db.deadlocks: not measured (null)" eq "$(j .summary.db.deadlocks)" null
check "db.conns_max: not measured (null)" eq "$(j .summary.db.conns_max)" null
check "no db part: SQLite runs inside the servers" eq "$(j '.summary.parts | has("db")')" false
check "the table's db waits row" grep -qE "^db waits +$waits\$" "$R.log"
finish
