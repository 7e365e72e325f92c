#!/usr/bin/env bash
# The ledger's verdicts under a backlog, against the real Postfix + Dovecot: Postfix
# accepts far faster than it delivers, so mail keeps reaching the mailboxes long
# after the senders stop. "lost" must mean proven lost:
#  1. No [server] section (mailsoak cannot see the queue): nothing is lost, and
#     pending is exactly the mail of this run the mailboxes hold once the queue is
#     delivered, counted by grep, not by mailsoak.
#  2. The same with [server] (the queue read per message): pending_queued is
#     exactly what Postfix's queue holds at the end.
#  3. Real losses under a backlog, with foreign mail, an earlier run's mail and mail
#     kept on purpose (delete_share) in the store: exactly the messages removed from
#     the queue are lost, and the CSV names exactly them.
# LMTP delivery is slowed (1), half the users' mail deferred (2), or the run's mail
# held in the queue (3) while the load runs, so the backlog builds on any machine;
# bounded to a few thousand messages and a few minutes.
source "$(dirname "$0")/lib.sh"
rm -rf "$ARTEFACTS/t_ledger_backlog"   # a failure's evidence (below), of an earlier run
testbed_up maildir 100

# Postfix settings for one part, and the testbed's back after it.
cp "$POSTFIX_CONF/main.cf" "$WORK/main.cf.testbed"
postfix_reload() { postfix -c "$POSTFIX_CONF" reload >/dev/null 2>&1; }
postfix_set() { postconf -c "$POSTFIX_CONF" -e "$@" && postfix_reload; }
postfix_restore() { cp "$WORK/main.cf.testbed" "$POSTFIX_CONF/main.cf" && postfix_reload; }
# Files of this run (id $1) in the mailboxes, counted from the files themselves.
in_store() {
    find "$MAIL_DIR" -type f \( -path '*/cur/*' -o -path '*/new/*' \) -print0 |
        xargs -0 -r grep -ls -e "^X-Mailsoak-Id: $1-" | wc -l
}
queued() { "$TOP/scripts/testbed" count --dir "$TB" | awk '$1 == "queue" {print $2}'; }
outcomes_sum() { # file: the five outcomes, and pending's reasons
    jq -r '.summary | "\(.delivered + .duplicated + .corrupted + .lost + .pending) \(.pending_queued + .pending_peeked + .pending_unswept + .pending_unsettled)"' "$1"
}

# 1. The classic workload, no [server]: the issue's case (there: lost 831, nothing
# lost). The sweep cannot settle while Postfix still delivers. One delivery a second
# leaves most of the 1000 queued when the run ends however fast the machine (one
# connection at a time was not enough: a quiet moment delivered 3000 in 13 s).
check "LMTP slowed to a message a second" postfix_set lmtp_destination_rate_delay=1s
s() { jget "$WORK/$1.json" ".summary.$2"; }
"$MAILSOAK" run -c "$TOP/conf/james-393.conf" --users "$USERS_FILE" --smtp "127.0.0.1:$SMTP_PORT" \
    --pop3 "127.0.0.1:$POP3_PORT" --messages 1000 --duration 60s --drain 2s --set run.sweep_timeout=8s \
    --interval 5s --seed 5 --json "$WORK/a.json" >"$WORK/a.txt" 2>"$WORK/a.live"
rc=$?
cat "$WORK/a.txt"
check "backlog run exits 4: unsettled and unproven on purpose, the gates say so" eq "$rc" 4
check "the verdict calls it unproven, not clean" grep -q '^verdict  UNPROVEN: .*"lost 0" says nothing' "$WORK/a.txt"
check "and says what to change, from the rates measured" grep -qE '^  remedy +the server delivered [0-9]+ msg/s .*rerun with smtp.rate = [0-9]+, or give the sweep [0-9]+ s more' "$WORK/a.txt"
queue_end=$(queued)
check "a backlog was left in the queue at the end ($queue_end)" gt "$queue_end" 0
check "the testbed's settings back" postfix_restore
check "queue flushed" "$TOP/scripts/testbed" flush --dir "$TB" --timeout 180
rid=$(jget "$WORK/a.json" .run_id)
held=$(in_store "$rid")
echo "sent=$(s a sent) read=$(s a read) late=$(s a late) pending=$(s a pending) lost=$(s a lost);" \
    "queue at the end $queue_end; this run's mail in the mailboxes after the flush: $held"
