#!/usr/bin/env bash
# Duplicates made and explained (issue 26), on the real Postfix + Dovecot: an LMTP
# relay between them (lmtp_stall.py) swallows Dovecot's reply to the end of data of
# the first K messages, after Dovecot stored them, and Postfix's lmtp_data_done_timeout
# (2 s here) strikes: Postfix defers each and delivers it again. The run must find
# exactly those K duplicated, no more, each with Postfix's queue id and the timeout
# line of Postfix's own log as its cause.
source "$(dirname "$0")/lib.sh"
testbed_up maildir 6
N=20 K=3
STALL_PID=""
stop_stall() { [[ -n $STALL_PID ]] && stop_pid "$STALL_PID"; STALL_PID=""; }
trap 'stop_stall; cleanup' EXIT

lmtp=$(postconf -c "$POSTFIX_CONF" -h virtual_transport)
lmtp=${lmtp#lmtp:unix:}
python3 "$TOP/tests/integration/lmtp_stall.py" "$WORK/lmtp-stall.sock" "$lmtp" $K "$WORK/stall.log" &
STALL_PID=$!
for _ in $(seq 1 100); do grep -q '^ready' "$WORK/stall.log" 2>/dev/null && break; sleep 0.1; done
check "the LMTP relay is up" grep -q '^ready' "$WORK/stall.log"
check "Postfix delivers through it, waits 2 s for the final reply, retries 6 s later" \
    postconf -c "$POSTFIX_CONF" -e "virtual_transport = lmtp:unix:$WORK/lmtp-stall.sock" \
    lmtp_data_done_timeout=2s queue_run_delay=1s minimal_backoff_time=6s maximal_backoff_time=6s
postfix -c "$POSTFIX_CONF" reload >/dev/null 2>&1

# The readers start at once: each first copy is read (its mailbox then owes
# nothing) seconds before Postfix's retry stores the second, a copy landing in a
# mailbox that owes nothing. The drain visits only owing mailboxes; the sweep's
# closing pass visits every mailbox that was sent mail, and finds it (docs/ledger.md).
"$MAILSOAK" run -c "$TB/mailsoak.conf" --senders 2 --readers 2 --messages $N --duration 60s --drain 40s \
    --set run.sweep_timeout=30s --set run.error_examples=10 --seed 27 \
    --interval 5s --no-check --json "$WORK/run.json" --ledger-csv "$WORK/ledger.csv" \
    >"$WORK/table.txt" 2>"$WORK/live.txt"
rc=$?
stop_stall
cat "$WORK/table.txt"
check "run exits 4: the duplicated gate fails on the copies made" eq "$rc" 4
check "the verdict names the gate" grep -qF "FAIL duplicated 3, must be = 0" "$WORK/table.txt"
s() { jget "$WORK/run.json" ".summary.$1"; }
check "sent = $N" eq "$(s sent)" $N
check "$K stalled by the relay" eq "$(grep -c '^stalled <' "$WORK/stall.log")" $K
check "duplicated = $K, exactly" eq "$(s duplicated)" $K
check "delivered = $((N - K))" eq "$(s delivered)" $((N - K))
check "lost = 0" eq "$(s lost)" 0
# Each stalled message was deferred by the timeout and delivered again (Postfix's log).
for q in $(sed -n 's/^stalled <\(.*\)>$/\1/p' "$WORK/stall.log"); do
    qid=$(sed -n "s/.*: \([0-9A-F]*\): message-id=<$q>.*/\1/p" "$POSTFIX_LOG" | head -1)
    check "$q ($qid): deferred by the timeout, then delivered once" eq \
        "$(grep -c ": $qid: .*status=deferred (conversation with .* timed out while sending end of data" \
            "$POSTFIX_LOG") $(grep -c ": $qid: .*status=sent" "$POSTFIX_LOG")" "1 1"
done
check "the duplicated are the stalled ones" eq \
    "$(jq -r '.summary.duplicated_examples[].message_id' "$WORK/run.json" | sort)" \
    "$(sed -n 's/^stalled //p' "$WORK/stall.log" | sort)"
n=0
while IFS=$'\t' read -r qid mid reads cause line; do
    check "$mid: queued as '$qid', as Postfix logged" eq "$(grep -c -F ": $qid: message-id=$mid" "$POSTFIX_LOG")" 1
    check "$qid: read twice" eq "$reads" 2
    check "$qid: cause '$cause'" eq "$cause" "duplicated after a timeout"
    check "$qid: its cause line is Postfix's timeout" grep -qxF -- "$line" "$POSTFIX_LOG"
    check "$qid: which names it and the lost final reply" \
        eq "$(grep -cF "$qid: to=" <<<"$line")$(grep -c 'timed out while sending end of data -- message may be sent more than once' <<<"$line")" 11
    check "$qid: its trail holds both of Dovecot's deliveries" eq \
        "$(jq -r --arg q "$qid" '.summary.duplicated_examples[] | select(.queue_id == $q) | .server_evidence.trail[]' \
            "$WORK/run.json" | grep -c 'saved mail to INBOX')" 2
    n=$((n + 1))
done < <(jq -r '.summary.duplicated_examples[] | [.queue_id, .message_id, .reads, .server_evidence.cause,
         .server_evidence.cause_line] | @tsv' "$WORK/run.json")
check "$K duplicated examples" eq "$n" $K
check "CSV: the $K duplicated, caused by the timeout" eq \
    "$(awk -F, '$6 == "duplicated" && $9 == "duplicated after a timeout"' "$WORK/ledger.csv" | wc -l)" $K
finish
