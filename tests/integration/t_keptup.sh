#!/usr/bin/env bash
# t_keptup.sh: the "kept up" gate of the default preset, against the reference
# server's known delivery ceiling ([fault.rate] limit = 30, over = queue: it accepts
# everything and delivers 30 msg/s). A plain run offered 140 % of the ceiling fails
# the named gate "kept up" with exit 4, its backlog charged to the server; one at
# 80 % passes it with exit 0. Each both without the server's side in view and with
# its mailboxes counted ([server] store_dir on its maildir). Four runs of 12 s.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"
[[ -x $MAILSOAK ]] || { echo "no $MAILSOAK: run make"; exit 77; }
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }

LIMIT=30 BURST=10
# run_at NAME RATE [args]: 12 s at RATE msg/s, an entry every second, on the server started last
run_at() {
    local name=$1 rate=$2
    shift 2
    "$MAILSOAK" run --no-check --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" --set users.count=20 \
        --senders 10 --readers 4 --duration 12s --drain 30s --interval 1s --rate "$rate" --seed 5 \
        --json "$WORK/$name.json" "$@" >"$WORK/$name.out" 2>&1
}
gate() { jq -r --arg g "$2" '.verdict.gates.results[] | select(.name == $g) | .pass' "$WORK/$1.json"; }

for view in none store; do
    rm -rf "$WORK/mail"
    srv_start --set users.count=20 --store maildir --store-dir "$WORK/mail" --set server.fsync=no \
        --set fault.rate.limit=$LIMIT --set fault.rate.burst=$BURST
    extra=()
    # a count is read when its walks span two of them: walk every second
    [[ $view == store ]] && extra=(--set "server.store_dir=$WORK/mail" --set server.walk_interval=1s)
    over=$((LIMIT * 14 / 10)) under=$((LIMIT * 8 / 10))
    run_at "over-$view" $over "${extra[@]}"
    rc=$?
    ((rc == 4)) || { cat "$WORK/over-$view.out"; fail "$view: $over msg/s against $LIMIT exited $rc, not 4"; }
    [[ $(gate "over-$view" "kept up") == false ]] || { cat "$WORK/over-$view.out"; fail "$view: no failed 'kept up' gate"; }
    [[ $(jq -r '.verdict.kept.outcome' "$WORK/over-$view.json") == behind ]] || fail "$view: not charged to the server"
    # the mailboxes, counted, did not take the growth: the server's queue did
    [[ $view == none ]] || jq -e '[.timeline[] | select(.phase == "send") | .server.store_messages] | length > 2' \
        "$WORK/over-$view.json" >/dev/null || fail "$view: the mailboxes were not counted"
    grep -q "FAIL kept up: the backlog grew" "$WORK/over-$view.out" || fail "$view: the table does not name the gate"
    [[ $(jq -r '.summary.lost' "$WORK/over-$view.json") == 0 ]] || fail "$view: mail lost at $over msg/s"
    # the slope the gate read is the backlog's own: at least half of what the ceiling cannot take
    slope=$(jq -r '.verdict.kept.value' "$WORK/over-$view.json")
    jq -e --argjson o $over --argjson l $LIMIT '.verdict.kept.value >= ($o - $l) / 2' "$WORK/over-$view.json" >/dev/null ||
        fail "$view: the backlog grew $slope msg/s at $over against $LIMIT"
    ok "$view: $over msg/s against a ceiling of $LIMIT: exit 4, 'kept up' failed, the backlog grew $slope msg/s"
    run_at "under-$view" $under "${extra[@]}"
    rc=$?
    ((rc == 0)) || { cat "$WORK/under-$view.out"; fail "$view: $under msg/s against $LIMIT exited $rc, not 0"; }
    [[ $(gate "under-$view" "kept up") == true ]] || { cat "$WORK/under-$view.out"; fail "$view: 'kept up' not judged or failed"; }
    ok "$view: $under msg/s: exit 0, kept up ($(jq -r '.verdict.kept.why' "$WORK/under-$view.json"))"
    srv_stop
done
