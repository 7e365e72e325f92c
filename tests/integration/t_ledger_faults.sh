#!/usr/bin/env bash
# The ledger against real damage: while the readers wait, remove K message files
# from maildirs, change one body byte in J others and copy one; the run must report
# exactly K lost, J corrupted and 1 duplicated, and the rest delivered; each lost one
# carries the queue id Postfix gave it, the one Postfix logged for its Message-ID, and
# the cause its trail in the logs shows.
source "$(dirname "$0")/lib.sh"
testbed_up maildir 20
N=60 K=3 J=2

"$MAILSOAK" run -c "$TB/mailsoak.conf" --senders 4 --readers 4 --messages $N --duration 60s \
    --drain 5s --set run.sweep_timeout=20s --set pop3.start_after=12s --seed 11 --interval 5s \
    --json "$WORK/run.json" --ledger-csv "$WORK/ledger.csv" >"$WORK/table.txt" 2>"$WORK/live.txt" &
pid=$!

# Wait until all N are in the mailboxes (Postfix delivers within seconds), then damage them.
for _ in $(seq 1 100); do
    n=$(find "$MAIL_DIR" -path '*/new/*' -type f | wc -l)
    [[ $n -ge $N ]] && break
    sleep 0.1
done
mapfile -t files < <(find "$MAIL_DIR" -path '*/new/*' -type f | sort)
check "all $N delivered before the readers start" eq "${#files[@]}" "$N"
for i in $(seq 0 $((K - 1))); do rm -f "${files[$i]}"; done
for i in $(seq $K $((K + J - 1))); do
    f=${files[$i]}
    # the last body byte before the final newline: same size, different content
    size=$(stat -c %s "$f")
    byte=$(tail -c 2 "$f" | head -c 1)
    repl=x; [[ $byte == x ]] && repl=y
    printf '%s' "$repl" | dd of="$f" bs=1 seek=$((size - 2)) conv=notrunc status=none
done
dup=${files[$((K + J))]}
cp -p "$dup" "$(dirname "$dup")/$(date +%s).dup$$.copy"

wait $pid
rc=$?
cat "$WORK/table.txt"
check "run exits 4: the integrity gates fail" eq "$rc" 4
for line in "FAILED: $K lost, 1 duplicated, $J corrupted of $N accepted" "FAIL lost $K, must be = 0" \
    "FAIL duplicated 1, must be = 0" "FAIL corrupted $J, must be = 0"; do
    check "the verdict says '$line'" grep -qF -- "$line" "$WORK/table.txt"
done
s() { jget "$WORK/run.json" ".summary.$1"; }
check "sent = $N" eq "$(s sent)" $N
check "lost = $K" eq "$(s lost)" $K
check "corrupted = $J" eq "$(s corrupted)" $J
check "duplicated = 1" eq "$(s duplicated)" 1
check "delivered = N-K-J-1" eq "$(s delivered)" $((N - K - J - 1))
check "pending = 0" eq "$(s pending)" 0
# Postfix logs "QID: message-id=<MID>" when cleanup takes a message: the id in our
# ledger must be that one, for every lost message, in the JSON and in the CSV.
logged() { grep -c -F ": $1: message-id=$2" "$POSTFIX_LOG"; }
n=0
while IFS=$'\t' read -r qid mid; do
    check "lost $mid: queue id '$qid' is the one Postfix logged for it" eq "$(logged "$qid" "$mid")" 1
    n=$((n + 1))
done < <(jq -r '.summary.lost_examples[] | [.queue_id, .message_id] | @tsv' "$WORK/run.json")
check "$K lost examples" eq "$n" $K
n=0
while IFS=, read -r _ mid _ _ _ outcome _ qid _; do
    [[ $outcome == lost ]] || continue
    check "CSV: lost $mid queued as '$qid', as Postfix logged" eq "$(logged "$qid" "$mid")" 1
    n=$((n + 1))
done <"$WORK/ledger.csv"
check "$K lost rows in the CSV" eq "$n" $K
# The server's log says why: it delivered them (status=sent, Dovecot's "saved mail"),
# so the loss is the store's; the duplicate was never delivered twice.
check "each lost one: delivered, then gone from the mailbox" eq \
    "$(jq -r '.summary.lost_examples[].server_evidence.cause' "$WORK/run.json" | sort -u)" \
    "delivered, then gone from the mailbox"
check "the duplicate: copied in the store" eq \
    "$(jq -r '.summary.duplicated_examples[].server_evidence.cause' "$WORK/run.json")" "copied in the store"
finish
