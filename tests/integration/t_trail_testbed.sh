#!/usr/bin/env bash
# Every loss explained by the server's own evidence (issue 26), on the real Postfix +
# Dovecot: while Postfix holds its LMTP deliveries (defer_transports), the test
# removes two queued messages (postsuper -d), expires one (postsuper -e) and has
# Postfix bounce one (a header_checks FILTER to the error transport, chosen by its
# X-Mailsoak-Id), then lets the rest through. The run must find exactly those four
# lost, each with the queue id Postfix gave it and a trail whose cause is the one
# the test made, its cause line a line of Postfix's own log; the same in the CSV.
# One worker, so the ids are 0..15 and the victims known before the run.
source "$(dirname "$0")/lib.sh"
testbed_up maildir 8
N=16
postfix_set() { postconf -c "$POSTFIX_CONF" -e "$@" && postfix -c "$POSTFIX_CONF" reload >/dev/null 2>&1; }
# The message whose id ends in -3 goes to the error transport: accepted, then bounced.
printf '/^X-Mailsoak-Id: [0-9a-f]{8}-3$/ FILTER error:5.1.1 bounced by the test\n' >"$WORK/header_checks"
check "Postfix holds LMTP deliveries, bounces -3" postfix_set "header_checks = regexp:$WORK/header_checks" \
    defer_transports=lmtp queue_run_delay=1s minimal_backoff_time=1s maximal_backoff_time=2s
mark=$(stat -c %s "$POSTFIX_LOG")
since() { tail -c +"$((mark + 1))" "$POSTFIX_LOG"; }

# Bounce notices go to a mailbox of the testbed (user0007 reads them as foreign mail).
"$MAILSOAK" run -c "$TB/mailsoak.conf" --workers 1 --senders 2 --readers 2 --messages $N --duration 60s \
    --drain 20s --set run.sweep_timeout=40s --set pop3.start_after=15s --set run.error_examples=10 \
    --set smtp.mail_from=user0007@test.local --seed 26 --interval 5s --no-check \
    --json "$WORK/run.json" --ledger-csv "$WORK/ledger.csv" >"$WORK/table.txt" 2>"$WORK/live.txt" &
pid=$!

# All N accepted, and the 15 that go to LMTP deferred by Postfix.
qid_of() { since | sed -n "s/.*: \([0-9A-F]*\): message-id=<$run\.$1@mailsoak\.invalid>.*/\1/p" | head -1; }
run=""
for _ in $(seq 1 300); do
    run=$(since | sed -n 's/.*message-id=<\([0-9a-f]\{8\}\)\.[0-9a-f]*@mailsoak\.invalid>.*/\1/p' | head -1)
    [[ -n $run ]] && [[ $(since | grep -c "message-id=<$run\.") -ge $N ]] &&
        [[ $(since | grep 'status=deferred (deferred transport)' | awk '{print $6}' | sort -u | wc -l) -ge $((N - 1)) ]] &&
        break
    sleep 0.1
done
check "all $N accepted and held ($run)" eq "$(since | grep -c "message-id=<$run\.")" $N
removed1=$(qid_of 5) removed2=$(qid_of 9) expired=$(qid_of 7) bounced=$(qid_of 3)
check "queue ids of the victims known" eq "$(echo "$removed1 $removed2 $expired $bounced" | wc -w)" 4
postsuper -c "$POSTFIX_CONF" -d "$removed1" >/dev/null 2>&1
postsuper -c "$POSTFIX_CONF" -d "$removed2" >/dev/null 2>&1
postsuper -c "$POSTFIX_CONF" -e "$expired" >/dev/null 2>&1
postconf -c "$POSTFIX_CONF" -X defer_transports && postfix -c "$POSTFIX_CONF" reload >/dev/null 2>&1
postqueue -c "$POSTFIX_CONF" -f

wait $pid
rc=$?
cat "$WORK/table.txt"
check "run exits 4: the lost gate fails on the messages removed" eq "$rc" 4
s() { jget "$WORK/run.json" ".summary.$1"; }
check "sent = $N" eq "$(s sent)" $N
check "lost = 4" eq "$(s lost)" 4
check "delivered = $((N - 4))" eq "$(s delivered)" $((N - 4))

# Each lost one: its queue id, and the cause the test made, shown by a line of
# Postfix's log (the trail keeps lines as they are: ASCII, shorter than 400 bytes).
want_cause() {
    case $1 in
    "$removed1" | "$removed2") echo "removed from the queue" ;;
    "$expired") echo expired ;;
    "$bounced") echo bounced ;;
    *) echo "not a victim" ;;
    esac
}
n=0
while IFS=$'\t' read -r qid mid cause line nlines; do
    check "lost $mid: queue id '$qid' is Postfix's" eq "$(grep -c -F ": $qid: message-id=$mid" "$POSTFIX_LOG")" 1
    check "lost $qid: cause '$cause'" eq "$cause" "$(want_cause "$qid")"
    check "lost $qid: its cause line is in Postfix's log" grep -qxF -- "$line" "$POSTFIX_LOG"
    check "lost $qid: the cause line names it" eq "$(grep -c -F "$qid" <<<"$line")" 1
    check "lost $qid: a trail of several lines ($nlines)" gt "$nlines" 2
    n=$((n + 1))
done < <(jq -r '.summary.lost_examples[] | [.queue_id, .message_id, .server_evidence.cause,
         .server_evidence.cause_line, .server_evidence.lines] | @tsv' "$WORK/run.json")
check "4 lost examples" eq "$n" 4
# Its trail holds every line of Postfix's log that names its queue id.
q=$removed1
check "the trail of $q holds its $(grep -c ": $q: " "$POSTFIX_LOG") Postfix lines" eq \
    "$(jq -r --arg q "$q" '.summary.lost_examples[] | select(.queue_id == $q) | .server_evidence.trail[]' \
        "$WORK/run.json" | grep -c ": $q: ")" "$(grep -c ": $q: " "$POSTFIX_LOG")"
check "the table shows each cause" eq "$(grep -c '^    cause: ' "$WORK/table.txt")" 4
# The CSV: the same four, with queue id and cause (columns 8 and 9).
check "CSV: the four lost with their causes" eq \
    "$(awk -F, '$6 == "lost" {print $8 "," $9}' "$WORK/ledger.csv" | sort)" \
    "$(printf '%s\n' "$removed1,removed from the queue" "$removed2,removed from the queue" "$expired,expired" \
        "$bounced,bounced" | sort)"
# The HTML report shows each message with its cause and its trail.
check "report written" "$MAILSOAK" report -o "$WORK/report.html" "$WORK/run.json"
check "the report shows the four with their evidence" eq "$(grep -c '<td class="l">lost</td><td class="l"><code>' "$WORK/report.html")" 4
check "the report holds the postsuper line" grep -qF "postsuper[" "$WORK/report.html"
finish
