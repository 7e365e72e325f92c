#!/usr/bin/env bash
# t_capacity_stair.sh: `mailsoak capacity` with capacity.method = staircase finds
# the reference server's known ceiling. The server delivers at most 50 msg/s
# ([fault.rate] limit = 50, burst = 5, over = queue: a bucket refilled by the level
# below absorbs a level's excess for burst / excess seconds, so a burst of 20 hid a
# level 6 % over the ceiling, 3 msg/s, for most of its 8 s decision). A probe at 80 msg/s falls
# behind and delivers about 50; one staircase run then offers levels 10 % apart
# from 20 % below that to 20 % above it, each 10 s, with no drain between them, and
# each level is judged by the sequential test of the backlog. The interval the
# search reports must hold the ceiling (within 5 %), no level 15 % or more above it
# may pass nor one 15 % or more below it fail, and each decided level must say when
# it was decided. A level ends once decided (smtp.profile_end = decided): the next
# begins at once, and one decided behind ends its run; an open one runs its 10 s.
# The confirmation's levels (80, 100 and 120 % of the capacity, 20 s each) end when
# decided too, and one open at its end is judged by the backlog's growth over it.
# Constant arrivals (as t_capacity.sh, for the same reason: a
# 10 s level at 50 msg/s cannot tell a drift of a few msg/s from Poisson noise);
# about 90 s in all.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"
[[ -x $MAILSOAK ]] || { echo "no $MAILSOAK: run make"; exit 77; }
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }

LIMIT=50
srv_start --set users.count=100 --set fault.rate.limit=$LIMIT --set fault.rate.burst=5
"$MAILSOAK" capacity --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" --set users.count=100 \
    --no-check --senders 20 --readers 8 --set capacity.drain=20s --settle 1s --set run.sweep_timeout=3s --seed 5 \
    --set capacity.method=staircase --set capacity.level=10s --set capacity.start=80 --set capacity.step=0.1 \
    --set capacity.precision=0.25 --set capacity.arrivals=constant \
    --set capacity.report="$WORK/st.html" --json "$WORK/st.json" >"$WORK/st.out" 2>"$WORK/st.err"
rc=$?
# 0 confirmed; 6 NOT confirmed (a claim at the ceiling may be refuted by chance)
[[ $rc == 0 || $rc == 6 ]] || { cat "$WORK/st.out" "$WORK/st.err"; fail "the staircase search exited $rc"; }
jq -e --argjson rc "$rc" '.confirmed == ($rc == 0)' "$WORK/st.json" >/dev/null ||
    fail "exit $rc, but confirmed: $(jq .confirmed "$WORK/st.json")"
jq -e '.format == "mailsoak-capacity" and .method.name == "staircase"' "$WORK/st.json" >/dev/null || fail "not a staircase's file"
jq -e --argjson l $LIMIT '.known_between as [$lo, $hi] | $lo <= 1.05 * $l and $hi >= 0.95 * $l and $lo <= .capacity_msg_s and .capacity_msg_s <= $hi' \
    "$WORK/st.json" >/dev/null || { cat "$WORK/st.out"; fail "the interval $(jq -c .known_between "$WORK/st.json") misses the ceiling $LIMIT"; }
ok "capacity $(jq .capacity_msg_s "$WORK/st.json") msg/s, known between $(jq -c .known_between "$WORK/st.json"): the ceiling $LIMIT inside"
# the probe fell behind and seeded the staircase with what it delivered
jq -e --argjson l $LIMIT '.probe_delivered_msg_s > 0.8 * $l and .probe_delivered_msg_s < 1.2 * $l and
    ([.levels[] | select(.kind == "probe")] | last | .verdict == "fail")' "$WORK/st.json" >/dev/null ||
    fail "the probe: $(jq -c '[.probe_delivered_msg_s, [.levels[] | select(.kind == "probe") | .verdict]]' "$WORK/st.json")"
