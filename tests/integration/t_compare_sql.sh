#!/usr/bin/env bash
# t_compare_sql.sh: scripts/compare-backends' SQL matrix in one command, small: maildir with
# its users and dicts in files and in PostgreSQL, on stores filled beforehand (--fill), one
# short run each. The table has a column per store and database, in that order; the
# database's rows are there, measured for the PostgreSQL column and "-" for the files one;
# each run filled its mailboxes and verified them before its window.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
need_root
"$TOP/scripts/deps" install test >/dev/null || { echo "skip: scripts/deps install test failed" >&2; exit 77; }

OUT=$WORK/cmp
MAILSOAK=$MAILSOAK timeout 600 "$TOP/scripts/compare-backends" --backends maildir --sql "files pgsql" --stores "" \
    --users 10 --fill 2-3 --duration 6s --out "$OUT" -- --set run.drain=20s >"$WORK/cmp.log" 2>&1
rc=$?
check "compare-backends: exit 0" eq "$rc" 0
[[ $rc -eq 0 ]] || tail -n 20 "$WORK/cmp.log"
C=$OUT/compare.json
check "columns: maildir, maildir+pgsql" eq "$(jq -r '[.columns[].label] | join(",")' "$C")" "maildir,maildir+pgsql"
row() { jq -r --arg m "$1" '.rows[] | select(.metric == $m) | [.values[] | if .n == 0 then "-" else (.mean | tostring) end] | join(",")' "$C"; }
check "db conns: measured for pgsql, '-' for files" grep -qE '^-,[1-9][0-9]*$' <<<"$(row 'db conns')"
check "db deadlocks: 0 for pgsql, '-' for files" eq "$(row 'db deadlocks')" "-,0"
check "db cpu: '-' for files (no database process), measured for pgsql" grep -qE '^-,[0-9.]+$' <<<"$(row 'db cpu')"
check "pop3 cpu: both columns" grep -qE '^[0-9.]+,[0-9.]+$' <<<"$(row 'pop3 cpu')"
for l in maildir maildir+pgsql; do
    check "$l: its mailboxes filled and verified before the window" \
        test "$(jq '.fill.verified > 0 and .fill.verified == .fill.planned' "$OUT/$l-1.json")" = true
    check "$l: no loss" eq "$(jget "$OUT/$l-1.json" .summary.lost)" 0
done
check "the text table shows the database's rows" grep -qE '^db waits +- +[0-9]' "$OUT/compare.txt"
finish
