#!/usr/bin/env bash
# IMAP pipelining (imap.pipelining) against the reference server: the drain
# readers send SELECT behind LOGIN, and UID EXPUNGE and LOGOUT behind UID STORE,
# without waiting (RFC 3501 5.5), so their 100 messages take fewer round trips
# than commands: two fewer for each EXPUNGE at least, every message still proven
# delivered exactly once. With imap.pipelining = no, as many round trips as
# commands. Then a server that refuses five STOREs after setting their
# \Deleted (the applied fault): the UID EXPUNGE pipelined behind each removes
# the mail all the same, and the readers count it by the EXPUNGE responses:
# every message still delivered exactly once, none left owed. Three runs of 100
# messages.
source "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }
[[ -x $MAILSOAK && -x $MAILSOAK_SERVER ]] || { echo "skip: build first"; exit 77; }
USERS=20

d=$WORK/srv
mkdir -p "$d"
"$MAILSOAK_SERVER" --listen-smtp 127.0.0.1:0 --listen-pop3 127.0.0.1:0 --listen-imap 127.0.0.1:0 \
    --ready-file "$d/ready" --log "$d/server.log" --set users.count=$USERS >"$d/server.out" 2>&1 &
SRV=$!
ready() { [[ -s $d/ready ]]; }
wait_for 10 ready || { cat "$d/server.out"; echo "FAIL: the server did not start"; exit 1; }
[[ $(cat "$d/ready") =~ smtp=(127\.0\.0\.1:[0-9]+).*imap=(127\.0\.0\.1:[0-9]+) ]] || exit 1
SMTP=${BASH_REMATCH[1]} IMAP=${BASH_REMATCH[2]}

# soak NAME yes|no: 100 messages at 50/s to the drain readers; $WORK/NAME.json.
soak() {
    "$MAILSOAK" run --no-check --smtp "$SMTP" --imap "$IMAP" --set readers.protocol=imap \
        --set imap.pipelining="$2" --set pop3.visit=owed --set users.count=$USERS --readers 2 --senders 4 \
        --messages 100 --rate 50 --duration 30s --drain 10s --interval 1s --seed 5 --json "$WORK/$1.json" \
        >"$WORK/$1.txt" 2>"$WORK/$1.live"
}
s() { jget "$WORK/$1.json" "$2"; }

for p in yes no; do
    soak "$p" "$p"
    rc=$?
    cat "$WORK/$p.txt"
    check "$p: exit 0" eq "$rc" 0
    check "$p: 100 delivered exactly once" eq "$(s "$p" .summary.delivered)" 100
    check "$p: no errors" eq "$(s "$p" .summary.errors)" 0
done
stop_pid "$SRV"
wait "$SRV" 2>/dev/null

# applied: five STOREs refused after their flags were set
ref_up applied --set fault.imap.store.kind=applied --set fault.imap.store.every=1 --set fault.imap.store.max=5
soak applied yes
rc=$?
ref_down
cat "$WORK/applied.txt"
check "applied: exit 0" eq "$rc" 0
check "applied: 100 delivered exactly once" eq "$(s applied .summary.delivered)" 100
check "applied: none pending" eq "$(s applied .summary.pending)" 0
check "applied: the five refused STOREs counted" eq "$(s applied '.summary.errors_by_class.imap_store_serverbug')" 5
check "applied: the fault struck five times" eq "$(grep -c 'store answered NO after its flags' "$WORK/applied/server.log")" 5

cmds=$(s yes .summary.imap_commands) trips=$(s yes .summary.imap_round_trips)
expunges=$(s yes '.summary.latency["imap.expunge"].count // 0')
check "yes: the readers expunged ($expunges)" gt "$expunges" 0
check "yes: $cmds commands in $trips round trips, two fewer for each EXPUNGE at least" \
    test "$((cmds - trips))" -ge "$((2 * expunges))"
check "yes: the table says so" grep -q "IMAP: $cmds commands in $trips round trips" "$WORK/yes.txt"
check "no: one round trip a command" eq "$(s no .summary.imap_round_trips)" "$(s no .summary.imap_commands)"
check "no: commands counted" gt "$(s no .summary.imap_commands)" 0
finish
