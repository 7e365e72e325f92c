#!/usr/bin/env bash
# Workload shapes against the real testbed: a target rate held within 5 % in every
# 5 s interval of 30 s, IPv6 targets, retrieve-without-delete, lognormal sizes, think
# time and source-address binding (the addresses Postfix and Dovecot log); 1-4
# recipients per message over SMTP (Postfix) and LMTP (Dovecot), and in lockstep.
# One worker, so readers share a loop: their RETRs of large messages interleave (a
# digest context shared between sessions once corrupted exactly these).
source "$(dirname "$0")/lib.sh"
testbed_up maildir 50

# Rate: 40 messages/s for 30 s from 10 senders; no ramp. The achieved rate is the
# accepted count over the send window, and over each interval of the timeline.
# No drain and no sweep: what is unread stays unproven, so no proven share is asked.
"$MAILSOAK" run -c "$TB/mailsoak.conf" --senders 10 --readers 2 --rate 40 --duration 30s --drain 0s \
    --set run.sweep=no --gate-proven 0 --interval 5s --json "$WORK/rate.json" >"$WORK/rate.txt" 2>/dev/null
check "rate run exits 0" eq "$?" 0
achieved=$(jq '.summary.sent / .duration_s' "$WORK/rate.json")
echo "achieved rate: $achieved msg/s (target 40)"
check "achieved rate within 5 % of 40/s" awk -v a="$achieved" 'BEGIN { exit !(a >= 38 && a <= 42) }'
# Each interval of the send phase at least 2.5 s long (the last one may be cut short
# by the end of the window), as "t rate" lines.
jq -r '[.timeline[] | select(.phase == "send")] as $e
       | range(0; $e | length) as $i
       | select($e[$i].t - (if $i == 0 then 0 else $e[$i - 1].t end) >= 2.5)
       | "\($e[$i].t) \($e[$i].rate_in)"' "$WORK/rate.json" >"$WORK/rates"
cat "$WORK/rates"
check "at least 5 intervals of the send phase judged" gt "$(wc -l <"$WORK/rates")" 4
check "every interval's rate within 5 % of 40/s" awk '$2 < 38 || $2 > 42 { bad = 1 } END { exit bad }' "$WORK/rates"
check "message latency measured from intended times" gt "$(jget "$WORK/rate.json" '.summary.latency["smtp.message"].count')" 1000

# IPv6 loopback on both protocols.
"$MAILSOAK" run --users "$USERS_FILE" --smtp "[::1]:$SMTP6_PORT" --pop3 "[::1]:$POP36_PORT" \
    --senders 4 --readers 2 --messages 50 --duration 20s --drain 10s --json "$WORK/v6.json" >/dev/null 2>&1
check "IPv6: 50 sent" eq "$(jget "$WORK/v6.json" .summary.sent)" 50
check "IPv6: no errors" eq "$(jget "$WORK/v6.json" .summary.errors)" 0
check "IPv6: some read" gt "$(jget "$WORK/v6.json" .summary.read)" 0

# Half the retrieved mail is left on the server; lognormal sizes; a think time;
# connections from explicit source addresses, not the default 127.0.0.1 (any
# 127/8 address is the loopback's): Postfix's smtpd and Dovecot's pop3-login must
# log every connection of the run from them (--no-check: the preflight, libcurl's
# own look at the targets, does not bind).
pf_from=$(($(wc -l <"$POSTFIX_LOG") + 1)) dc_from=$(($(wc -l <"$DOVECOT_LOG") + 1))
"$MAILSOAK" run -c "$TB/mailsoak.conf" --senders 4 --readers 3 --messages 200 --duration 20s --drain 5s \
    --workers 1 --set run.sweep=no --set pop3.delete_share=0.5 --set smtp.size_dist=lognormal --set smtp.size=0-20000 \
    --set smtp.size_median=3000 --set smtp.think=20ms --set smtp.bind=127.0.0.2 --set pop3.bind=127.0.0.3 \
    --no-check --json "$WORK/shape.json" >/dev/null 2>&1
check "shapes: 200 sent" eq "$(jget "$WORK/shape.json" .summary.sent)" 200
check "shapes: no errors" eq "$(jget "$WORK/shape.json" .summary.errors)" 0
check "shapes: some retrieved and left" gt "$(jget "$WORK/shape.json" .summary.peeked)" 0
check "shapes: nothing corrupted" eq "$(jget "$WORK/shape.json" .summary.corrupted)" 0
smtpd=$(tail -n +"$pf_from" "$POSTFIX_LOG" | grep -E 'postfix/smtpd\[[0-9]+\]: connect from ')
logins=$(tail -n +"$dc_from" "$DOVECOT_LOG" | grep -E 'pop3-login: (Info: )?Login: ')
check "shapes: Postfix saw connections from smtp.bind" gt "$(grep -c '\[127\.0\.0\.2\]$' <<<"$smtpd")" 0
check "shapes: every one from it" eq "$(grep -vc '\[127\.0\.0\.2\]$' <<<"$smtpd")" 0
check "shapes: Dovecot saw logins from pop3.bind" gt "$(grep -c 'rip=127\.0\.0\.3,' <<<"$logins")" 0
check "shapes: every one from it" eq "$(grep -vc 'rip=127\.0\.0\.3,' <<<"$logins")" 0
# Several recipients per message, through Postfix over SMTP and straight into
# Dovecot over LMTP (a reply per recipient): each recipient is its own ledger
# entry, and every one must arrive exactly once.
# Lockstep (no pipelining) walks the same recipients one reply at a time.
for proto in smtp lmtp lockstep; do
    target="127.0.0.1:$SMTP_PORT" p=$proto pipe=auto
    [[ $proto == lmtp ]] && target="127.0.0.1:$LMTP_PORT"
    [[ $proto == lockstep ]] && p=smtp pipe=off
    "$MAILSOAK" run --users "$USERS_FILE" --smtp "$target" --pop3 "127.0.0.1:$POP3_PORT" --pipelining $pipe \
        --set smtp.protocol=$p --set smtp.rcpts=1-4 --senders 4 --readers 4 --messages 60 \
        --duration 30s --drain 30s --json "$WORK/$proto.json" >/dev/null 2>&1
    sent=$(jget "$WORK/$proto.json" .summary.sent)
    check "$proto: more deliveries than messages (1-4 recipients)" gt "$sent" 60
    check "$proto: every recipient's copy delivered once" eq "$(jget "$WORK/$proto.json" .summary.delivered)" "$sent"
    check "$proto: no errors" eq "$(jget "$WORK/$proto.json" .summary.errors)" 0
    check "$proto: nothing misattributed" eq "$(jget "$WORK/$proto.json" .summary.corrupted)" 0
done
finish
