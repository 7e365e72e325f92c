#!/usr/bin/env bash
# Kept-up's attribution over IMAP: the readers' visits (counters.empty_visits and
# full_visits, docs/imap.md) tell readers that could not keep up from a server that
# fell behind, with neither the server's queue nor its mailboxes in view. Poll
# clients that log in too seldom (imap.poll_interval longer than the run) leave the
# mail waiting in the mailboxes: the growing backlog is the tester's, by the visits
# that retrieved mail that waited for them, none left behind. Idle clients on a
# server that delivers 30 msg/s of 42 accepted ([fault.rate]) fetch each message as
# its EXISTS comes: those visits waited for the server, and the backlog is charged
# to it (exit 4). Two runs of 10 s.
source "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }
[[ -x $MAILSOAK && -x $MAILSOAK_SERVER ]] || { echo "skip: build first"; exit 77; }
USERS=40

# soak NAME RATE [settings...]: 10 s at RATE msg/s, an entry every second; $WORK/NAME.json.
# max_per_session at IMAP's 500 a visit: no visit leaves mail behind, so the
# visits' own counts decide.
soak() {
    local name=$1 rate=$2
    shift 2
    "$MAILSOAK" run --no-check --smtp "$SMTP" --imap "$IMAP" --set readers.protocol=imap \
        --set users.count=$USERS --senders 6 --readers 2 --max-per-session 500 --duration 10s --drain 30s \
        --interval 1s --rate "$rate" --seed 5 --json "$WORK/$name.json" "$@" >"$WORK/$name.txt" 2>"$WORK/$name.live"
}
s() { jget "$WORK/$1.json" "$2"; }
# the send window's sum of an interval key
sent_sum() { jget "$WORK/$1.json" "[.timeline[] | select(.phase == \"send\") | .$2] | add"; }

ref_up poll
# (the clients, not the drain readers, read their mailboxes until the sweep: a short drain)
soak poll 40 --set imap.models=poll:100 --set imap.poll_interval=30s --drain 1s
rc=$?
cat "$WORK/poll.txt"
check "poll: exit 0" eq "$rc" 0
check "poll: every message delivered" eq "$(s poll .summary.delivered)" "$(s poll .summary.sent)"
check "poll: the backlog charged to the tester" eq "$(s poll .verdict.kept.outcome)" tester
check "poll: no visit left mail behind" eq "$(sent_sum poll left_behind)" 0
check "poll: visits retrieved mail that waited for them" gt "$(sent_sum poll full_visits)" 0
check "poll: the table says why" grep -q "visits retrieved mail that waited for them" "$WORK/poll.txt"
check "poll: and the poll clients' remedy" grep -q "or a shorter imap.poll_interval" "$WORK/poll.txt"
ref_down

ref_up idle --set fault.rate.limit=30 --set fault.rate.burst=10
soak idle 42 --set imap.models=idle:100
rc=$?
cat "$WORK/idle.txt"
check "idle: exit 4 (kept up failed)" eq "$rc" 4
check "idle: nothing lost" eq "$(s idle .summary.lost)" 0
check "idle: the backlog charged to the server" eq "$(s idle .verdict.kept.outcome)" behind
# each sync of an idle client is a visit; its pushed mail did not wait for it
# (only a login's sync, at the start, may find mail that came before it)
syncs=$(sent_sum idle idle_syncs) full=$(sent_sum idle full_visits)
check "idle: the clients' syncs counted as visits" gt "$syncs" "$USERS"
check "idle: under 1 in 10 of them found mail that waited ($full of $syncs)" gt "$syncs" "$((full * 10))"
ref_down
finish
