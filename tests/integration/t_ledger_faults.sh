#!/usr/bin/env bash
# The ledger against real damage: while the readers wait, remove K message files
# from maildirs, change one body byte in J others and copy one; the run must report
# exactly K lost, J corrupted and 1 duplicated, and the rest delivered.
source "$(dirname "$0")/lib.sh"
testbed_up maildir 20
N=60 K=3 J=2

"$MAILSOAK" run -c "$TB/mailsoak.conf" --senders 4 --readers 4 --messages $N --duration 60s \
    --drain 5s --set run.sweep_timeout=20s --set pop3.start_after=12s --seed 11 --interval 5s \
    --json "$WORK/run.json" >"$WORK/table.txt" 2>"$WORK/live.txt" &
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
check "run exits 0" eq "$rc" 0
s() { jget "$WORK/run.json" ".summary.$1"; }
check "sent = $N" eq "$(s sent)" $N
check "lost = $K" eq "$(s lost)" $K
check "corrupted = $J" eq "$(s corrupted)" $J
check "duplicated = 1" eq "$(s duplicated)" 1
check "delivered = N-K-J-1" eq "$(s delivered)" $((N - K - J - 1))
check "pending = 0" eq "$(s pending)" 0
finish
