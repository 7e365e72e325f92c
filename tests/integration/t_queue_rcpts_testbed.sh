#!/usr/bin/env bash
# The queue read per recipient, against the real Postfix testbed: messages with two
# recipients each; Dovecot cannot write user0001's mailbox (its home is mode 000), so
# Postfix keeps each message queued for user0001 alone, and Postfix discards every
# copy for user0002 (a transport of discard:, logged as delivered): a loss no reader
# can see happen, whenever the readers start. mailsoak must call exactly those
# deliveries lost, although most of their messages are still in the queue (for
# user0001), and user0001's recipients pending because queued: the queue says which
# recipients it still holds (Postfix R records), and only those are marked.
source "$(dirname "$0")/lib.sh"
need_root
command -v jq >/dev/null || { echo "skip: needs jq" >&2; exit 77; }
testbed_up maildir 4
HOME1=$MAIL_DIR/test.local/user0001
HOME2=$MAIL_DIR/test.local/user0002
chmod 000 "$HOME1"


postconf -c "$POSTFIX_CONF" -e 'transport_maps=inline:{ user0002@test.local=discard: }' &&
    postfix -c "$POSTFIX_CONF" reload >/dev/null 2>&1
check "Postfix discards user0002's mail" eq "$(postmap -c "$POSTFIX_CONF" -q user0002@test.local \
    "$(postconf -c "$POSTFIX_CONF" -h transport_maps)")" discard:

N=12
"$MAILSOAK" run -c "$TB/mailsoak.conf" --messages $N --senders 2 --readers 2 --duration 30s --drain 4s \
    --set smtp.rcpts=2 --set run.settle=2s --set run.sweep_timeout=40s \
    --interval 1s --seed 21 --no-check --json "$WORK/run.json" --ledger-csv "$WORK/ledger.csv" \
    >"$WORK/table.txt" 2>"$WORK/live.txt"
rc=$?
cat "$WORK/table.txt"
# What Postfix discarded and still holds, by its own account.
lost=$(grep -c 'postfix/discard\[.*to=<user0002@test.local>.*status=sent' "$POSTFIX_LOG")
held=$(postqueue -c "$POSTFIX_CONF" -j | jq -s '[.[].recipients[] | select(.address == "user0001@test.local")] | length')
echo "discarded for user0002: $lost; queued for user0001: $held"
check "some of user0002's mail was discarded" gt "$lost" 0
check "some of user0001's mail is queued" gt "$held" 0
check "the queue holds user0001's recipients only" \
    eq "$(postqueue -c "$POSTFIX_CONF" -j | jq -s '[.[].recipients[] | select(.address != "user0001@test.local")] | length')" 0
check "none of user0002's mail reached the mailbox" eq "$(find "$HOME2" -type f \( -path '*/new/*' -o -path '*/cur/*' \) | wc -l)" 0
chmod 755 "$HOME1"
cp "$WORK/run.json" "$ARTEFACTS/queue-rcpts-testbed.json" 2>/dev/null || true
check "run exits 4: the lost gate fails on the removed messages" eq "$rc" 4
s() { jget "$WORK/run.json" ".summary.$1"; }
check "settled" eq "$(s settled)" true
check "lost = what Postfix discarded for user0002" eq "$(s lost)" "$lost"
check "pending_queued = user0001's queued recipients" eq "$(s pending_queued)" "$held"
check "pending = pending_queued" eq "$(s pending)" "$held"
check "every lost one was user0002's" \
    eq "$(awk -F, 'NR > 1 && $0 ~ /,lost,/ && $3 != "user0002@test.local"' "$WORK/ledger.csv" | wc -l)" 0
check "every queued one is user0001's" \
    eq "$(awk -F, 'NR > 1 && $7 == "queued" && $3 != "user0001@test.local"' "$WORK/ledger.csv" | wc -l)" 0
# The case that needs recipients: a lost delivery whose message is still queued (for
# user0001). Marking whole messages would have called these pending, not lost.
both=$(comm -12 <(awk -F, 'NR > 1 && $0 ~ /,lost,/ {print $1}' "$WORK/ledger.csv" | sort -u) \
    <(awk -F, 'NR > 1 && $7 == "queued" {print $1}' "$WORK/ledger.csv" | sort -u) | wc -l)
echo "lost deliveries of messages still queued: $both"
check "some lost deliveries belong to messages still queued" gt "$both" 0
finish
