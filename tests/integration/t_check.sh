#!/usr/bin/env bash
# t_check: `mailsoak check` against the real testbed (Postfix + Dovecot on loopback):
# every TLS and AUTH combination the testbed offers passes, and a wrong password, a closed
# port, an untrusted certificate and two classic misconfigurations each give exit 3 and
# their own line. Needs root (the testbed does); skips without it.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
testbed_up maildir 5
CONF=(-c "$TB/mailsoak.conf")
H=127.0.0.1
n=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# run_check NAME ARGS...: runs mailsoak check, leaves its output in $out and exit code in $rc.
run_check() {
	local name=$1
	shift
	n=$((n + 1))
	local t0=$SECONDS
	out=$(timeout 60 "$MAILSOAK" check "${CONF[@]}" "$@" 2>&1)
	rc=$?
	printf -- '--- %s (rc %d, %ds)\n%s\n' "$name" "$rc" $((SECONDS - t0)) "$out"
	# Bounded: 15 s per check at most, all checks at once.
	((SECONDS - t0 <= 20)) || fail "$name took $((SECONDS - t0)) s"
}

# expect_ok NAME NCHECKS ARGS...
expect_ok() {
	local name=$1 want=$2
	shift 2
	run_check "$name" "$@"
	[[ $rc -eq 0 ]] || fail "$name: exit $rc, expected 0"
	local oks
	oks=$(grep -c '^OK ' <<<"$out")
	[[ $oks -eq $want ]] || fail "$name: $oks OK lines, expected $want"
	grep -qx "$want checks\? passed" <<<"$out" || fail "$name: no summary line"
}

# expect_line NAME ERE: the last check printed a line matching ERE (whole line).
expect_line() {
	grep -Eqx -- "$2" <<<"$out" || fail "$1: no line matching: $2"
}

expect_problem() {
	local name=$1
	[[ $rc -eq 3 ]] || fail "$name: exit $rc, expected 3"
}

q() { sed 's/[][\.*^$()+?{}|]/\\&/g' <<<"$1"; }   # a literal inside an ERE

# ---- every combination the testbed offers, all good ----
expect_ok "plain SMTP, POP3 USER/PASS" 4
expect_line "plain" "OK smtp $(q "$H:$SMTP_PORT"): greeting, EHLO, no TLS, no AUTH, MAIL FROM and RCPT TO <user0000@test\.local> accepted, DATA answered 354 \(no message sent\)"
expect_line "plain" "OK pop3 $(q "$H:$POP3_PORT"): user0002@test\.local: greeting, no TLS, USER/PASS login, STAT: 0 messages, 0 bytes"

expect_ok "submission STARTTLS + AUTH PLAIN, POP3 STLS" 4 \
	--smtp "$H:$SUBMISSION_PORT" --smtp-tls starttls --smtp-tls-ca "$CA_CERT" --smtp-auth plain \
	--pop3 "$H:$POP3_PORT" --pop3-tls stls --pop3-tls-ca "$CA_CERT"
expect_line "submission" "OK smtp $(q "$H:$SUBMISSION_PORT"): greeting, EHLO, STARTTLS \(TLSv1\.[23], certificate verified\), AUTH PLAIN as user0000@test\.local, .*"

expect_ok "SMTPS + AUTH LOGIN, POP3S + AUTH PLAIN" 4 \
	--smtp "$H:$SMTPS_PORT" --smtp-tls implicit --smtp-tls-ca "$CA_CERT" --smtp-auth login \
	--pop3 "$H:$POP3S_PORT" --pop3-tls implicit --pop3-tls-ca "$CA_CERT" --pop3-auth plain
expect_line "smtps" "OK smtp $(q "$H:$SMTPS_PORT"): greeting, EHLO, TLS \(TLSv1\.[23], certificate verified\), AUTH LOGIN as .*"
expect_line "pop3s" "OK pop3 $(q "$H:$POP3S_PORT"): user0004@test\.local: greeting, TLS \(TLSv1\.[23], certificate verified\), AUTH PLAIN login, .*"

expect_ok "CRAM-MD5, APOP, 5 users" 6 \
	--smtp "$H:$SUBMISSION_PORT" --smtp-tls starttls --smtp-tls-ca "$CA_CERT" --smtp-auth cram-md5 \
	--pop3-auth apop --sample 5
expect_line "cram-md5" "OK smtp .*AUTH CRAM-MD5 as user0000@test\.local, .*"

expect_ok "untrusted certificate, verification off" 2 \
	--smtp "$H:$SMTPS_PORT" --smtp-tls implicit --smtp-auth plain --set smtp.tls_verify=no \
	--pop3 "$H:$POP3S_PORT" --pop3-tls implicit --set pop3.tls_verify=no --sample 1
