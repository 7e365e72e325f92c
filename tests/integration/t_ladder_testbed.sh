#!/usr/bin/env bash
# The size ladder (issue 26) against the real Postfix + Dovecot, its message_size_limit
# set by the test: the ladder must report exactly the SIZE Postfix advertises, deliver
# every size up to the largest power of two within it intact, and name the refusals
# with Postfix's own reply, each one a refusal Postfix logged. Postfix counts its queue
# file (the envelope and the Received header it adds) against the limit, so a message
# of exactly the advertised SIZE is refused too: the ladder's rung at the limit says so.
source "$(dirname "$0")/lib.sh"
testbed_up maildir 4
LIMIT=300000
check "Postfix's message_size_limit = $LIMIT" postconf -c "$POSTFIX_CONF" -e message_size_limit=$LIMIT
postfix -c "$POSTFIX_CONF" reload >/dev/null 2>&1
mark=$(stat -c %s "$POSTFIX_LOG")

"$MAILSOAK" run -c "$TB/mailsoak.conf" --senders 2 --readers 2 --set smtp.size_dist=ladder --duration 90s \
    --drain 10s --set run.sweep_timeout=30s --no-check --seed 4 --interval 5s --json "$WORK/run.json" \
    >"$WORK/table.txt" 2>"$WORK/live.txt"
rc=$?
cat "$WORK/table.txt"
check "run exits 0 (nothing accepted was lost)" eq "$rc" 0
l() { jget "$WORK/run.json" ".ladder.$1"; }
rung() { jq -r --argjson s "$1" ".ladder.rungs[] | select(.size == \$s) | .$2" "$WORK/run.json"; }
check "the SIZE Postfix advertises, exactly" eq "$(l size_advertised)" "$(postconf -c "$POSTFIX_CONF" -h message_size_limit)"
check "rungs: 1 KiB doubling to 256 KiB, the limit, 512 KiB" eq "$(jq -c '[.ladder.rungs[].size]' "$WORK/run.json")" \
    '[1024,2048,4096,8192,16384,32768,65536,131072,262144,300000,524288]'
for s in 1024 2048 4096 8192 16384 32768 65536 131072 262144; do
    check "$s bytes: 3 tried, 3 delivered intact" eq "$(rung $s tried) $(rung $s delivered)" "3 3"
done
check "largest size delivered intact: 262144" eq "$(l largest_intact)" 262144
for s in 300000 524288; do
    check "$s bytes: 3 refused, none accepted" eq "$(rung $s refused) $(rung $s accepted)" "3 0"
    check "$s bytes: refused with Postfix's 552 5.3.4" eq "$(rung $s reply)" "552 5.3.4 Error: message file too big"
done
check "Postfix logged each of the 6 refusals" eq \
    "$(tail -c +"$((mark + 1))" "$POSTFIX_LOG" | grep -c 'warning: [0-9A-F]*: queue file size limit exceeded')" 6
check "no failure" eq "$(jq '.ladder.failures | length' "$WORK/run.json")" 0
check "lost = 0, sent = 27" eq "$(jget "$WORK/run.json" '.summary.lost') $(jget "$WORK/run.json" '.summary.sent')" "0 27"
finish
