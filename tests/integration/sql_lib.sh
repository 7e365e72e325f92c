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

# wait_for SECONDS COMMAND...: polls every 0.2 s until COMMAND succeeds; 1 on timeout.
wait_for() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.2
    done
}
