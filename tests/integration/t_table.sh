#!/usr/bin/env bash
# t_table.sh: the run's table says what its figures are. With pipelining the
# smtp.mail, smtp.rcpt and smtp.data rows are marked as one group, with a footnote,
# and without it they are not; when more mail waited unread at the end of sending
# than the readers take in a round, a note says deliv p50/p99 may measure the
# readers, and a paced run that keeps its readers idle has no such note; a timeout
# class keeps an example too, what was awaited and for how long (its examples were
# empty). Against the reference server, each run <= 5 s and a few hundred messages.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"
[[ -x $MAILSOAK ]] || { echo "no $MAILSOAK: run make"; exit 77; }
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }

# soak NAME STATUS ARGS...: a short run against the running server, exiting STATUS
# (the verdict's: 0 every gate passed, 4 an integrity gate failed, 5 only QoS ones);
# its table in NAME.table.
soak() {
    local name=$1 want=$2 rc
    shift 2
    timeout 60 "$MAILSOAK" run --no-check --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" \
        --set users.count=20 --duration 2s --drain 2s --set run.sweep_timeout=5s --interval 500ms \
        --json "$WORK/$name.json" "$@" >"$WORK/$name.table" 2>"$WORK/$name.err"
    rc=$?
    [[ $rc == "$want" ]] || { tail -5 "$WORK/$name.err"; fail "$name: mailsoak run exited $rc, not $want"; }
}

srv_start --set users.count=20
# 300 messages, so that the one reader empties the mailboxes within the sweep
soak piped 0 --senders 4 --readers 1 --set pop3.max_per_session=2 --messages 300
for cmd in mail rcpt data; do
    grep -qE "^  smtp\.$cmd\* +[0-9]" "$WORK/piped.table" || { cat "$WORK/piped.table"; fail "smtp.$cmd not marked"; }
done
grep -q '^  \* one pipelined group (MAIL, RCPT and DATA in one write)' "$WORK/piped.table" || fail "no footnote"
grep -qE '^  smtp\.eod +[0-9]' "$WORK/piped.table" || fail "smtp.eod marked, or missing"
ok "pipelined: smtp.mail, smtp.rcpt, smtp.data marked as one group"
unread=$(jq '[.timeline[] | select(.phase == "send")] | last | .unread' "$WORK/piped.json")
((unread > 2)) || fail "the readers kept up ($unread unread): no case for the note"
grep -qF "(deliv p50 and p99 may measure the readers rather than the server: when the senders stopped, $unread messages waited unread, more than the 1 readers take in a round of 2 each" \
    "$WORK/piped.table" || { cat "$WORK/piped.table"; fail "no note that deliv measures the readers"; }
ok "a reader backlog of $unread: the note says deliv may measure the readers"

soak lockstep 0 --senders 2 --readers 4 --rate 20 --pipelining off
grep -q '\*' "$WORK/lockstep.table" && { cat "$WORK/lockstep.table"; fail "a group marked without pipelining"; }
grep -q 'measure the readers' "$WORK/lockstep.table" && fail "the note with idle readers"
ok "lockstep, paced, readers idle: no group, no note"
srv_stop

# A stalled reply: the timeout class has its example.
srv_start --set users.count=20 --set fault.pop3.retr.kind=stall --set fault.pop3.retr.every=1 \
    --set fault.pop3.retr.max=1 --set fault.smtp.eod.kind=stall --set fault.smtp.eod.every=1 --set fault.smtp.eod.max=1
# the stalls hold the one reader for a second of the run's two, so the backlog grows
# by design: "kept up" is not what this case is about
soak stall 0 --senders 1 --readers 1 --set pop3.timeout=1s --set smtp.timeout=1s --set gate.kept_up=no
ex=$(jq -c '.summary.error_examples | {pop3_retr_timeout, smtp_eod_timeout}' "$WORK/stall.json")
[[ $ex == '{"pop3_retr_timeout":["no reply to RETR within 1.0s"],"smtp_eod_timeout":["no reply to the end of data within 1.0s"]}' ]] ||
    fail "timeout examples: $ex"
grep -qE '^  pop3_retr_timeout +1  no reply to RETR within 1.0s$' "$WORK/stall.table" || fail "the table has no example"
ok "timeouts keep an example: $ex"
