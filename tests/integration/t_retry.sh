#!/usr/bin/env bash
# smtp.retry against the reference server's faults, with exact counts: a
# greylisting-like 450 at RCPT (the first K RCPTs), a store lock window (every
# delivery of the server's first seconds gets 451 at the end of data) and a 550 at
# RCPT (a bounce, never retried). Each 4xx the server logs is one more try of a
# message, and every message is delivered in the end; a bounce is counted and
# the message is not sent again. Back-offs of 1 s (retry_min) keep it short.
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"

s() { jq -r ".summary.$1" "$WORK/$2.json"; }
soak() {   # soak NAME N [more flags]: N messages to 20 users, retrying after 1 s, 2 s, ...
    local name=$1 n=$2
    shift 2
    "$MAILSOAK" run --no-check --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" \
        --set users.count=20 --senders 4 --readers 2 --messages "$n" --duration 40s --drain 30s \
        --set smtp.retry=yes --set smtp.retry_min=1s --set smtp.retry_max=4s --seed 5 --interval 5s \
        --json "$WORK/$name.json" --ledger-csv "$WORK/$name.csv" "$@" >"$WORK/$name.txt" 2>"$WORK/$name.err" \
        || { cat "$WORK/$name.err"; fail "$name: run failed"; }
}
expect() {   # expect NAME KEY VALUE
    local got
    got=$(s "$2" "$1")
    [[ $got == "$3" ]] || { cat "$WORK/$1.txt"; fail "$1: $2 = $got, expected $3"; }
    ok "$1: $2 = $3"
}

# 1. Greylisting-like: the first K RCPTs get 450; each of those messages is sent again.
N=40 K=7
srv_start --set users.count=20 --set fault.smtp.rcpt.kind=4xx --set fault.smtp.rcpt.code=450 \
    --set fault.smtp.rcpt.every=1 --set fault.smtp.rcpt.max=$K
soak grey $N
strikes=$(grep -c ': 450 ' "$WORK/server.log")
[[ $strikes == "$K" ]] || fail "grey: the server logged $strikes 450s, expected $K"
expect grey sent $N
expect grey delivered $N
expect grey lost 0
expect grey pending 0
expect grey deferrals $K
# one more try per 450: the retried messages' tries add up to K more than their count
[[ $(( $(s retried_tries grey) - $(s retried grey) )) == "$K" ]] || fail "grey: tries of the retried messages do not add up to $K deferrals"
ok "grey: the retried messages' tries are K more than their count"
expect grey retry_left 0
[[ $(grep -c ',delivered,"after 2 tries' "$WORK/grey.csv") == "$K" ]] || { cat "$WORK/grey.csv"; fail "grey: the ledger CSV does not list $K messages delivered after 2 tries"; }
ok "grey: the ledger CSV lists the $K messages delivered after 2 tries"
srv_stop

# 2. A lock window: for the server's first 3 s every delivery gets 451 at the end of
# data; those attempts are "deferred" in the ledger, and sent again until they pass.
srv_start --set users.count=20 --set fault.store.lock_windows="3s every 1h"
soak lock 30 --rate 20
strikes=$(grep -c 'Mailbox temporarily locked' "$WORK/server.log")
[[ $strikes -gt 0 ]] || fail "lock: no delivery met the lock window"
expect lock delivered 30
expect lock lost 0
expect lock deferrals "$strikes"
expect lock deferred_attempts "$strikes"
[[ $(( $(s retried_tries lock) - $(s retried lock) )) == "$strikes" ]] || fail "lock: tries do not add up to the $strikes deferrals"
ok "lock: $strikes deferrals, every one a further try, all delivered"
srv_stop

# 3. A 550 at RCPT is a bounce: counted, never retried.
srv_start --set users.count=20 --set fault.smtp.rcpt.kind=5xx --set fault.smtp.rcpt.code=550 \
    --set fault.smtp.rcpt.every=1 --set fault.smtp.rcpt.max=3
soak bounce 20
expect bounce bounced 3
expect bounce deferrals 0
expect bounce delivered 20
expect bounce retried 0
srv_stop
echo "t_retry: all checks passed"
