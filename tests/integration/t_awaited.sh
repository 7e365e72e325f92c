#!/usr/bin/env bash
# A log and a queue directory that do not exist when the run starts (Exim creates
# paniclog on its first write and spool/input with its first message): the run
# warns and goes on, reads the log from its first line once it appears and counts
# its hits, and counts the queue in messages once it exists. Against the demo (the
# reference server mailsoak starts itself), the late files made by this test, once
# the run sends (its live line every 500 ms says so): lines logged before the run
# began are not the run's, and under ASan at a load of 12 its start came 1.5 s
# after the program's, which a fixed sleep took for the run.
source "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "skip: needs jq" >&2; exit 77; }

LOG=$WORK/late/paniclog           # its directory does not exist either
SPOOL=$WORK/exim4
# shellcheck disable=SC2317 # called through wait_for
sends() { grep -c 's send \]' "$WORK/err.txt" 2>/dev/null; }
(
    # shellcheck disable=SC2317 # called through wait_for
    more_sends() { (($(sends) > ${1:-0})); }
    wait_for 60 more_sends 0 || exit 1
    mkdir -p "$WORK/late"
    printf 'LATE-MARKER-1 written before anyone read the file\nLATE-MARKER-2\n' >>"$LOG"
    mkdir -p "$SPOOL"
    cp -r "$TOP/tests/fixtures/queue/exim/input" "$TOP/tests/fixtures/queue/exim/msglog" "$SPOOL/"
    # appended after a later live line: read in a later sample than the first two
    wait_for 60 more_sends "$(sends)" || exit 1
    printf 'not a marker\nLATE-MARKER-3 appended later\n' >>"$LOG"
) &
writer=$!
# beside it, a sendmail queue that exists from the start (4 messages: qf and hf)
# (with a timeline every 500 ms the kept-up gate judges the 4 s: the demo's readers
# trail its senders there, a backlog this test is not about)
TMPDIR=$WORK "$MAILSOAK" run --duration 4s --drain 2s --set run.interval=500ms --set gate.kept_up=no \
    --set "server.log=$LOG" --set "server.spool_dir=$SPOOL" \
    --set "server.spool_dir=$TOP/tests/fixtures/queue/sendmail" \
    --set "server.log_class=late: LATE-MARKER-[0-9]+" --json "$WORK/run.json" >"$WORK/table.txt" 2>"$WORK/err.txt"
rc=$?
wait $writer
writer_rc=$?
cat "$WORK/err.txt"
check "the late files were made while the run sent" eq "$writer_rc" 0
check "run exits 0" eq "$rc" 0
check "a warning for the log" grep -q "server.log: $LOG does not exist yet" "$WORK/err.txt"
check "a warning for the spool" grep -q "server.spool_dir: $SPOOL does not exist yet" "$WORK/err.txt"
check "every line of the late log counted" eq "$(jget "$WORK/run.json" .summary.log_classes.late.count)" 3
check "its first line among the examples" \
    eq "$(jget "$WORK/run.json" '.summary.log_classes.late.examples[0].line')" \
    "LATE-MARKER-1 written before anyone read the file"
check "the log's appearance is an event" \
    eq "$(jget "$WORK/run.json" '[.events[] | select(.kind == "log_appeared")] | length')" 1
check "both were awaited on the timeline" \
    eq "$(jget "$WORK/run.json" '[.events[] | select(.kind == "awaited")] | length')" 2
check "what auto recognised is said" grep -q "sendmail queue directory, counted in messages" "$WORK/err.txt"
check "and is on the timeline" eq "$(jget "$WORK/run.json" '[.events[] | select(.kind == "spool")] | length')" 1
check "the late queue counted in messages, with the other (4 + 4 of 19 files)" \
    eq "$(jget "$WORK/run.json" .summary.spool)" 8
finish
