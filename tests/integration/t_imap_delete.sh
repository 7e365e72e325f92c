#!/usr/bin/env bash
# imap.delete = DURATION against the reference server's IMAP: 20 idle clients
# flag what they fetch seen and leave it, then delete it at their first sync
# after it is 1 s older than its acceptance, as a client set to delete mail from
# the server after N days does. Every message is proven delivered exactly once,
# the server's maildir holds only what was not yet that old, and the clients
# sent their EXPUNGEs. With the server's EXPUNGE answered and not done once
# (undone), the message the client forgot comes back and is fetched again:
# duplicated, exit 4. Two runs of 100 messages.
source "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }
[[ -x $MAILSOAK && -x $MAILSOAK_SERVER ]] || { echo "skip: build first"; exit 77; }
USERS=20

# soak NAME: 100 messages at 20/s to the idle clients, deleted 1 s after; $WORK/NAME.json.
soak() {
    local name=$1
    "$MAILSOAK" run --no-check --smtp "$SMTP" --imap "$IMAP" --set readers.protocol=imap \
        --set imap.models=idle:100 --set imap.delete=1s --set users.count=$USERS --readers 2 --senders 4 \
        --messages 100 --rate 20 --duration 30s --drain 10s --interval 1s --seed 5 --json "$WORK/$name.json" \
        >"$WORK/$name.txt" 2>"$WORK/$name.live"
}
s() { jget "$WORK/$1.json" "$2"; }

ref_up aged --store maildir --store-dir "$WORK/mail" --set server.fsync=no
soak aged
rc=$?
cat "$WORK/aged.txt"
ref_down
check "aged: exit 0" eq "$rc" 0
check "aged: 100 delivered exactly once" eq "$(s aged .summary.delivered)" 100
check "aged: none duplicated" eq "$(s aged .summary.duplicated)" 0
check "aged: read by the idle clients, not the sweep" eq "$(s aged .summary.late)" 0
left=$(find "$WORK/mail" -path '*/new/*' -type f -o -path '*/cur/*' -type f | wc -l)
expunges=$(s aged '.summary.latency["imap.expunge"].count // 0')
check "aged: the clients expunged what was 1 s old ($expunges EXPUNGEs)" gt "$expunges" 0
check "aged: the store holds fewer than were sent ($left)" gt 100 "$left"

ref_up undone --set fault.imap.expunge.kind=undone --set fault.imap.expunge.every=1 \
    --set fault.imap.expunge.max=1
soak undone
rc=$?
cat "$WORK/undone.txt"
ref_down
check "undone: exit 4 (integrity)" eq "$rc" 4
check "undone: the forgotten message fetched again: duplicated" gt "$(s undone .summary.duplicated)" 0
check "undone: the rest delivered exactly once" \
    eq "$(($(s undone .summary.delivered) + $(s undone .summary.duplicated)))" 100
check "undone: nothing lost" eq "$(s undone .summary.lost)" 0
finish
