#!/usr/bin/env bash
# t_recovery.sh: peak and recovery (smtp.profile, gate.recovery) against the
# reference server's known delivery ceiling ([fault.rate] limit = 30, over =
# queue). 8 s at 15 msg/s, a spike of 5 s at 60, then 16 s at 15: the backlog the
# spike leaves drains at the ceiling less the base rate, so it is back to its level
# in about peak / (30 - 15) s; the run reports that time (within generous bounds
# of that figure, computed from the run's own peak), proves every message accepted
# during the spike (delivered exactly once, as many as the spike offered), and a
# gate.recovery shorter than it fails with exit 5. One run of 29 s.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"
[[ -x $MAILSOAK ]] || { echo "no $MAILSOAK: run make"; exit 77; }
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }

LIMIT=30 BURST=10 BASE=15 SPIKE=60 SPIKE_S=5
srv_start --set users.count=20 --set fault.rate.limit=$LIMIT --set fault.rate.burst=$BURST
"$MAILSOAK" run --no-check --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" --set users.count=20 \
    --senders 10 --readers 4 --set "smtp.profile=8s@$BASE, ${SPIKE_S}s@$SPIKE, 16s@$BASE" --drain 30s \
    --interval 1s --seed 5 --gate-recovery 2s --json "$WORK/r.json" >"$WORK/r.out" 2>&1
rc=$?
srv_stop
((rc == 5)) || { cat "$WORK/r.out"; fail "a recovery over gate.recovery = 2s exited $rc, not 5"; }
[[ $(jq -c '.verdict.gates.failed' "$WORK/r.json") == '["recovery after stage 2"]' ]] ||
    fail "failed gates $(jq -c '.verdict.gates.failed' "$WORK/r.json"), not the recovery's alone"
r() { jq -r ".verdict.recovery[0].$1" "$WORK/r.json"; }
[[ $(jq '.verdict.recovery | length' "$WORK/r.json") == 1 && $(r stage) == 2 && $(r recovered) == true ]] ||
    { jq .verdict.recovery "$WORK/r.json"; fail "no recovered spike at stage 2"; }
grep -qE "^  recovery   stage 2 \(60 msg/s after 15, 8-13 s\): back in [0-9]+ s" "$WORK/r.out" ||
    { cat "$WORK/r.out"; fail "the table has no recovery line"; }
peak=$(r peak_backlog) took=$(r backlog_s) all=$(r recovery_s)
# the backlog drains at the ceiling less the base rate: half to twice that time,
# and two intervals of slack either way. A controller that ran late on a loaded
# machine took no interval end for a while (late): the backlog came back between
# the last one not back (from_s) and the first one back, which must meet the bounds.
jq -e --argjson c $LIMIT --argjson b $BASE '.verdict.recovery[0] | (.peak_backlog / ($c - $b)) as $e
    | (if .late then [.from_s, .backlog_s] | min else .backlog_s end) as $lo
    | .backlog_s >= $e / 2 - 2 and $lo <= 2 * $e + 2 and .recovery_s >= .backlog_s' "$WORK/r.json" >/dev/null ||
    fail "the backlog of $peak came back in $took s (late $(r late), not back at $(r from_s) s), not about $peak / ($LIMIT - $BASE) s"
ok "a spike to $SPIKE msg/s over a ceiling of $LIMIT: backlog $peak back in $took s, latency too in $all s (late $(r late)); exit 5 over 2 s"
# every message accepted during the spike proven: as many as it offered, each delivered once
jq -e --argjson n $((SPIKE * SPIKE_S)) '.verdict.recovery[0].sent_during | .accepted >= $n * 0.9
    and .accepted <= $n * 1.1 and .delivered == .accepted and .lost == 0 and .duplicated == 0 and .pending == 0' \
    "$WORK/r.json" >/dev/null || fail "the spike's mail: $(jq -c '.verdict.recovery[0].sent_during' "$WORK/r.json")"
ok "the spike's mail proven: $(jq -c '.verdict.recovery[0].sent_during' "$WORK/r.json")"
