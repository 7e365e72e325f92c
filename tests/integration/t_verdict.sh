#!/usr/bin/env bash
# The verdict and the gates on real runs, each failing gate with its exit status and
# its line in the verdict: an HTTP server (mailsoak probe's own listener) given as
# the SMTP target answers no greeting, every sender still waiting when the run stops
# is an error (smtp_banner_unanswered) and the sent gate fails (exit 4); as the POP3
# target, pop3_banner_unanswered. Against the reference server with its faults:
# refused logins read nothing (read gate, exit 4); mail lost, duplicated and
# corrupted by the store (each its gate, exit 4, a duplicate's id in the verdict); a
# sweep too short to settle (settled and proven gates, exit 4, UNPROVEN and the
# remedy); a delayed EHLO over its latency bound (exit 5); RCPT refusals over the
# error share (exit 5), tolerated by the allow-list with their reason (exit 0) while
# a class not on it fails (exit 5); integrity winning over QoS (exit 4); a clean run
# passing the SPECmail2001 preset (exit 0); most SMTP sessions refused at the banner
# named in the verdict beside a proven ledger; a bad gate line (exit 2).
# Each run: 20 users, <= 8 s, <= 120 messages.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"
[[ -x $MAILSOAK ]] || { echo "no $MAILSOAK: run make"; exit 77; }
command -v jq >/dev/null || { echo "skip: needs jq" >&2; exit 77; }