check "nothing lost" eq "$(s a lost)" 0
check "pending = this run's mail left in the mailboxes ($held)" eq "$(s a pending)" "$held"
check "sent = read + left in the mailboxes" eq "$(s a sent)" "$(($(s a read) + held))"
check "the sweep read mail that arrived after the drain" gt "$(s a late)" 0
check "not settled while Postfix delivered" eq "$(s a settled)" false
check "outcomes add up to sent, reasons to pending" eq "$(outcomes_sum "$WORK/a.json")" "$(s a sent) $(s a pending)"

# 2. The same with [server]: mailsoak reads the queue per message. Postfix defers
# the mail of half the users (those of an even number: an LMTP transport to a
# socket that is not there) and retries it only when flushed, and delivers the
# rest: the queue holds exactly the held users' mail once the deliverable mail is
# in, and no longer changes. The run ends once the sweep settled, 10 s after the
# mailboxes stopped gaining mail, so what it last read of the queue is what the
# test counts after it, however slow the machine.
# Counted while qmgr moves files between queues, a file can be counted twice or not
# at all (3021 of 3000 once): the queue is counted once it all waits in deferred.
in_queue() { find "$POSTFIX_QUEUE/$1" -type f | wc -l; }
all_deferred() {
    local deadline=$((SECONDS + 30))
    while (($(in_queue incoming) + $(in_queue active) > 0 && SECONDS < deadline)); do sleep 0.2; done
}
held_re='^user[0-9]*[02468]@test[.]local$'
echo "/$held_re/ lmtp:unix:$WORK/held.sock" >"$WORK/held.regexp"
check "half the users' mail held, deferred mail retried only when flushed" postfix_set \
    "transport_maps=regexp:$WORK/held.regexp" minimal_backoff_time=1000s maximal_backoff_time=1000s queue_run_delay=1000s
"$MAILSOAK" run -c "$TOP/conf/james-393.conf" -c "$TB/mailsoak.conf" --messages 1000 --duration 60s \
    --drain 5s --set run.sweep_timeout=90s --interval 5s --seed 6 --no-check --json "$WORK/q.json" \
    --ledger-csv "$WORK/q.csv" >"$WORK/q.txt" 2>"$WORK/q.live"
rc=$?
cat "$WORK/q.txt"
check "run exits 4: the queue holds mail at the end, unproven, the gates say so" eq "$rc" 4
check "the sweep settled" eq "$(s q settled)" true
all_deferred
queue_end=$(queued)
echo "pending_queued=$(s q pending_queued) queue=$queue_end pending=$(s q pending) read=$(s q read)"
check "some delivered, some still queued ($queue_end)" awk -v q="$queue_end" 'BEGIN { exit !(q > 0 && q < 1000) }'
check "pending_queued = Postfix's queue" eq "$(s q pending_queued)" "$queue_end"
check "Postfix holds the held users' mail only" \
    eq "$(postqueue -c "$POSTFIX_CONF" -j | jq -r '.recipients[].address' | grep -cvE "$held_re")" 0
check "every queued one is a held user's" \
    eq "$(awk -F, -v re="$held_re" 'NR > 1 && $7 == "queued" && $3 !~ re' "$WORK/q.csv" | wc -l)" 0
check "every held user's is queued" \
    eq "$(awk -F, -v re="$held_re" 'NR > 1 && $3 ~ re && $7 != "queued"' "$WORK/q.csv" | wc -l)" 0
check "nothing lost" eq "$(s q lost)" 0
check "outcomes add up to sent, reasons to pending" eq "$(outcomes_sum "$WORK/q.json")" "$(s q sent) $(s q pending)"
check "the testbed's settings back" postfix_restore
check "queue flushed" "$TOP/scripts/testbed" flush --dir "$TB" --timeout 180
check "Postfix bounced nothing" eq "$(grep -c 'status=bounced' "$POSTFIX_LOG")" 0
qid=$(jget "$WORK/q.json" .run_id)
check "pending = this run's mail left in the mailboxes" eq "$(s q pending)" "$(in_store "$qid")"

# 3. The store also holds an earlier run's mail, foreign mail, and (once the readers
# start) mail they keep on purpose. K messages of this run are held as they arrive
# and removed from the queue; the rest builds a backlog, then is delivered.
K=4
"$MAILSOAK" run --no-check --users "$USERS_FILE" --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" \
    --senders 2 --readers 0 --messages 40 --duration 20s --set run.sweep=no --json "$WORK/old.json" >/dev/null 2>&1
for u in 1 2 3 4 5; do
    swaks --server 127.0.0.1 --port "$SMTP_PORT" -f someone@example.org -t "user000$u@$USER_DOMAIN" \
        --body "not ours" --silent 2 >/dev/null 2>&1 || echo "swaks to user000$u failed"
