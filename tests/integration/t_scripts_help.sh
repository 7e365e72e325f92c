#!/usr/bin/env bash
# t_scripts_help.sh: the scripts a user runs by hand answer --help with their whole
# usage on stdout and exit 0 (scripts/testbed's and scripts/compare-backends' once
# went to stderr with status 2, cut at a fixed line of their headers, the latter
# mid-sentence); a wrong call still exits 2 with the usage on stderr.
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
help compare-backends --duration --repeat --users --out --conf --backends --stores --capacity \
    "then the classic table of each search's step at its capacity (what the server spent there)."
"$TOP/scripts/compare-backends" --bogus >"$WORK/cb.out" 2>"$WORK/cb.err"
check "compare-backends with a wrong option exits 2" eq "$?" 2
check "compare-backends with a wrong option: the usage on stderr" grep -q '^Usage:' "$WORK/cb.err"
help mutate --list --only --keep "separated by blank lines; '#' starts a comment line."
help soak-long --duration --rate --every --warmup --csv --dir \
    "Exits 0 when every series is flat, 1 when one is not, 2 on bad arguments or setup."
for script in mutate soak-long; do
    "$TOP/scripts/$script" --bogus >"$WORK/$script.out" 2>"$WORK/$script.err"
    check "$script with a wrong option exits 2" eq "$?" 2
    check "$script with a wrong option: nothing on stdout" eq "$(cat "$WORK/$script.out")" ""
done
finish
