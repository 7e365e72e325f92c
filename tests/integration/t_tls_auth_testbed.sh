#!/usr/bin/env bash
# TLS and AUTH against the real testbed: STARTTLS + AUTH on submission with POP3S,
# implicit SMTPS + CRAM-MD5 with STLS + APOP, AUTH LOGIN with POP3 AUTH PLAIN, all
# clean; session resumption; an untrusted certificate fails with verification on
# and works with it off; a wrong password lands in its class.
source "$(dirname "$0")/lib.sh"
testbed_up maildir 20

soak() {   # name, then run arguments
    local name=$1
    shift
    "$MAILSOAK" run --users "$USERS_FILE" --senders 4 --readers 2 --messages 40 --duration 20s --drain 10s \
        --json "$WORK/$name.json" "$@" >"$WORK/$name.txt" 2>&1
}
clean() {   # name, expected handshakes at least
    check "$1: 40 sent" eq "$(jget "$WORK/$1.json" .summary.sent)" 40
    check "$1: 40 delivered" eq "$(jget "$WORK/$1.json" .summary.delivered)" 40
    check "$1: no errors" eq "$(jget "$WORK/$1.json" .summary.errors)" 0
    check "$1: TLS handshakes counted and timed" gt "$(jget "$WORK/$1.json" .summary.tls_handshakes)" "$2"
}
A=127.0.0.1
soak submission --smtp $A:$SUBMISSION_PORT --smtp-tls starttls --smtp-tls-ca "$CA_CERT" --smtp-auth plain \
    --pop3 $A:$POP3S_PORT --pop3-tls implicit --pop3-tls-ca "$CA_CERT"
clean submission 20
check "submission: AUTH timed" gt "$(jget "$WORK/submission.json" '.summary.latency["smtp.auth"].count')" 0
soak smtps --smtp $A:$SMTPS_PORT --smtp-tls implicit --smtp-tls-ca "$CA_CERT" --smtp-auth cram-md5 \
    --pop3 $A:$POP3_PORT --pop3-tls stls --pop3-tls-ca "$CA_CERT" --pop3-auth apop
clean smtps 20
soak login --smtp $A:$SUBMISSION_PORT --smtp-tls starttls --smtp-tls-ca "$CA_CERT" --smtp-auth login \
    --pop3 $A:$POP3_PORT --pop3-auth plain
clean login 5

# Resumption: later connections of a worker resume the session.
soak resume --smtp $A:$SMTPS_PORT --smtp-tls implicit --smtp-tls-ca "$CA_CERT" --set smtp.tls_resume=yes --smtp-auth plain \
    --readers 0 --drain 0s
check "resume: sessions resumed" gt "$(jget "$WORK/resume.json" .summary.tls_resumed)" 0

# Untrusted certificate (no CA given, verification on): the preflight check says
# so and stops; past it, every session fails in TLS.
"$MAILSOAK" run --users "$USERS_FILE" --smtp $A:$SMTPS_PORT --smtp-tls implicit --readers 0 2>"$WORK/check.txt"
check "untrusted: preflight exits 3" eq "$?" 3
check "untrusted: preflight names the certificate" grep -q "certificate" "$WORK/check.txt"
soak untrusted --no-check --smtp $A:$SMTPS_PORT --smtp-tls implicit --readers 0 --duration 3s --drain 0s
check "untrusted: nothing sent" eq "$(jget "$WORK/untrusted.json" .summary.sent)" 0
check "untrusted: smtp_tls_tls counted" gt "$(jget "$WORK/untrusted.json" '.summary.errors_by_class.smtp_tls_tls // 0')" 0
check "untrusted: the reason is kept" grep -q "certificate verify failed" <(jget "$WORK/untrusted.json" '.summary.error_examples.smtp_tls_tls[0]')
soak unverified --smtp $A:$SMTPS_PORT --smtp-tls implicit --set smtp.tls_verify=no --smtp-auth plain \
    --readers 0 --drain 0s
check "verification off: 40 sent" eq "$(jget "$WORK/unverified.json" .summary.sent)" 40

# A wrong password for every user (Dovecot answers a failed login after 2 s).
sed 's/ .*/ wrong/' "$USERS_FILE" >"$WORK/badusers"
"$MAILSOAK" run --users "$WORK/badusers" --senders 2 --readers 2 --duration 10s --drain 0s \
    --smtp $A:$SUBMISSION_PORT --smtp-tls starttls --smtp-tls-ca "$CA_CERT" --smtp-auth plain \
    --pop3 $A:$POP3_PORT --no-check --json "$WORK/bad.json" >/dev/null 2>&1
check "wrong password: smtp_auth_535" gt "$(jget "$WORK/bad.json" '.summary.errors_by_class.smtp_auth_535 // 0')" 0
check "wrong password: pop3_pass_auth" gt "$(jget "$WORK/bad.json" '.summary.errors_by_class.pop3_pass_auth // 0')" 0
check "wrong password: nothing sent" eq "$(jget "$WORK/bad.json" .summary.sent)" 0
finish
