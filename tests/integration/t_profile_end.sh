#!/usr/bin/env bash
# t_profile_end.sh: smtp.profile_end = decided ends the send window at a stage that
# ran out its time undecided while our readers fell behind, as it does at one
# decided behind: the stages after it would start with the mail the readers left,
# and say nothing of the server (capacity's staircase throws them away). Stages of
# 10 s at an interval of 1 s are shorter than the sequential test's first decision
# (8 batches of 2 s at the default capacity.level), so each runs out its time.
# IMAP poll clients that log in every 60 s leave the mail waiting in the mailboxes:
# the second stage (the first is a lead-in, not judged) is our readers', and the
# third never runs. POP3 readers that keep up (going where mail is owed: few
# logins) run all three. Where the run counts the server's queue (a reference
# server with a rate limit far above the load and a spool directory), the stages
# weigh that queue, which the mail the IMAP clients leave does not enter: all
# three run (the third of 3 s). Three runs of 15-25 s.
source "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }
[[ -x $MAILSOAK && -x $MAILSOAK_SERVER ]] || { echo "skip: build first"; exit 77; }
USERS=40

# soak NAME [settings...]: three stages at 30 msg/s, an entry every second; $WORK/NAME.json
soak() {
    local name=$1
    shift
    "$MAILSOAK" run --no-check --smtp "$SMTP" --set users.count=$USERS --senders 6 --readers 2 \
        --set smtp.profile=5s@30,10s@30,10s@30 --set smtp.profile_end=decided --interval 1s --seed 5 \
        --json "$WORK/$name.json" "$@" >"$WORK/$name.txt" 2>"$WORK/$name.live"
}
# stage N's length as the result wrote it
span() { jget "$WORK/$1.json" ".verdict.stages[$2] | .t1 - .t0"; }
holds() { jq -e "$2" "$WORK/$1.json" >/dev/null; }
absent() { ! grep -q "$1" "$2"; }

ref_up srv
soak held --imap "$IMAP" --set readers.protocol=imap --set imap.models=poll:100 --set imap.poll_interval=60s \
    --max-per-session 500 --drain 1s
rc=$?
check "held: the run ended (exit $rc)" test "$rc" -lt 64
check "held: the live line names the stage our readers held" \
    grep -q "stage 2 of 3 (30 msg/s) ran out undecided, our readers behind" "$WORK/held.live" || cat "$WORK/held.live"
check "held: the second stage ran its 10 s" holds held '.verdict.stages[1] | .t1 - .t0 > 9'
check "held: the third never ran ($(span held 2) s)" holds held '.verdict.stages[2] | .t1 - .t0 == 0 and .accepted == 0'
ref_down

mkdir -p "$WORK/spool"
ref_up srvq --set fault.rate.limit=300 --set fault.rate.burst=50 --set fault.rate.spool_dir="$WORK/spool"
soak queued --imap "$IMAP" --set readers.protocol=imap --set imap.models=poll:100 --set imap.poll_interval=60s \
    --max-per-session 500 --drain 1s --set server.spool_dir="$WORK/spool" --set server.spool_format=files \
    --set smtp.profile=5s@30,10s@30,3s@30
rc=$?
check "queued: the run ended (exit $rc)" test "$rc" -lt 64
check "queued: the queue was counted" holds queued '[.timeline[] | select(.phase == "send") | .server.spool | numbers] | length > 0'
check "queued: no stage ended for our readers" absent "ran out undecided" "$WORK/queued.live" || cat "$WORK/queued.live"
check "queued: the third stage ran its 3 s ($(span queued 2) s)" holds queued '.verdict.stages[2] | .t1 - .t0 > 2'
ref_down

ref_up srv2
soak kept --pop3 "$POP3" --set pop3.visit=owed --drain 10s
rc=$?
check "kept: exit 0" eq "$rc" 0
check "kept: no stage ended early" absent "ran out undecided" "$WORK/kept.live"
check "kept: the third stage ran its 10 s ($(span kept 2) s)" holds kept '.verdict.stages[2] | .t1 - .t0 > 9'
ref_down
finish
