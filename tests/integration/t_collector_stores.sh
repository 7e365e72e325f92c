#!/usr/bin/env bash
# The collector's store count on the mbox, sdbox and mdbox testbeds equals Dovecot's
# own (doveadm mailbox status), after a soak that delivered over LMTP and expunged
# over POP3: for mdbox that is the index-and-log replay, on files a live Dovecot wrote.
source "$(dirname "$0")/lib.sh"
need_root
command -v jq >/dev/null || { echo "skip: needs jq" >&2; exit 77; }
source "$(dirname "$0")/collector_lib.sh"
build_probe

dovecot_count() {
    doveadm -c "$DOVECOT_CONF" -f tab mailbox status -A messages '*' |
        awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "messages") c = i; next }
                    c { s += $c } END { print s + 0 }'
}

for backend in mbox sdbox mdbox; do
    testbed_up "$backend" 20
    # Deliveries and expunges, then deliveries on top of that history. Each run ends
    # on what it waits for, its messages sent (the send phase ends at --messages)
    # and, the first, all of them read (the drain ends when the mailboxes owe
    # nothing): the durations are bounds a loaded machine does not reach, where a
    # 20 s send and a 3 s drain once read fewer than 100 of 300.
    "$MAILSOAK" run -c "$TB/mailsoak.conf" --messages 300 --duration 120s --drain 120s \
        --set run.sweep=no --senders 5 --readers 2 --seed 5 --json "$WORK/run.json" >/dev/null 2>&1
    check "$backend: mail sent" eq "$(jget "$WORK/run.json" .summary.sent)" 300
    read_=$(jget "$WORK/run.json" .summary.read)
    check "$backend: all mail read (so expunged)" eq "$read_" 300
    "$MAILSOAK" run -c "$TB/mailsoak.conf" --messages 100 --readers 0 --duration 120s --drain 0s \
        --set run.sweep=no --seed 6 --json "$WORK/run2.json" >/dev/null 2>&1
    check "$backend: 100 more sent" eq "$(jget "$WORK/run2.json" .summary.sent)" 100
    "$TOP/scripts/testbed" flush --dir "$TB" --timeout 120 >/dev/null 2>&1
    check "$backend: queue empty" eq "$(postfix_queued)" 0

    start_probe "$WORK/$backend.json" -c "$TB/mailsoak.conf"
    stop_probe
    check "$backend: the probe exits 0" eq "$?" 0
    ours=$(jget "$WORK/$backend.json" .summary.store_messages)
    theirs=$(dovecot_count)
    echo "$backend: store_messages=$ours doveadm=$theirs read=$read_ bytes=$(jget "$WORK/$backend.json" .summary.store_bytes)"
    check "$backend: store_messages = doveadm's count" eq "$ours" "$theirs"
    check "$backend: mail left in the store" test "$ours" -ge 100
    check "$backend: store_bytes above zero" gt "$(jget "$WORK/$backend.json" .summary.store_bytes)" 0
    "$TOP/scripts/testbed" down --dir "$TB" >/dev/null 2>&1
done
TB=""
finish
