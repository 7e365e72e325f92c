#!/usr/bin/env bash
# t_compare_died.sh: scripts/compare-backends keeps the column of a run that wrote no
# result, marked with why, in compare.txt and report.html, and exits 1 naming it; on
# SIGINT it lets the run in progress end, leaves its cut-short result out, writes the
# table of the runs done with the lost runs named, and exits 130. A stand-in for
# mailsoak dies with SIGBUS (or sends the SIGINT a terminal would) for one label and
# runs the real one otherwise. Reference-server columns of 2 s: no testbed, no root.
source "$(dirname "$0")/lib.sh"
[[ -x $MAILSOAK && -x $MAILSOAK_SERVER ]] || { echo "skip: build first"; exit 77; }

cat >"$WORK/mailsoak" <<'EOF'
#!/usr/bin/env bash
# The label after --label decides: DIE_LABEL dies with SIGBUS, INT_LABEL gets the
# terminal's SIGINT (it and compare-backends, its parent) a second into its run.
prev=''
for a; do
	if [[ $prev == --label && $a == "${DIE_LABEL:-}" ]]; then ulimit -c 0; kill -BUS $$; fi
	if [[ $prev == --label && $a == "${INT_LABEL:-}" ]]; then (sleep 1; kill -INT $$ $PPID) & fi
	prev=$a
done
exec "$REAL_MAILSOAK" "$@"
EOF
chmod +x "$WORK/mailsoak"
args=(--backends "" --users 20 --duration 2s -- --drain 1s --set run.sweep_timeout=2s --interval 500ms)

REAL_MAILSOAK=$MAILSOAK DIE_LABEL=ref-memory MAILSOAK=$WORK/mailsoak MAILSOAK_SERVER=$MAILSOAK_SERVER \
    timeout 300 "$TOP/scripts/compare-backends" --stores "maildir memory" --out "$WORK/died" "${args[@]}" \
    >"$WORK/died.out" 2>"$WORK/died.err"
check "a run without a result: exit 1" eq "$?" 1 || tail -20 "$WORK/died.err"
check "its column stays in the table, with no run" grep -qE '^runs +1 +0 of 1$' "$WORK/died/compare.txt" ||
    cat "$WORK/died/compare.txt"
check "the table names it and why" grep -qx '  ref-memory: run 1: killed by SIGBUS (status 135); see ref-memory-1.log' \
    "$WORK/died/compare.txt"
check "the report has its column and the reason" grep -q '<li>ref-memory: run 1: killed by SIGBUS' \
    "$WORK/died/report.html"
check "the last line names it" bash -c "tail -n1 '$WORK/died.err' | grep -q '^compare-backends: runs without a result: ref-memory=run 1: killed by SIGBUS'"

REAL_MAILSOAK=$MAILSOAK INT_LABEL=ref-memory MAILSOAK=$WORK/mailsoak MAILSOAK_SERVER=$MAILSOAK_SERVER \
    timeout 300 "$TOP/scripts/compare-backends" --stores "maildir memory sqlite" --out "$WORK/int" "${args[@]}" \
    >"$WORK/int.out" 2>"$WORK/int.err"
check "SIGINT: exit 130" eq "$?" 130 || tail -20 "$WORK/int.err"
check "the table of the runs done" grep -qE '^runs +1 +0 of 1 +0 of 1$' "$WORK/int/compare.txt" ||
    cat "$WORK/int/compare.txt"
check "the run in progress named, its partial result left out" grep -qx \
    '  ref-memory: run 1: interrupted by SIGINT; its partial result kept as ref-memory-1.interrupted.json' \
    "$WORK/int/compare.txt"
check "and kept apart" test -s "$WORK/int/ref-memory-1.interrupted.json"
check "the run not started named" grep -qx '  ref-sqlite: run 1: not run (SIGINT)' "$WORK/int/compare.txt"
check "the report too" grep -q '<li>ref-sqlite: run 1: not run (SIGINT)</li>' "$WORK/int/report.html"
finish
