# tests/integration/sql_lib.sh: the tests' own look at a `testbed --sql` database, through
# the database's own client (psql, mariadb; Python's sqlite3 module for SQLite), never
# through mailsoak. Sourced after lib.sh and testbed_up (it reads testbed.env's SQL,
# DB_RUN, DB_PORT and SQLITE_DB).
# shellcheck shell=bash

# db_query SQL: the rows, tab-separated, no header.
db_query() {
    case $SQL in
    sqlite) python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
for r in c.execute(sys.argv[2]): print("\t".join(str(v) for v in r))' "$SQLITE_DB" "$1" ;;
    pgsql) setpriv --reuid=postgres --regid="$(id -g postgres)" --init-groups -- \
        /usr/lib/postgresql/15/bin/psql -X -q -At -F $'\t' -h "$DB_RUN" -p "$DB_PORT" -U postgres -d mail -c "$1" ;;
    mysql) mariadb --no-defaults --socket="$DB_RUN/mysqld.sock" -u root -N -B mail -e "$1" ;;
    esac
}

# soak_bg JSON SECONDS [mailsoak run ARG...]: a soak of the testbed in the background at a
# modest constant rate, its result in JSON; SOAK_PID is its PID (wait for it).
soak_bg() {
    local json=$1 secs=$2
    shift 2
    "$MAILSOAK" run -c "$TB/mailsoak.conf" --duration "${secs}s" --json "$json" \
        --set smtp.senders=2 --set pop3.readers=2 --set smtp.rate=15 --set run.drain=20s \
        --set server.sample_interval=250ms "$@" >"$json.log" 2>&1 &
    SOAK_PID=$!
}

# soak_wait: the soak's exit status (its log shown when it wrote no result).
soak_wait() {
    local rc=0
    wait "$SOAK_PID" || rc=$?
    [[ -s $1 ]] || { tail -n 20 "$1.log" >&2; }
    return "$rc"
}