# no level 15 % or more from the ceiling judged wrongly (a 10 s level may stay
# open: the test had not seen enough), and some judged on each side of it
jq -e --argjson l $LIMIT '[.levels[] | select(.kind != "probe")] |
    ([.[] | select(.rate >= 1.15 * $l and .verdict == "pass")] | length) == 0 and
    ([.[] | select(.rate <= 0.85 * $l and .verdict == "fail")] | length) == 0 and
    ([.[] | select(.rate < $l and .verdict == "pass")] | length) >= 1 and
    ([.[] | select(.rate > $l and .verdict == "fail")] | length) >= 1' "$WORK/st.json" >/dev/null ||
    { cat "$WORK/st.out"; fail "levels far from the ceiling misjudged, or none judged on one side of it"; }
# (within its level: 10 s, a retry's 20)
jq -e '[.levels[] | select(.verdict == "pass" or .verdict == "fail") | .kept_up.decided_s > 0 and
    .kept_up.decided_s <= .t1 - .t0 + 0.5] | all' \
    "$WORK/st.json" >/dev/null || fail "a decided level without its time: $(jq -c '[.levels[].kept_up.decided_s]' "$WORK/st.json")"
# a climb: a pass and a level above it at least (the probe may deliver up to 1.2 x
# the ceiling, and its staircase then starts at 0.8 x that: two levels reach it)
n=$(jq '[.levels[] | select(.kind == "staircase")] | length' "$WORK/st.json")
((n >= 2)) || fail "only $n staircase levels"
# one run held every level of a staircase, at the rates asked for
f=$(jq -r '[.runs[] | select(.kind == "staircase")][0].result' "$WORK/st.json")
# a lead-in of 2 s at the first level's rate, not judged (the run's pipeline
# filling), then a stage per level
jq -e '.config.pop3.visit == "owed"' "$f" >/dev/null && jq -e '.method.readers_visit == "owed"' "$WORK/st.json" >/dev/null ||
    fail "the search's readers do not go where mail is owed: $(jq -c .config.pop3.visit "$f")"
jq -e '.config.smtp.profile | test("^2s@[0-9.]+, *10s@")' "$f" >/dev/null ||
    fail "the staircase's run has no profile: $(jq -c .config.smtp.profile "$f")"
jq -e '[.runs[] | select(.kind == "staircase")][0].lead_s == 2 and
    ([.levels[] | select(.kind == "staircase")][0] | .t0 == 2 and .t1 <= 12)' "$WORK/st.json" >/dev/null ||
    fail "the staircase's first level is not cut after its lead-in: $(jq -c '[.runs, .levels[1]]' "$WORK/st.json")"
# a decided level ended when its test decided (the interval that decided it its
# last), an open one ran its 10 s; the first staircase ended with its first failure
# (its levels above never ran) and some level ended early
jq -e '[.levels[] | select(.kind == "staircase" or .kind == "refine") |
        if .verdict == "pass" or .verdict == "fail" then (.t1 - .t0 - .kept_up.decided_s | fabs) < 0.6
        elif .verdict == "open" then (.t1 - .t0 - 10 | fabs) < 1e-6 else true end] | all' "$WORK/st.json" >/dev/null ||
    fail "a level did not end when decided: $(jq -c '[.levels[] | [.verdict, .t1 - .t0, .kept_up.decided_s]]' "$WORK/st.json")"
