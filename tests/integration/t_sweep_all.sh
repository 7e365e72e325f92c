#!/usr/bin/env bash
# t_sweep_all.sh: the sweep's closing pass, against the reference server. A clean
# run whose drain read everything still ends with one sweep pass, and that pass logs
# in to every mailbox the run sent mail to, owing or not: where a copy the server
# delivers again would land (t_duplicates_testbed.sh makes such copies on the real
# Postfix + Dovecot and counts them). run.sweep_all = no leaves the pass out.
# 20 users, 200 messages, a few seconds a run.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"
[[ -x $MAILSOAK ]] || { echo "no $MAILSOAK: run make"; exit 77; }
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }

soak() {   # soak NAME ARGS...: a clean run, every message read before the sweep
    local name=$1
    shift
    timeout 120 "$MAILSOAK" run --no-check --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" \
        --set users.count=20 --senders 2 --readers 2 --messages 200 --duration 30s --drain 20s \
        --set run.sweep_timeout=20s --interval 500ms --seed 9 --json "$WORK/$name.json" "$@" \
        >"$WORK/$name.table" 2>"$WORK/$name.err" || { tail -5 "$WORK/$name.err"; fail "$name: mailsoak run failed"; }
    local j="$WORK/$name.json"
    [[ $(jq -r '.summary.delivered == .summary.sent and .summary.sent == 200' "$j") == true ]] ||
        fail "$name: not every one of 200 messages delivered once: $(jq -c '.summary | {sent, delivered, duplicated, pending}' "$j")"
}

srv_start --set users.count=20
soak all
passes=$(jq '.summary.sweep_passes' "$WORK/all.json")
swept=$(jq '[.timeline[] | select(.phase == "sweep") | .pop3_sessions] | add // 0' "$WORK/all.json")
[[ $passes == 1 && $swept == 20 ]] || fail "closing pass: $passes passes, $swept sweep logins, want 1 and 20"
[[ $(jq -r '.summary.settled' "$WORK/all.json") == null ]] || fail "a clean run's settled is not null"
ok "a drain that read everything is followed by one pass over all 20 mailboxes sent mail"
soak owed --set run.sweep_all=no
passes=$(jq '.summary.sweep_passes' "$WORK/owed.json")
swept=$(jq '[.timeline[] | select(.phase == "sweep")] | length' "$WORK/owed.json")
[[ $passes == 0 && $swept == 0 ]] || fail "run.sweep_all = no: $passes passes, $swept sweep intervals, want none"
ok "run.sweep_all = no: no sweep after a drain that read everything"
echo "t_sweep_all: all checks passed"
