#!/usr/bin/env bash
# t_compare_progress.sh: scripts/compare-backends says where it is: before each run
# "run N of TOTAL: LABEL #K", with an ETA from the runs done once there are some, and
# the live line of the run in progress on its stderr (it went to the run's log
# alone), the table and its summary at the end; and its --help. Two reference-server
# columns, 2 s each (no testbed, no root needed).
source "$(dirname "$0")/lib.sh"
[[ -x $MAILSOAK && -x $MAILSOAK_SERVER ]] || { echo "skip: build first"; exit 77; }

MAILSOAK=$MAILSOAK MAILSOAK_SERVER=$MAILSOAK_SERVER timeout 300 "$TOP/scripts/compare-backends" --backends "" \
    --stores "maildir memory" --users 20 --duration 2s --out "$WORK/cb" \
    -- --drain 1s --set run.sweep_timeout=2s --interval 500ms >"$WORK/out.txt" 2>"$WORK/err.txt"
check "compare-backends exits 0" eq "$?" 0 || tail -20 "$WORK/err.txt"
check "progress before the first run" grep -qx 'compare-backends: run 1 of 2: ref-maildir #1' "$WORK/err.txt"
check "progress with an ETA before the second" grep -qE '^compare-backends: run 2 of 2: ref-memory #1, ETA [0-9]+ min$' \
    "$WORK/err.txt"
# The live lines between the two progress lines belong to the first run.
first=$(sed -n '/run 1 of 2/,/run 2 of 2/p' "$WORK/err.txt" | grep -cE '^\[ +[0-9]+s (send|drain|sweep) *\] sent ')
check "the first run's live lines shown as it runs ($first)" gt "$first" 1
check "and kept in its log too" grep -qE '^\[ +[0-9]+s send ' "$WORK/cb/ref-maildir-1.log"
check "the table at the end" grep -qE '^sent ' "$WORK/out.txt"
check "then its summary" grep -qE '^  answer +' "$WORK/out.txt"

# --help says what a newcomer must know before starting an hour of runs.
"$TOP/scripts/compare-backends" --help >"$WORK/help.txt"
check "--help gives the defaults" grep -q '^Defaults: --backends "maildir mbox sdbox mdbox"' "$WORK/help.txt"
check "--help: the time they take" grep -q 'the defaults take' "$WORK/help.txt"
check "--help: the output folder" grep -q 'compare-YYYYmmdd-HHMMSS' "$WORK/help.txt"
check "--help: the need for root" grep -q '^Needs root' "$WORK/help.txt"
finish
