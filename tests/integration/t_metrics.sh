#!/usr/bin/env bash
# mailsoak run --metrics against the reference server (with a RCPT fault, so an
# error class shows): every scrape taken during the run passes `promtool check
# metrics`, and its counters are exactly the run's figures as of one interval:
# sent, read, the error class and the delivery histogram's count all equal the
# sums of the JSON timeline up to the same entry. Without the token, 401. The
# scrape config and queries of docs/output.md pass `promtool check config` and `check rules`.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"
[[ -x $MAILSOAK ]] || { echo "no $MAILSOAK: run make"; exit 77; }
command -v promtool >/dev/null || { echo "skip: needs promtool (Debian package prometheus)"; exit 77; }
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }

srv_start --set users.count=20 --set server.seed=7 --set fault.smtp.rcpt.kind=4xx --set fault.smtp.rcpt.every=9
"$MAILSOAK" run --no-check --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" \
    --set users.count=20 --senders 3 --readers 2 --rate 150 --duration 4s --drain 3s --interval 500ms \
    --metrics 127.0.0.1:0 --set run.metrics_token=t0k3n --seed 3 --json "$WORK/run.json" \
    >"$WORK/table.txt" 2>"$WORK/live.txt" &
RUN_PID=$!
url=
for _ in $(seq 100); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/metrics' "$WORK/live.txt" 2>/dev/null) && break
    sleep 0.05
done
[[ -n $url ]] || { kill "$RUN_PID"; wait "$RUN_PID"; cat "$WORK/live.txt"; fail "no metrics address on stderr"; }

code=$(curl -s -o /dev/null -w '%{http_code}' "$url")
[[ $code == 401 ]] || fail "a scrape without the token got $code, want 401"
ok "without the token: 401"
n=0
while kill -0 "$RUN_PID" 2>/dev/null && ((n < 60)); do
    curl -sf -H 'Authorization: Bearer t0k3n' -o "$WORK/scrape.$n" "$url" && n=$((n + 1))
    sleep 0.2
done
wait "$RUN_PID" || fail "mailsoak run exited $?"
((n >= 5)) || fail "only $n scrapes during the run"
ok "$n scrapes during the run"

# value FILE SERIES [DEFAULT]: the sample's value; a series that is absent gives
# DEFAULT, and without one it says so on stderr and returns 1, on which every caller
# fails: a missing series is never read as 0.
value() {
    awk -v s="$2" -v d="${3-}" '$1 == s { print $2; f = 1; exit } END { if (!f && d != "") print d; exit !f && d == "" }' "$1" \
        || { echo "$1: no series $2" >&2; return 1; }
}

# The cumulative figures after each timeline entry (and zeros, before the first).
jq -c '[{s: 0, r: 0, e: 0, d: 0}] + [foreach .timeline[] as $x ({s: 0, r: 0, e: 0, d: 0};
        .s += $x.sent | .r += $x.read | .e += ($x.errors_by_class.smtp_rcpt_450 // 0)
        | .d += ($x.latency.delivery.count // 0))]' "$WORK/run.json" >"$WORK/prefix.json"
seen_send=0 last_sent=0
for ((i = 0; i < n; i++)); do
    f=$WORK/scrape.$i
    promtool check metrics <"$f" >"$WORK/promtool.txt" 2>&1 || { cat "$WORK/promtool.txt"; fail "promtool rejects scrape $i"; }
    s=$(value "$f" mailsoak_sent_total) && r=$(value "$f" mailsoak_read_total) || fail "scrape $i: a series is missing"
    # an error class's series starts with its first error: absent is 0 here
    e=$(value "$f" 'mailsoak_errors_total{class="smtp_rcpt_450"}' 0)
    d=$(value "$f" mailsoak_delivery_duration_seconds_count) || fail "scrape $i: a series is missing"
    jq -e --argjson s "$s" --argjson r "$r" --argjson e "$e" --argjson d "$d" \
        'any(.[]; .s == $s and .r == $r and .e == $e and .d == $d)' "$WORK/prefix.json" >/dev/null \
        || fail "scrape $i (sent $s read $r smtp_rcpt_450 $e delivered $d) is no interval of the timeline $(cat "$WORK/prefix.json")"
    ((s >= last_sent)) || fail "sent_total went down: $last_sent then $s"
    last_sent=$s
    phase=$(value "$f" 'mailsoak_run_phase{phase="send"}') || fail "scrape $i: a series is missing"
    [[ $phase == 1 ]] && seen_send=1
done
ok "every scrape passes promtool and equals the timeline's sums at one interval"
((seen_send)) || fail "no scrape saw the send phase"
((last_sent > 0)) || fail "no scrape saw a message sent"
sent=$(jq .summary.sent "$WORK/run.json")
((last_sent <= sent)) || fail "scraped sent $last_sent above the run's $sent"
((e > 0)) || fail "the RCPT fault's class never showed: $(grep errors_total "$WORK/scrape.$((n - 1))")"
f=$WORK/scrape.$((n - 1))
inf=$(value "$f" 'mailsoak_command_duration_seconds_bucket{command="smtp.eod",le="+Inf"}') &&
    cnt=$(value "$f" 'mailsoak_command_duration_seconds_count{command="smtp.eod"}') || fail "the last scrape: a series is missing"
[[ $inf == "$cnt" && $cnt -gt 0 ]] || fail "smtp.eod histogram: +Inf bucket $inf, count $cnt"
ok "last scrape: sent $last_sent of $sent, smtp_rcpt_450 $e, smtp.eod count $cnt"
srv_stop

# The documented scrape configuration and dashboard queries are valid for Prometheus.
. "$(dirname "$0")/prom_lib.sh"
out=$(docs_prometheus docs/output.md "## Live metrics for Prometheus and Grafana" "$WORK") ||
    fail "docs/output.md, live metrics: $out"
ok "promtool accepts the scrape config of docs/output.md and its $out"
