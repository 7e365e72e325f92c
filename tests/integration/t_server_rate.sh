#!/usr/bin/env bash
# t_server_rate.sh: [fault.rate], the reference server's known capacity. At three
# times the limit, over = 451 accepts no more than the bucket and the rate allow
# and refuses the rest with 451 4.3.2; over = queue accepts everything at once but
# delivers at the limit, so the mail accepted and not yet read grows (the run fails
# its "kept up" gate), and all of it arrives in the end; its queue kept in a spool
# directory as well is counted by the run's collector, and empties as it delivers.
# Two runs of 3 s, about 300 messages each.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"
[[ -x $MAILSOAK ]] || { echo "no $MAILSOAK: run make"; exit 77; }
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }

LIMIT=30 BURST=10
run_at() {   # run_at NAME [SETTING...]: 3 s at 90 msg/s on the server started last
    local name=$1
    shift
    "$MAILSOAK" run --no-check --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" --set users.count=20 \
        --senders 20 --readers 4 --duration 3s --drain 10s --interval 1s --rate 90 --seed 3 \
        --json "$WORK/$name.json" "$@" >"$WORK/$name.out" 2>&1
}
s() { jq -r ".summary.$1" "$WORK/$2.json"; }

srv_start --set users.count=20 --set fault.rate.limit=$LIMIT --set fault.rate.burst=$BURST --set fault.rate.over=451
run_at refuse || { cat "$WORK/refuse.out"; fail "the run against over = 451 failed"; }
srv_stop
sent=$(s sent refuse) refused=$(jq -r '.summary.errors_by_class.smtp_eod_451 // 0' "$WORK/refuse.json")
# the bucket's 10 and 30 a second for the 3 s (and the moments the last replies took)
((sent >= 3 * LIMIT && sent <= BURST + 4 * LIMIT)) || fail "over = 451: $sent accepted at 90/s against a limit of $LIMIT/s"
((refused > 100)) || fail "over = 451: only $refused refused with 451"
grep -q "451 4.3.2 Error: over the delivery rate limit" "$WORK/refuse.out" || fail "over = 451: the reply's text is not shown"
[[ $(s delivered refuse) == "$sent" && $(s lost refuse) == 0 ]] || fail "over = 451: delivered $(s delivered refuse) of $sent"
ok "over = 451: $sent accepted (limit $LIMIT/s, burst $BURST), $refused refused with 451 4.3.2, all accepted delivered"

# the queue kept in a spool directory too ([fault.rate] spool_dir), which the run's
# collector counts as a server's queue (server.spool_dir, spool_format = files)
mkdir -p "$WORK/spool"
srv_start --set users.count=20 --set fault.rate.limit=$LIMIT --set fault.rate.burst=$BURST \
    --set fault.rate.spool_dir="$WORK/spool"
# at three times what the server delivers it falls behind by design: the run fails
# its "kept up" gate (exit 4), and every message arrives all the same
run_at queue --set server.spool_dir="$WORK/spool" --set server.spool_format=files
rc=$?
((rc == 4)) || { cat "$WORK/queue.out"; fail "the run against over = queue exited $rc, not 4 (kept up)"; }
[[ $(jq -c '.verdict.gates.failed' "$WORK/queue.json") == '["kept up"]' ]] ||
    fail "over = queue: failed gates $(jq -c '.verdict.gates.failed' "$WORK/queue.json"), not kept up alone"
srv_stop
sent=$(s sent queue)
((sent > 200)) || fail "over = queue: only $sent accepted at 90/s"
[[ $(s errors queue) == 0 && $(s delivered queue) == "$sent" && $(s lost queue) == 0 ]] ||
    fail "over = queue: $(jq -c '.summary | {sent, errors, delivered, lost, pending}' "$WORK/queue.json")"
# unread at the end of each second of sending: it grows by about 90 - 30 a second
read -r u1 u3 <<<"$(jq -r '[.timeline[] | select(.phase == "send") | .unread] | "\(.[0]) \(.[2])"' "$WORK/queue.json")"
((u3 - u1 > 80)) || fail "over = queue: the mail not yet read went from $u1 to $u3 only"
# and no more was read by any interval's end than the server can have delivered by
# then: the bucket's burst and the limit a second since the run began (no mail came
# before it). Per second the readers' retrievals bunch (24 read in one second, 37 in a
# later one at a load of 10), so only the running total is bounded by the server.
over=$(jq --argjson l $LIMIT --argjson b $BURST \
    '[foreach .timeline[] as $i (0; . + $i.read; . - ($b + $l * $i.t))] | max | ceil' "$WORK/queue.json")
((over <= 2)) || fail "over = queue: $over more read by an interval's end than $BURST + $LIMIT a second allow"
max=$(jq '[.timeline[1:][] | .read] | max' "$WORK/queue.json")
grep -q "rate: 30 msg/s limit: 0 refused above it, 0 still queued and dropped at the stop" "$WORK/server.log" ||
    fail "over = queue: the stop's log line is missing"
ok "over = queue: all $sent accepted and delivered, the backlog grew from $u1 to $u3 in 2 s, at most $max read a second"
# the spool held a file per message queued (the collector counted them while the
# server fell behind) and none once all was delivered
q=$(jq '[.timeline[] | .server.spool // 0] | max' "$WORK/queue.json")
((q > 50)) || fail "over = queue: the spool directory held at most $q files while the backlog grew"
n=$(find "$WORK/spool" -type f | wc -l)
((n == 0)) || fail "over = queue: $n files left in the spool once all was delivered"
ok "over = queue: the spool directory held up to $q queued messages, none once delivered"
