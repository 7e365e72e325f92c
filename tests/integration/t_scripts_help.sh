#!/usr/bin/env bash
# t_scripts_help.sh: the scripts a user runs by hand answer --help with their whole
# usage on stdout and exit 0 (scripts/testbed's once went to stderr with status 2,
# and was cut at a fixed line of its header); a wrong call still exits 2 with the
# usage on stderr.
source "$(dirname "$0")/lib.sh"

# help SCRIPT WORD...: SCRIPT --help exits 0, prints on stdout only, and names every WORD.
help() {
    local script=$1 w
    shift
    "$TOP/scripts/$script" --help >"$WORK/$script.out" 2>"$WORK/$script.err"
    check "$script --help exits 0" eq "$?" 0
    check "$script --help: nothing on stderr" eq "$(cat "$WORK/$script.err")" ""
    for w in "$@"; do
        check "$script --help names $w" grep -qF -- "$w" "$WORK/$script.out"
    done
}

# Every command and option the script's own parser takes (up ... flush, --dir,
# --listen, --sql, --timeout) and the last line of its usage block.
help testbed "testbed up" "testbed down" "testbed status" "testbed count" "testbed flush" --dir --listen --sql \
    --timeout "dicts in an SQLite file or a private PostgreSQL or MariaDB instance (scripts/testbed-sql)."
"$TOP/scripts/testbed" >"$WORK/none.out" 2>"$WORK/none.err"
check "testbed without a command exits 2" eq "$?" 2
check "testbed without a command: the usage on stderr" grep -q '^Usage:' "$WORK/none.err"
check "testbed without a command: nothing on stdout" eq "$(cat "$WORK/none.out")" ""
finish
