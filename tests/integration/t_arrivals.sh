#!/usr/bin/env bash
# t_arrivals.sh: open-loop arrivals (smtp.rate with smtp.arrivals = exponential)
# against the reference server. The schedule is the clock's and the seed's, never
# the server's: a server that answers every end of data in 1 s gets as many
# arrivals due as a fast one, and the arrivals the tester could not start on time
# are counted (every sender busy; the engine itself stopped) and mark the run
# tester-limited, in the JSON and the table, instead of passing as the server's
# figures. Three runs of 4 s, under 1000 messages each.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"
[[ -x $MAILSOAK ]] || { echo "no $MAILSOAK: run make"; exit 77; }
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }

# run_on NAME [args...]: a 4 s run at 150 arrivals/s on the server started last
# (exec'd, so that in the background $! is mailsoak itself).
run_on() {
    local name=$1
    shift
    exec "$MAILSOAK" run --no-check --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" --set users.count=20 \
        --readers 2 --drain 3s --duration 4s --rate 150 --arrivals exponential --seed 7 "$@" \
        --json "$WORK/$name.json" >"$WORK/$name.out" 2>&1
}
srv_start --set users.count=20
a() { jq -r ".summary.arrivals.$1" "$2"; }
# Poisson: 600 due in 4 s at 150/s, within 5 standard deviations (about 122)
in_poisson() { (($1 > 600 - 122 && $1 < 600 + 122)); }

# 1. A fast server and senders to spare: every arrival on time.
(run_on fast --senders 20) ||
    { cat "$WORK/fast.out"; fail "the fast run failed"; }
due=$(a due "$WORK/fast.json")
[[ $(a process "$WORK/fast.json") == exponential ]] || fail "process: $(a process "$WORK/fast.json")"
in_poisson "$due" || fail "fast: $due arrivals due in 4 s at 150/s"
[[ $(a started "$WORK/fast.json") == "$due" && $(a late_busy "$WORK/fast.json") == 0 &&
    $(a late_engine "$WORK/fast.json") == 0 && $(a tester_limited "$WORK/fast.json") == false ]] ||
    fail "fast: $(jq -c .summary.arrivals "$WORK/fast.json")"
! grep -q tester-limited "$WORK/fast.out" || fail "fast: the table says tester-limited"
[[ $(jq -r .summary.sent "$WORK/fast.json") == "$due" ]] || fail "fast: sent $(jq -r .summary.sent "$WORK/fast.json") of $due"
ok "fast server: $due arrivals due at 150/s (Poisson), all started on time and accepted"

# 2. Every end of data takes 1 s and only 2 senders: at most 2 messages a second go
# out, yet the arrivals due are the same Poisson count (the offered rate did not
# fall), and those held back are counted as the tester's.
srv_stop
srv_start --set users.count=20 --set fault.smtp.eod.kind=delay --set fault.smtp.eod.every=1 \
    --set fault.smtp.eod.delay=1s
(run_on slow --senders 2) ||
    { cat "$WORK/slow.out"; fail "the slow run failed"; }
due=$(a due "$WORK/slow.json") started=$(a started "$WORK/slow.json") busy=$(a late_busy "$WORK/slow.json")
never=$(a never_started "$WORK/slow.json")
in_poisson "$due" || fail "slow: $due arrivals due; the offered rate fell with the server"
# never started: those due before the last second (late_after) of the send phase
((started < 20 && busy > 0 && never > 400 && started + never < due)) ||
    fail "slow: $(jq -c .summary.arrivals "$WORK/slow.json")"
[[ $(a tester_limited "$WORK/slow.json") == true ]] || fail "slow: not marked tester-limited"
grep -q "^tester-limited: of $due arrivals due at 150.0 msg/s, the tester held back $((busy + never)): $busy started over 1.0s late with all 2 senders busy" "$WORK/slow.out" ||
    { cat "$WORK/slow.out"; fail "slow: the table does not say the tester limited the run"; }
ok "slow server, 2 senders: $due due as before, $started started, $busy late with every sender busy, $never never started: tester-limited"

# 3. The engine itself late: the run is stopped (SIGSTOP) for 2 s while its senders
# wait for their next arrivals; they wake late, and say so.
srv_stop
srv_start --set users.count=20
(run_on stopped --senders 20 --workers 1) &
pid=$!
sleep 1.5
kill -STOP "$pid"
sleep 2
kill -CONT "$pid"
wait "$pid" || { cat "$WORK/stopped.out"; fail "the stopped run failed"; }
eng=$(a late_engine "$WORK/stopped.json")
((eng > 0)) || fail "stopped: no arrival counted late on the engine: $(jq -c .summary.arrivals "$WORK/stopped.json")"
[[ $(a tester_limited "$WORK/stopped.json") == true ]] || fail "stopped: not marked tester-limited"
ok "engine stopped for 2 s: $eng arrivals late on the engine, tester-limited"
srv_stop

# 4. pop3.visit = owed: the readers log in only where mail is owed, so over 1200
# mailboxes they make far fewer logins than the classic random ones, and still read
# everything, sooner.
srv_start --set users.count=1200
(run_on random --senders 20 --set users.count=1200) || fail "the random readers' run failed"
(run_on owed --senders 20 --set users.count=1200 --set pop3.visit=owed) || fail "the owed readers' run failed"
lr=$(jq '.summary.latency["pop3.pass"].count' "$WORK/random.json") lo=$(jq '.summary.latency["pop3.pass"].count' "$WORK/owed.json")
dr=$(jq '.summary.latency.delivery.p90' "$WORK/random.json") do=$(jq '.summary.latency.delivery.p90' "$WORK/owed.json")
((lo * 3 < lr)) || fail "pop3.visit = owed: $lo logins, random: $lr"
[[ $(jq -r .summary.delivered "$WORK/owed.json") == $(jq -r .summary.sent "$WORK/owed.json") ]] || fail "pop3.visit = owed: not all delivered"
jq -e --argjson a "$do" --argjson b "$dr" '$a < $b' <<<null >/dev/null || fail "pop3.visit = owed: delivery p90 $do ms, random $dr ms"
ok "pop3.visit = owed: $lo logins where random readers made $lr, all read, delivery p90 $do ms (random: $dr ms)"
srv_stop
