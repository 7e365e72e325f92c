#!/usr/bin/env bash
# The queue read per message, against the real Postfix testbed. Postfix's delivery
# is stopped (defer_transports = lmtp): every accepted message stays queued. While
# the run drains, the test removes some with `postsuper -d`, as an operator or a
# broken server would. mailsoak must call exactly those lost (their mailboxes were
# read after the server settled and the queue no longer held them) and the others
# pending because queued, although the queue never empties: counts checked against
# Postfix's own queue, ids against the X-Mailsoak-Id of the removed files.
source "$(dirname "$0")/lib.sh"
need_root
command -v jq >/dev/null || { echo "skip: needs jq" >&2; exit 77; }
testbed_up maildir 10
postconf -c "$POSTFIX_CONF" -e 'defer_transports = lmtp' &&
    postfix -c "$POSTFIX_CONF" reload >/dev/null 2>&1 || { echo "FAIL: cannot stop Postfix's delivery"; exit 1; }

N=20 K=8
queued() { postfix_queued; }

"$MAILSOAK" run -c "$TB/mailsoak.conf" --messages $N --senders 2 --readers 2 --duration 30s --drain 8s \
    --set run.settle=2s --set run.sweep_timeout=40s --interval 1s --seed 14 --no-check \
    --json "$WORK/run.json" --ledger-csv "$WORK/ledger.csv" >"$WORK/table.txt" 2>"$WORK/live.txt" &
run=$!

deadline=$((SECONDS + 40))
while (($(queued) < N && SECONDS < deadline)); do
    sleep 0.2
done
check "all $N accepted messages are in Postfix's queue" eq "$(queued)" $N

# Remove K of them; keep each one's X-Mailsoak-Id (postcat finds the queue file by its id,
# wherever qmgr has moved it; an id met twice in the walk is one message).
: >"$WORK/removed"
for qid in $(find "$POSTFIX_QUEUE"/{active,deferred} -type f -printf '%f\n' | sort -u | head -n $K); do
    postcat -c "$POSTFIX_CONF" -h -q "$qid" 2>/dev/null | sed -n 's/^X-Mailsoak-Id: //p' >>"$WORK/removed"
    postsuper -c "$POSTFIX_CONF" -d "$qid" >/dev/null 2>&1
done
sort -o "$WORK/removed" "$WORK/removed"
check "$K ids read from the removed queue files" eq "$(wc -l <"$WORK/removed")" $K
check "the queue holds the rest" eq "$(queued)" $((N - K))

wait $run
rc=$?
cat "$WORK/table.txt"
cp "$WORK/run.json" "$ARTEFACTS/queue-testbed.json" 2>/dev/null || true
check "run exits 4: the lost gate fails on the removed messages" eq "$rc" 4
s() { jget "$WORK/run.json" ".summary.$1"; }
check "sent = $N" eq "$(s sent)" $N
check "settled" eq "$(s settled)" true
check "lost = the $K removed" eq "$(s lost)" $K
check "pending = the $((N - K)) still queued" eq "$(s pending)" $((N - K))
check "pending_queued = pending" eq "$(s pending_queued)" $((N - K))
check "spool at the end = Postfix's queue" eq "$(s spool)" "$(queued)"
# The ledger CSV names every message not delivered: the lost ones are the removed ones.
awk -F, 'NR > 1 && $0 ~ /,lost,/ {print $1}' "$WORK/ledger.csv" | tr -d '"' | sort >"$WORK/lost"
check "lost ids = removed ids" diff "$WORK/lost" "$WORK/removed"
check "the table has a pending row" grep -qE '^ *pending +12' "$WORK/table.txt"
finish