# soak NAME WANT_RC [server args...] -- [mailsoak args...]: one bounded run against a
# fresh reference server; its exit status must be WANT_RC. Table in NAME.table, JSON
# in NAME.json.
soak() {
    local name=$1 want=$2 rc
    shift 2
    local sargs=() margs=()
    while (($#)) && [[ $1 != -- ]]; do sargs+=("$1"); shift; done
    (($#)) && shift
    margs=("$@")
    srv_start --set users.count=20 --set server.seed=7 "${sargs[@]}"
    timeout 60 "$MAILSOAK" run --no-check --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" \
        --set users.count=20 --senders 4 --readers 2 --duration 2s --drain 3s \
        --set run.sweep_timeout=3s --settle 1s --set smtp.timeout=2s --set pop3.timeout=2s \
        --messages 60 --seed 1 --json "$WORK/$name.json" "${margs[@]}" >"$WORK/$name.table" 2>"$WORK/$name.err"
    rc=$?
    srv_stop
    [[ $rc == "$want" ]] || { cat "$WORK/$name.table" "$WORK/$name.err"; fail "$name: exit $rc, want $want"; }
    [[ $(jq -r .verdict.gates.exit_status "$WORK/$name.json") == "$want" ]] ||
        fail "$name: the JSON's verdict.gates.exit_status is not $want"
}
# has NAME TEXT: the verdict (the table's last section) holds this line.
has() {
    sed -n '/^verdict/,$p' "$WORK/$1.table" | grep -qF -- "$2" ||
        { sed -n '/^verdict/,$p' "$WORK/$1.table"; fail "$1: no verdict line '$2'"; }
}
j() { jq -r "$2" "$WORK/$1.json"; }

# An HTTP server as the SMTP target, then as the POP3 target.
: >"$WORK/empty.log"
"$MAILSOAK" probe --listen 127.0.0.1:0 --token t --set "server.log=$WORK/empty.log" 2>"$WORK/probe.err" &
PROBE_PID=$!
trap 'stop_pid "$PROBE_PID"; cleanup' EXIT
for _ in $(seq 100); do
    url=$(grep -o 'http://[^ ]*/metrics' "$WORK/probe.err") && break
    sleep 0.05
done
[[ -n ${url:-} ]] || { cat "$WORK/probe.err"; fail "the probe did not start"; }
http=${url#http://}
http=${http%/metrics}
timeout 60 "$MAILSOAK" run --no-check --smtp "$http" --senders 3 --readers 0 --duration 2s \
    --json "$WORK/http-smtp.json" >"$WORK/http-smtp.table" 2>&1
rc=$?
[[ $rc == 4 ]] || { cat "$WORK/http-smtp.table"; fail "HTTP as SMTP target: exit $rc, want 4"; }
[[ $(j http-smtp .summary.sent) == 0 ]] || fail "HTTP as SMTP target: something was sent"
[[ $(j http-smtp .summary.errors_by_class.smtp_banner_unanswered) == 3 ]] ||
    fail "HTTP as SMTP target: not 3 x smtp_banner_unanswered: $(j http-smtp -c .summary.errors_by_class)"
grep -q "smtp_banner_unanswered *3" "$WORK/http-smtp.table" || fail "the table does not show the class"
has http-smtp "FAILED: nothing was sent (3 errors, most smtp_banner_unanswered)"
has http-smtp "FAIL sent 0, must be > 0"
has http-smtp "no message was accepted: check smtp.target"
ok "HTTP server as SMTP target: 3 smtp_banner_unanswered, the sent gate fails, exit 4"
timeout 60 "$MAILSOAK" run --no-check --pop3 "$http" --senders 0 --readers 2 --duration 2s --drain 1s \
    --json "$WORK/http-pop3.json" >"$WORK/http-pop3.table" 2>&1
[[ $(j http-pop3 .summary.read) == 0 ]] || fail "HTTP as POP3 target: something was read"
[[ $(j http-pop3 .summary.errors_by_class.pop3_banner_unanswered) == 2 ]] ||
    fail "HTTP as POP3 target: not 2 x pop3_banner_unanswered: $(j http-pop3 -c .summary.errors_by_class)"
ok "HTTP server as POP3 target: 2 pop3_banner_unanswered"

# Every login refused: nothing read of what was accepted.
soak refused 4 --set fault.pop3.pass.kind=5xx --set fault.pop3.pass.every=1 --
[[ $(j refused .summary.read) == 0 && $(j refused .summary.sent) -gt 0 ]] || fail "refused: sent/read"
has refused "FAIL read 0, must be > 0"
has refused "FAILED: none of the"
has refused "check pop3.target and the users' passwords"
[[ $(j refused '.verdict.gates.failed | index("read") != null') == true ]] || fail "refused: read not among the failed gates"
ok "refused logins: read 0, the read gate fails, exit 4"

# The store loses 2, duplicates 1, corrupts 1.
soak damaged 4 --set fault.store.lose_every=1 --set fault.store.lose_max=2 \
    --set fault.store.duplicate_every=1 --set fault.store.duplicate_after=5 --set fault.store.duplicate_max=1 \
    --set fault.store.corrupt_every=1 --set fault.store.corrupt_after=10 --set fault.store.corrupt_max=1 --
has damaged "FAILED: 2 lost, 1 duplicated, 1 corrupted of"
has damaged "FAIL lost 2, must be = 0"
has damaged "FAIL duplicated 1, must be = 0"
has damaged "FAIL corrupted 1, must be = 0"
dup=$(j damaged '.summary.duplicated_examples[0].id')
[[ $dup == "$(j damaged .run_id)"-* ]] || fail "damaged: no duplicated example: $dup"
grep -qF "$dup" "$WORK/damaged.table" || fail "damaged: the table does not name the duplicate $dup"
ok "lost 2, duplicated 1 ($dup), corrupted 1: three gates fail, exit 4"

# A sweep that cannot settle (settle longer than its time) with every RETR 200 ms
# slow: most mail unread at the end, unproven, and said so.
soak unsettled 4 --set fault.pop3.retr.kind=delay --set fault.pop3.retr.delay=200ms --set fault.pop3.retr.every=1 -- \
    --readers 1 --drain 0s --settle 30s --set run.sweep_timeout=1s
[[ $(j unsettled .summary.lost) == 0 && $(j unsettled .summary.pending_unsettled) -gt 0 ]] ||
    fail "unsettled: lost $(j unsettled .summary.lost), pending_unsettled $(j unsettled .summary.pending_unsettled)"
has unsettled "UNPROVEN: "
has unsettled '"lost 0" says nothing about them'
has unsettled "FAIL settled: no, must be yes"
has unsettled "FAIL proven "
has unsettled "give the sweep"
[[ $(j unsettled .verdict.state) == unproven && $(j unsettled '.verdict.more_sweep_s > 30') == true ]] ||
    fail "unsettled: $(j unsettled -c '.verdict | {state, more_sweep_s}')"
ok "a sweep that cannot settle: UNPROVEN with the sweep time it needs, settled and proven fail, exit 4"

# EHLO delayed 300 ms, the bound 100 ms: a quality-of-service gate alone.
soak slow-ehlo 5 --set fault.smtp.ehlo.kind=delay --set fault.smtp.ehlo.delay=300ms --set fault.smtp.ehlo.every=1 -- \
    --gate-latency 'smtp.ehlo p95 100ms'
has slow-ehlo "FAILED (exit 5: quality of service)"
grep -qE "FAIL smtp.ehlo p95 [0-9]+ ms, must be <= 100 ms" "$WORK/slow-ehlo.table" || fail "slow-ehlo: no latency line"
v=$(j slow-ehlo '.verdict.gates.results[] | select(.name == "smtp.ehlo p95") | .value')
awk -v v="$v" 'BEGIN { exit !(v >= 300) }' || fail "slow-ehlo: p95 $v ms, the server delayed 300"
ok "EHLO p95 $v ms over 100 ms: exit 5"

# Every other RCPT refused with 450.
A=(--set fault.smtp.rcpt.kind=4xx --set fault.smtp.rcpt.every=2)
# (the share is of session attempts, and idle readers open many: one reader, 0.2 %)
soak errors 5 "${A[@]}" -- --readers 1 --gate-errors 0.002
has errors "FAIL errors "
has errors ", must be <= 0.2 %"
soak allowed 0 "${A[@]}" -- --set gate.error_classes=allowed --gate-allow 'smtp_rcpt_450: greylisting, retried by MTAs'
has allowed "ok   class smtp_rcpt_450: "
has allowed "allowed (greylisting, retried by MTAs)"
soak not-allowed 5 "${A[@]}" --set fault.pop3.stat.kind=4xx --set fault.pop3.stat.every=3 -- \
    --set gate.error_classes=allowed --gate-allow 'smtp_rcpt_450: greylisting'
grep -qE "FAIL class pop3_stat_[a-z_]+: [0-9]+, not allowed" "$WORK/not-allowed.table" ||
    { sed -n '/^verdict/,$p' "$WORK/not-allowed.table"; fail "not-allowed: no line for the POP3 class"; }
ok "RCPT 450s: over the error share (exit 5), allowed with their reason (exit 0), another class not allowed (exit 5)"

# Integrity and QoS both fail: integrity's status.
soak both 4 --set fault.store.lose_every=1 --set fault.store.lose_max=1 "${A[@]}" -- --readers 1 --gate-errors 0.002
has both "FAIL lost 1, must be = 0"
has both "FAIL errors "
ok "integrity and QoS gates both failing: exit 4"

# A clean run passes SPECmail2001's quality of service.
soak spec 0 -- --gate specmail2001
has spec "PROVEN: all "
has spec "gates      passed"
[[ $(j spec '[.verdict.gates.results[] | select(.name | test("^(smtp|pop3)\\.[a-z]+ p95$"))] | length') -ge 10 &&
   $(j spec '[.verdict.gates.results[] | select(.name == "delivery p95" or .name == "errors")] | length') == 2 ]] ||
    fail "spec: $(j spec -c '[.verdict.gates.results[].name]')"
[[ $(j spec '[.verdict.gates.results[] | select(.name == "smtp.message p95")] | length') == 0 ]] ||
    fail "spec: smtp.message is no command class"
ok "a clean run passes the SPECmail2001 preset: every command class p95, delivery p95, errors"
[[ $(j spec .verdict.session_errors) == null ]] || fail "spec: a clean run has a sessions line: $(j spec .verdict.session_errors)"

# Every SMTP session after the tenth refused at the banner: whatever the ledger proves
# of the mail that did go through, the verdict says the load carried was not the one
# asked for (the default gates pass: the errors gate is off unless set).
soak refused 0 --set fault.smtp.banner.kind=421 --set fault.smtp.banner.every=1 --set fault.smtp.banner.after=10 --
has refused "  sessions   "
sed -n '/^verdict/,$p' "$WORK/refused.table" | grep -qE "^  sessions   [0-9]+ SMTP errors in [0-9]+ session attempts \([0-9]+ %; most smtp_banner_421, [0-9]+\): the load the server carried is not the load asked for" ||
    { sed -n '/^verdict/,$p' "$WORK/refused.table"; fail "refused: the sessions line does not say it"; }
jq -e '.verdict.session_error_share > 0.1 and (.verdict.session_errors | test("smtp_banner_421"))' "$WORK/refused.json" >/dev/null ||
    fail "refused: verdict.session_errors $(j refused .verdict.session_errors)"
has refused "raise the server's session limits"
ok "most SMTP sessions refused: the verdict says so beside its proof, with the class and the remedy"

# A gate line that does not parse: a setup error, nothing sent.
"$MAILSOAK" run --no-check --smtp 127.0.0.1:1 --readers 0 --gate-latency 'smtp 95 5s' >"$WORK/bad.out" 2>&1
rc=$?
[[ $rc == 2 ]] || { cat "$WORK/bad.out"; fail "a bad gate.latency: exit $rc, want 2"; }
grep -qF "gate.latency: 'smtp 95 5s': expected CLASS pNN DURATION" "$WORK/bad.out" || { cat "$WORK/bad.out"; fail "bad: no message"; }
ok "a bad gate.latency line: exit 2, named"