jq -e '[.levels[] | select(.kind == "staircase")] as $l | [$l[] | select(.run == $l[0].run) | .verdict] as $v
    | ([$v | index("fail")] | .[0] // ($v | length - 1)) == ($v | length - 1) and
      ([$l[] | select(.verdict == "pass" or .verdict == "fail") | select(.t1 - .t0 < 9)] | length) >= 1' "$WORK/st.json" >/dev/null ||
    fail "no level ended early, or one ran after a failure: $(jq -c '[.levels[] | [.run, .verdict, .t1 - .t0]]' "$WORK/st.json")"
# its timeline names each interval's stage, and each stage offered its level's rate
jq -e --slurpfile s "$WORK/st.json" '[$s[0].runs[] | select(.kind == "staircase")][0].n as $n
    | [$s[0].levels[] | select(.kind == "staircase" and .run == $n)] as $r
    | [.timeline[] | select(.phase == "send") | .stage] as $st
    | ($st | first) == 0 and ($st | last) == ($r | length) and
      ([range($r | length) as $k | [.timeline[] | select(.phase == "send" and .stage == $k + 1 and .t > $r[$k].t0 + 1.5)]
        | (map(.arrivals) | add) / (map(.t) | max - min + 1) / $r[$k].rate | . > 0.8 and . < 1.2] | all)' "$f" >/dev/null ||
    fail "the staircase's timeline: $(jq -c '[.timeline[] | select(.phase == "send") | [.stage, .arrivals]]' "$f")"
# each level's lost, duplicated and corrupted are of its own mail: the run's ledger
# counted per stage as it ran (a stage after the failure never ran: no span, no
# mail), every message accepted in one of them
jq -e --slurpfile s "$WORK/st.json" '[$s[0].runs[] | select(.kind == "staircase")][0].n as $n
    | [$s[0].levels[] | select(.kind == "staircase" and .run == $n)] as $l
    | .verdict.stages as $st | ([$st[].accepted] | add) == .verdict.accepted and
      ([range($l | length) as $k | $st[$k + 1].t0 == $l[$k].t0 and $st[$k + 1].t1 == $l[$k].t1] | all) and
      ([$st[($l | length) + 1:][] | .t1 == .t0 and .accepted == 0] | all)' "$f" >/dev/null ||
    fail "the staircase's run has no ledger per stage: $(jq -c "[.verdict.stages, .verdict.accepted]" "$f")"
jq -e '[.levels[] | select(.kind == "staircase") | .ledger.of == "level" and .ledger.lost == 0] | all' "$WORK/st.json" \
    >/dev/null || fail "a level not judged on its own mail: $(jq -c '[.levels[].ledger]' "$WORK/st.json")"
# the confirmation ran as a staircase's run does: a level its sequential test decided
# ended there, one open at its 20 s was judged by the fixed-sample test of its whole
# length (never left open), and the 80 % level was decided early
c=$(jq -r '[.runs[] | select(.kind == "confirm")][0].result' "$WORK/st.json")
jq -e '.config.smtp.profile_end == "decided"' "$c" >/dev/null ||
    fail "the confirmation's levels do not end when decided: $(jq -c .config.smtp.profile_end "$c")"
jq -e '[.levels[] | select(.kind == "confirm")] as $c | ($c | length) >= 1 and
    ([$c[] | select(.why | test("^(kept up|behind)")) |
        if .kept_up.test == "sprt" then (.t1 - .t0 - .kept_up.decided_s | fabs) < 0.6
        else .kept_up.test == "growth_z" and (.t1 - .t0 - 20 | fabs) < 1e-6 and
            (.t1 - .t0 - .kept_up.decided_s | fabs) < 0.6 end] | all) and
    ([$c[] | .verdict != "open"] | all) and
    ($c[0] | .kept_up.test == "sprt" and .verdict == "pass" and .t1 - .t0 < 19)' "$WORK/st.json" >/dev/null ||
    fail "the confirmation's levels: $(jq -c '[.levels[] | select(.kind == "confirm") | [.verdict, .t1 - .t0, .kept_up.test, .kept_up.decided_s]]' "$WORK/st.json")"
# the search says where it is on stderr: the run, how many are about left, the time
grep -q "run 2 of about 3 (staircase): .* s spent, about [0-9]* s left" "$WORK/st.err" ||
    fail "no progress on stderr: $(grep 'run [0-9]' "$WORK/st.err")"
grep -q "^capacity .* the highest level that passed" "$WORK/st.out" && grep -q "^known        between" "$WORK/st.out" ||
    fail "the table does not say the capacity and its interval"
grep -q "<svg" "$WORK/st.html" && grep -q "Offered against delivered rate, each level by its outcome" "$WORK/st.html" &&
    grep -q "known between" "$WORK/st.html" || fail "the HTML page has no knee or no interval"
ok "the probe fell behind at $(jq .probe_delivered_msg_s "$WORK/st.json") msg/s; $n levels in one run, each judged while it ran"
srv_stop