done
check "earlier and foreign mail delivered" "$TOP/scripts/testbed" flush --dir "$TB" --timeout 60
foreign_before=$(find "$MAIL_DIR" -type f \( -path '*/cur/*' -o -path '*/new/*' \) -print0 |
    xargs -0 -r grep -L -e '^X-Mailsoak-Id: ' | wc -l)
check "the store holds 5 foreign messages" eq "$foreign_before" 5

# One delivery a second while the losses are made, as in 1, so a backlog builds;
# and Postfix holds the run's first K messages as they arrive (a header check:
# HOLD the ids -0 to -3 of any run), so no reader can ever retrieve them whenever
# it starts. Once all K are held they are deleted from the queue, and delivery is
# back to normal: the backlog drains while the readers and the sweep run.
echo '/^X-Mailsoak-Id: [0-9a-f]+-[0-3]$/ HOLD' >"$WORK/hold.regexp"
check "the run's first $K messages held as they arrive, LMTP slowed" postfix_set \
    "header_checks=regexp:$WORK/hold.regexp" lmtp_destination_rate_delay=1s
"$MAILSOAK" run --no-check --users "$USERS_FILE" --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" \
    --senders 10 --readers 4 --messages 600 --duration 60s --drain 10s \
    --set pop3.delete_share=0.5 --seed 9 --interval 5s --json "$WORK/b.json" --ledger-csv "$WORK/b.csv" \
    >"$WORK/b.txt" 2>"$WORK/b.live" &
pid=$!
held() { find "$POSTFIX_QUEUE/hold" -type f | wc -l; }
deadline=$((SECONDS + 60))
while (($(held) < K && SECONDS < deadline)); do sleep 0.2; done
check "$K held in the queue" eq "$(held)" $K
: >"$WORK/removed"
for q in $(find "$POSTFIX_QUEUE/hold" -type f -printf '%f\n'); do
    postcat -c "$POSTFIX_CONF" -h -q "$q" | grep -m1 '^X-Mailsoak-Id: ' | tr -d '\r' | awk '{print $2}' >>"$WORK/removed"
    postsuper -c "$POSTFIX_CONF" -d "$q" hold 2>/dev/null
done
check "$K messages of this run removed from the queue" eq "$(sort -u "$WORK/removed" | grep -c .)" $K
check "none of them in the queue any more" eq "$(held)" 0
postfix_restore   # normal delivery: the backlog drains during the drain and the sweep
wait $pid
rc=$?
cat "$WORK/b.txt"
check "run exits 4: the lost gate fails on the removed messages" eq "$rc" 4
check "the server settled within the sweep" eq "$(s b settled)" true
check "lost = $K, exactly the removed messages" eq "$(s b lost)" $K
check "pending = 0" eq "$(s b pending)" 0
check "delivered = sent - $K" eq "$(s b delivered)" "$(($(s b sent) - K))"
check "duplicated = 0" eq "$(s b duplicated)" 0
check "corrupted = 0" eq "$(s b corrupted)" 0
check "mail was kept on purpose (peeked)" gt "$(s b peeked)" 0
check "outcomes add up to sent" eq "$(outcomes_sum "$WORK/b.json")" "$(s b sent) 0"
check "the CSV's lost messages are the removed ones" \
    eq "$(awk -F, '$6 == "lost" {print $1}' "$WORK/b.csv" | sort | tr '\n' ' ')" "$(sort "$WORK/removed" | tr '\n' ' ')"
check "lost_examples name them too" \
    eq "$(jq -r '.summary.lost_examples[].id' "$WORK/b.json" | sort | tr '\n' ' ')" "$(sort "$WORK/removed" | tr '\n' ' ')"
check "foreign mail is left alone" eq "$(find "$MAIL_DIR" -type f \( -path '*/cur/*' -o -path '*/new/*' \) -print0 |
    xargs -0 -r grep -L -e '^X-Mailsoak-Id: ' | wc -l)" 5
if ((failures)); then   # the evidence a failure needs, kept with the test's artefacts (CI's too)
    keep=$ARTEFACTS/t_ledger_backlog
    mkdir -p "$keep" && cp "$WORK"/*.json "$WORK"/*.csv "$keep"/ &&
        gzip -c "$POSTFIX_LOG" >"$keep/postfix.log.gz" && gzip -c "$DOVECOT_LOG" >"$keep/dovecot.log.gz" &&
        echo "runs' JSON and CSV, Postfix's and Dovecot's logs: $keep"
fi
finish
