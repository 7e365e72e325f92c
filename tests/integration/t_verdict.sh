#!/usr/bin/env bash
# The verdict's inputs that no other test makes: an HTTP server (mailsoak probe's
# own listener) given as the SMTP and as the POP3 target answers no greeting; every
# session still waiting for it when the run stops is an error of its stage
# (smtp_banner_unanswered, pop3_banner_unanswered), not a clean "sent 0, errors 0".
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/probe_lib.sh"
command -v jq >/dev/null || { echo "skip: needs jq" >&2; exit 77; }

: >"$WORK/empty.log"
printf '[server]\nlog = %s\n' "$WORK/empty.log" >"$WORK/probe.conf"
start_probe HTTP 127.0.0.1:0 token "" "$WORK/probe.conf"
trap 'stop_pid "$PROBE_PID"; cleanup' EXIT
http=${HTTP#http://}

timeout 60 "$MAILSOAK" run --no-check --smtp "$http" --senders 3 --readers 0 --duration 2s \
    --json "$WORK/smtp.json" >"$WORK/smtp.txt" 2>"$WORK/smtp.err"
check "an HTTP server as SMTP target: sent 0" eq "$(jget "$WORK/smtp.json" .summary.sent)" 0
check "each of the 3 senders waiting for a greeting is an error" \
    eq "$(jget "$WORK/smtp.json" .summary.errors_by_class.smtp_banner_unanswered)" 3
check "the table shows the class" grep -q "smtp_banner_unanswered *3" "$WORK/smtp.txt"

timeout 60 "$MAILSOAK" run --no-check --pop3 "$http" --senders 0 --readers 2 --duration 2s --drain 1s \
    --json "$WORK/pop3.json" >"$WORK/pop3.txt" 2>"$WORK/pop3.err"
check "an HTTP server as POP3 target: read 0" eq "$(jget "$WORK/pop3.json" .summary.read)" 0
check "each of the 2 readers waiting for a greeting is an error" \
    eq "$(jget "$WORK/pop3.json" .summary.errors_by_class.pop3_banner_unanswered)" 2
finish
