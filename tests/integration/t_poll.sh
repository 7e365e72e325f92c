#!/usr/bin/env bash
# Readers as mail clients against the reference server: 60 users checking every
# 4 s over 4 reader connections for 24 s make their logins at 60 / 4 = 15 a
# second (within 5 %), however fast the server answers; leave-on-server clients
# (UIDL, only the new retrieved, each previewed with TOP first, deleted at the
# third check that lists it again) read every message exactly once, and the store
# keeps exactly the messages not yet deleted. Against a server whose every STAT is 1 s
# slow the logins still come at 15 a second: the checks do not drift.
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"

srv_start --set users.count=60
"$MAILSOAK" run --no-check --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" --set users.count=60 \
    --senders 2 --rate 15 --readers 4 --poll-interval 4s --set pop3.poll_jitter=0.1 --set pop3.leave=yes \
    --set pop3.keep_polls=3 --set pop3.preview=yes --duration 24s --drain 10s --seed 7 --interval 5s \
    --json "$WORK/poll.json" >"$WORK/poll.txt" 2>"$WORK/poll.err" || { cat "$WORK/poll.err"; fail "run failed"; }
j() { jq -r "$1" "$WORK/poll.json"; }
rate=$(j .poll.login_rate)
awk -v r="$rate" 'BEGIN { exit !(r >= 15 * 0.95 && r <= 15 * 1.05) }' || { cat "$WORK/poll.txt"; fail "login rate $rate, not within 5 % of 15/s"; }
ok "login rate $rate/s for a profile of 15/s"
[[ $(j .poll.tester_limited) == false ]] || fail "the readers could not keep up"
ok "no check began late for want of a reader"
sent=$(j .summary.sent)
[[ $(j .summary.delivered) == "$sent" && $(j '.summary.duplicated + .summary.lost + .summary.pending') == 0 ]] \
    || { cat "$WORK/poll.txt"; fail "not every one of the $sent messages was read exactly once"; }
ok "$sent sent, each read exactly once by its client"
retr=$(j '.summary.latency["pop3.retr"].count')
[[ $(j '.summary.latency["pop3.top"].count') == "$retr" ]] || fail "not every retrieval previewed with TOP"
ok "every retrieval ($retr) previewed"
dele=$(j '.summary.latency["pop3.dele"].count // 0')
[[ $dele -gt 0 ]] || fail "no message deleted after its third check"
[[ $(j '.summary.latency["deliv.poll"].count') == "$retr" ]] || fail "delivery not split into server and polling"
ok "delivery split into the server's part and the polling's"
# the store keeps what was not deleted: count every mailbox's messages
total=0
for i in $(seq 0 59); do
    pop_open
    pop_cmd "USER $(printf 'user%04d@test.local' "$i")"
    pop_cmd "PASS "
    pop_cmd "STAT"
    set -- $REPLY
    total=$((total + $2))
    pop_cmd "QUIT"
    pop_close
done
[[ $total == $((sent - dele)) ]] || fail "the store holds $total, expected $sent sent - $dele deleted"
ok "the store holds the $total messages the clients still keep ($sent - $dele deleted)"
srv_stop

# A slow server: every STAT answered 1 s late. The checks keep their schedule (each
# one interval after the last was due, not after it ended), so the logins still come
# at 15 a second, given readers enough to wait on the server (20).
srv_start --set users.count=60 --set fault.pop3.stat.kind=delay --set fault.pop3.stat.delay=1s \
    --set fault.pop3.stat.every=1
"$MAILSOAK" run --no-check --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" --set users.count=60 \
    --senders 2 --rate 15 --readers 20 --poll-interval 4s --set pop3.poll_jitter=0.1 --duration 24s --drain 10s \
    --seed 8 --interval 5s --json "$WORK/slow.json" >"$WORK/slow.txt" 2>"$WORK/slow.err" ||
    { cat "$WORK/slow.err"; fail "the run against a slow STAT failed"; }
rate=$(jq -r .poll.login_rate "$WORK/slow.json")
awk -v r="$rate" 'BEGIN { exit !(r >= 15 * 0.95 && r <= 15 * 1.05) }' ||
    { cat "$WORK/slow.txt"; fail "STAT 1 s slow: login rate $rate, not within 5 % of 15/s"; }
[[ $(jq -r .poll.tester_limited "$WORK/slow.json") == false ]] || fail "STAT 1 s slow: the readers could not keep up"
stat_p50=$(jq -r '.summary.latency["pop3.stat"].p50 // 0' "$WORK/slow.json")
ok "STAT 1 s slow (p50 $stat_p50): login rate $rate/s for a profile of 15/s"
srv_stop
echo "t_poll: all checks passed"
