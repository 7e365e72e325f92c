#!/usr/bin/env bash
# t_capacity_queue.sh: a staircase search that sees the server's queue judges its
# levels on it, live and after the run. The reference server delivers at most 50
# msg/s and keeps what waits in a spool directory, a file per message
# ([fault.rate] spool_dir), which the run's collector counts every second
# (server.spool_dir, spool_format = files, server.queue_interval). Poisson
# arrivals, as a user's search has them. The search must say its levels weigh the
# server's queue, find the ceiling inside the interval it reports (within 5 %),
# judge no level 15 % or more from it wrongly, and end each level when its test
# decided (the run's live end weighs the queue too). Its timeline must show the
# queue counted at most intervals, not held between the store's walks
# (server.walk_interval = 1h here: a count held between walks reads a growing
# queue as flat). One staircase after the probe: a wide precision asks for no
# refinement (t_capacity_stair.sh has those). About 60 s.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"
[[ -x $MAILSOAK ]] || { echo "no $MAILSOAK: run make"; exit 77; }
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }

LIMIT=50
mkdir -p "$WORK/spool"
srv_start --set users.count=100 --set fault.rate.limit=$LIMIT --set fault.rate.burst=5 \
    --set fault.rate.spool_dir="$WORK/spool"
"$MAILSOAK" capacity --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" --set users.count=100 \
    --no-check --senders 20 --readers 8 --set capacity.drain=20s --settle 1s --set run.sweep_timeout=3s --seed 7 \
    --set capacity.method=staircase --set capacity.level=10s --set capacity.start=80 --set capacity.step=0.1 \
    --set capacity.precision=0.5 --set capacity.arrivals=exponential --set capacity.confirm=no \
    --set server.spool_dir="$WORK/spool" --set server.spool_format=files --set server.walk_interval=1h \
    --json "$WORK/q.json" >"$WORK/q.out" 2>"$WORK/q.err"
rc=$?
# no confirmation asked (t_capacity_stair.sh has one): a capacity found exits 0
[[ $rc == 0 ]] || { cat "$WORK/q.out" "$WORK/q.err"; fail "the search exited $rc"; }
grep -q "of the server's queue where counted" "$WORK/q.out" || fail "the table does not say what the levels weigh"
jq -e '[.levels[] | select(.kind != "probe" and (.verdict == "pass" or .verdict == "fail") and
        (.why | test("^(kept up|behind)")))] as $d | ($d | length) >= 2 and
       ([$d[] | .why | test("the server.s queue grew")] | all)' "$WORK/q.json" >/dev/null ||
    { cat "$WORK/q.out"; fail "levels not judged on the server's queue: $(jq -c '[.levels[].why]' "$WORK/q.json")"; }
ok "every level decided on its kept-up test weighed the server's queue"
jq -e --argjson l $LIMIT '.known_between as [$lo, $hi] | $lo <= 1.05 * $l and $hi >= 0.95 * $l and
    $lo <= .capacity_msg_s and .capacity_msg_s <= $hi' "$WORK/q.json" >/dev/null ||
    { cat "$WORK/q.out"; fail "the interval $(jq -c .known_between "$WORK/q.json") misses the ceiling $LIMIT"; }
jq -e --argjson l $LIMIT '[.levels[] | select(.kind != "probe")] |
    ([.[] | select(.rate >= 1.15 * $l and .verdict == "pass")] | length) == 0 and
    ([.[] | select(.rate <= 0.85 * $l and .verdict == "fail")] | length) == 0' "$WORK/q.json" >/dev/null ||
    { cat "$WORK/q.out"; fail "a level 15 % or more from the ceiling misjudged"; }
# the run ended each level when its test decided, on the same series: the live
# end and the judgement after the run agree
jq -e '[.levels[] | select((.kind == "staircase" or .kind == "refine") and (.verdict == "pass" or .verdict == "fail")) |
        .kept_up.decided_s > 0 and (.t1 - .t0 - .kept_up.decided_s | fabs) < 0.6] | all' "$WORK/q.json" >/dev/null ||
    fail "a level did not end when decided: $(jq -c '[.levels[] | [.kind, .verdict, .t1 - .t0, .kept_up.decided_s]]' "$WORK/q.json")"
ok "capacity $(jq .capacity_msg_s "$WORK/q.json") msg/s, known between $(jq -c .known_between "$WORK/q.json"): the ceiling $LIMIT inside"
# the probe's run: the queue counted at every interval while it grew (the store's
# walks were an hour apart), and the spool held real queue files
p=$(jq -r '[.runs[] | select(.kind == "probe")] | last | .result' "$WORK/q.json")
jq -e '[.timeline[] | select(.phase == "send") | .server.spool] as $s | ($s | length) >= 5 and
       ([$s | range(1; length) as $i | select($s[$i] != $s[$i - 1])] | length) * 2 >= ($s | length) and
       ($s | max) > 0' "$p" >/dev/null ||
    fail "the queue was not counted each interval: $(jq -c '[.timeline[] | select(.phase == "send") | .server.spool]' "$p")"
ok "the probe's queue counted at each of its intervals: $(jq -c '[.timeline[] | select(.phase == "send") | .server.spool]' "$p")"
srv_stop
# what was still queued at the stop left the spool with it
n=$(find "$WORK/spool" -type f | wc -l)
[[ $n == 0 ]] || fail "$n files left in the reference server's spool after its stop"
ok "the reference server's spool emptied at its stop"