expect_line "verify off" "OK smtp .*TLS \(TLSv1\.[23], certificate not verified\).*"

# ---- problems, each with its own line ----
# Dovecot holds back its answer after failed logins from one address, longer after each
# (2 s, 4 s, ...), and curl's 5 s connect timeout covers SMTP AUTH: the SMTP refusal runs
# first and alone; our own POP3 exchange has the whole 15 s.
awk '{ if ($1 == "user0000@test.local" || $1 == "user0002@test.local") $2 = "wrong"; print }' \
	"$USERS_FILE" >"$WORK/users-wrong"
run_check "wrong password, SMTP AUTH" --users "$WORK/users-wrong" --set pop3.target= \
	--smtp "$H:$SUBMISSION_PORT" --smtp-tls starttls --smtp-tls-ca "$CA_CERT" --smtp-auth plain
expect_problem "wrong password, SMTP AUTH"
expect_line "wrong smtp" "smtp $(q "$H:$SUBMISSION_PORT"): user0000@test\.local: AUTH refused \(wrong password\?\): 535 .*"

run_check "wrong password, POP3" --users "$WORK/users-wrong" --set smtp.target=
expect_problem "wrong password, POP3"
expect_line "wrong pop3 first" "pop3 $(q "$H:$POP3_PORT"): user0000@test\.local: login refused \(wrong password\?\): -ERR .*"
expect_line "wrong pop3 middle" "pop3 $(q "$H:$POP3_PORT"): user0002@test\.local: login refused \(wrong password\?\): -ERR .*"
expect_line "right pop3 last" "OK pop3 $(q "$H:$POP3_PORT"): user0004@test\.local: .*"
expect_line "wrong summary" "2 of 3 checks found a problem"

# A loopback port nobody listens on: refused, not timed out.
closed=''
for p in $(shuf -i 20000-60000 -n 50); do
	if ! (exec 3<>"/dev/tcp/$H/$p") 2>/dev/null; then closed=$p; break; fi
done
[[ -n $closed ]] || { fail "no closed port found"; closed=1; }
run_check "closed port" --smtp "$H:$closed" --pop3 "$H:$closed" --sample 1
expect_problem "closed port"
expect_line "closed smtp" "smtp $(q "$H:$closed"): connection refused — is the server running\?"
expect_line "closed pop3" "pop3 $(q "$H:$closed"): connection refused — is the server running\?"

run_check "untrusted certificate" --smtp "$H:$SMTPS_PORT" --smtp-tls implicit --smtp-auth plain \
	--pop3 "$H:$POP3_PORT" --pop3-tls stls --sample 1
expect_problem "untrusted certificate"
expect_line "untrusted smtps" "smtp $(q "$H:$SMTPS_PORT"): certificate not trusted \(.+\): set smtp\.tls_ca or smtp\.tls_verify = no"
expect_line "untrusted stls" "pop3 $(q "$H:$POP3_PORT"): certificate not trusted \(.+\): set pop3\.tls_ca or pop3\.tls_verify = no"

run_check "AUTH without STARTTLS" --smtp "$H:$SUBMISSION_PORT" --smtp-auth plain --set pop3.target=
expect_problem "AUTH without STARTTLS"
expect_line "auth before tls" "smtp $(q "$H:$SUBMISSION_PORT"): the server offers AUTH only after STARTTLS: set smtp\.tls = starttls"

run_check "implicit TLS on a plaintext port" --smtp-tls implicit --set pop3.target=
expect_problem "implicit on plain"
expect_line "implicit on plain" "smtp $(q "$H:$SMTP_PORT"): TLS handshake failed: the server speaks plaintext on this port — set smtp\.tls = starttls or none"

run_check "submission without AUTH" --smtp "$H:$SUBMISSION_PORT" --smtp-tls starttls --smtp-tls-ca "$CA_CERT" --set pop3.target=
expect_problem "submission without AUTH"
expect_line "no auth" "smtp $(q "$H:$SUBMISSION_PORT"): RCPT TO <user0000@test\.local> refused: 554 .* — does the server want AUTH\? set smtp\.auth"

# ---- the checks delivered nothing ----
counts=$("$TOP/scripts/testbed" count --dir "$TB" 2>&1)
echo "--- testbed count: $counts"
grep -qx 'queue 0' <<<"$counts" && grep -qx 'store 0' <<<"$counts" || fail "the checks left mail behind: $counts"

echo "$n check runs, $failures failures"
finish
