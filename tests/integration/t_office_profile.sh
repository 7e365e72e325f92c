#!/usr/bin/env bash
# The office profile (conf/office.conf) against the real testbed, its clock made
# short: the store filled first (3-8 messages a mailbox) and counted independently
# at the end (the clients deleted what they read and left the filled mail, so the
# store holds exactly the fill); 100 mail clients checking every 10 s over 100
# connections log in at 10 a second, within 5 %; MIME mail of the published sizes
# (up to 64 KiB here) to 1-5 recipients, every copy delivered exactly once.
source "$(dirname "$0")/lib.sh"
testbed_up maildir 100

"$MAILSOAK" run -c "$TOP/conf/office.conf" -c "$TB/mailsoak.conf" --duration 40s --drain 30s --rate 10 \
    --readers 100 --set pop3.poll_interval=10s --set fill.messages=3-8 --set smtp.size=0-64k --seed 24 \
    --set run.settle=2s --set smtp.retry_min=2s --interval 10s \
    --json "$WORK/office.json" >"$WORK/office.txt" 2>"$WORK/office.err"
check "office soak exits 0" eq "$?" 0
j() { jget "$WORK/office.json" "$1"; }
planned=$(j .fill.planned)
check "the fill: every mailbox, 3-8 each" awk -v n="$planned" 'BEGIN { exit !(n >= 300 && n <= 800) }'
check "the fill verified exactly" eq "$(j .fill.verified)" "$planned"
rate=$(j .poll.login_rate)
echo "logins $rate/s for a profile of $(j .poll.target_login_rate)/s"
check "login rate within 5 % of 100 / 10 s" awk -v r="$rate" 'BEGIN { exit !(r >= 9.5 && r <= 10.5) }'
# on a loaded machine a check may begin late (counted, and the result says so);
# the rate is what must hold
echo "checks begun over 1 s late: $(j .poll.late) of $(j .poll.polls)"
sent=$(j .summary.sent)
check "mail sent" gt "$sent" 300
check "every copy delivered exactly once" eq "$(j .summary.delivered)" "$sent"
check "nothing lost, pending, duplicated or corrupted" eq "$(j '.summary.lost + .summary.pending + .summary.duplicated + .summary.corrupted')" 0
check "retries on, as the profile says" eq "$(j .config.smtp.retry)" yes
check "MIME content" eq "$(j .config.smtp.content)" mime
# the independent count: Postfix's queue empty, the store holds the fill and nothing else
store=$(testbed_store_count)
check "the store holds exactly the $planned filled messages (scripts/testbed count)" eq "$store" "$planned"
finish
