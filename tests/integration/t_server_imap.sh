#!/usr/bin/env bash
# The reference server's IMAP against every store, driven by independent clients:
# curl (LOGIN, SELECT, UID SEARCH, UID FETCH byte-exact, UID STORE, UID EXPUNGE,
# STARTTLS and IMAPS), and imap_raw.py for what curl cannot do (IDLE while a
# message is delivered, literals of both kinds, the bounds of a command).
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
command -v curl >/dev/null && command -v python3 >/dev/null && command -v openssl >/dev/null \
    || { echo "skip: needs curl, python3 and openssl"; exit 77; }
RAW=$(dirname "$0")/imap_raw.py

printf 'a@test.local pw-a\nb@test.local pw-b\n' >"$WORK/users"
printf 'Subject: one\r\nFrom: Ann <ann@test.local>\r\nTo: a@test.local\r\n\r\n.leading dot\r\n..two dots\r\nFrom the start\r\n\xc3\xa9t\xc3\xa9 8bit\r\n%s\r\nlast\r\n' \
    "$(head -c 3000 /dev/zero | tr '\0' x)" >"$WORK/m1.eml"
printf 'Subject: two\r\n\r\nshort\r\n' >"$WORK/m2.eml"
printf 'Subject: three\r\n\r\n' >"$WORK/m3.eml"

# uids USER PASS [SEARCH KEY]: the UIDs UID SEARCH answers, space-separated.
uids() {
    curl_imap INBOX "$1" "$2" -X "UID SEARCH ${3:-ALL}" | tr -d '\r' | sed -n 's/^\* SEARCH *//p'
}

for store in memory maildir mbox sqlite; do
    echo "== $store"
    rm -rf "$WORK/store"
    args=(--users "$WORK/users" --store "$store" --store-dir "$WORK/store" --set server.received=no)
    srv_start "${args[@]}"
    for m in m1 m2 m3; do curl_send "$WORK/$m.eml" a@test.local || fail "$store: curl send $m"; done
    [[ $(uids a@test.local pw-a) == "1 2 3" ]] || fail "$store: UID SEARCH ALL: [$(uids a@test.local pw-a)]"
    for i in 1 2 3; do
        curl_imap "INBOX;UID=$i" a@test.local pw-a >"$WORK/got$i" || fail "$store: UID FETCH $i"
        cmp -s "$WORK/got$i" "$WORK/m$i.eml" || fail "$store: UID FETCH $i is not byte-exact"
    done
    ok "$store: three messages, UIDs 1 2 3, bodies byte-exact"

    size=$(curl_imap INBOX a@test.local pw-a -X 'UID FETCH 1 (RFC822.SIZE)' | tr -d '\r')
    [[ $size == "* 1 FETCH (UID 1 RFC822.SIZE $(stat -c %s "$WORK/m1.eml"))" ]] || fail "$store: RFC822.SIZE: $size"
    env=$(curl_imap INBOX a@test.local pw-a -X 'UID FETCH 1 (ENVELOPE BODYSTRUCTURE)' | tr -d '\r')
    [[ $env == *'ENVELOPE (NIL "one" (("Ann" NIL "ann" "test.local"))'* ]] || fail "$store: ENVELOPE: $env"
    [[ $env == *'BODYSTRUCTURE ("TEXT" "PLAIN" ("CHARSET" "us-ascii") NIL NIL "7BIT" '* ]] || fail "$store: BODYSTRUCTURE: $env"
    hdr=$(curl_imap INBOX a@test.local pw-a -X 'UID FETCH 2 (BODY.PEEK[HEADER.FIELDS (SUBJECT)])' -v 2>&1 | tr -d '\r')
    [[ $hdr == *'BODY[HEADER.FIELDS (SUBJECT)] {16}'* ]] || fail "$store: HEADER.FIELDS: $hdr"
    ok "$store: RFC822.SIZE, ENVELOPE, BODYSTRUCTURE, HEADER.FIELDS"

    # curl's fetches above were BODY[] (not PEEK): 1 2 3 are \Seen; a new one is not.
    curl_send "$WORK/m2.eml" a@test.local || fail "$store: curl send 4"
    [[ $(uids a@test.local pw-a UNSEEN) == "4" ]] || fail "$store: UNSEEN: [$(uids a@test.local pw-a UNSEEN)]"
    ok "$store: BODY[] sets \\Seen, UNSEEN finds the new message (UID 4)"

    # \Deleted + UID EXPUNGE of 2 only: the others keep their UIDs and bytes.
    out=$(curl_imap INBOX a@test.local pw-a -X 'UID STORE 2,4 +FLAGS (\Deleted)' | tr -d '\r')
    [[ $out == *'* 2 FETCH (UID 2 FLAGS (\Seen \Deleted))'* ]] || fail "$store: STORE: $out"
    out=$(curl_imap INBOX a@test.local pw-a -X 'UID EXPUNGE 2' | tr -d '\r')
    [[ $out == '* 2 EXPUNGE' ]] || fail "$store: UID EXPUNGE 2 answered [$out]"
    [[ $(uids a@test.local pw-a) == "1 3 4" ]] || fail "$store: after UID EXPUNGE 2: [$(uids a@test.local pw-a)]"
    curl_imap "INBOX;UID=3" a@test.local pw-a >"$WORK/got3" && cmp -s "$WORK/got3" "$WORK/m3.eml" \
        || fail "$store: UID 3 changed after another was expunged"
    out=$(curl_imap INBOX a@test.local pw-a -X 'EXPUNGE' | tr -d '\r')
    [[ $out == '* 3 EXPUNGE' ]] || fail "$store: EXPUNGE of the \\Deleted UID 4 answered [$out]"
    [[ $(uids a@test.local pw-a) == "1 3" ]] || fail "$store: after EXPUNGE: [$(uids a@test.local pw-a)]"
    [[ $(curl_pop "" a@test.local pw-a | wc -l) -eq 2 ]] || fail "$store: POP3 does not see the expunges"
    ok "$store: UID STORE \\Deleted, UID EXPUNGE and EXPUNGE remove exactly those (POP3 agrees)"

    python3 "$RAW" idle "$IMAP_PORT" b@test.local pw-b "$SMTP_PORT" >"$WORK/idle.out" 2>&1 \
        || { cat "$WORK/idle.out"; fail "$store: IDLE push"; }
    ok "$store: a delivery during IDLE is pushed as EXISTS"

    curl_imap INBOX a@test.local wrong -v >"$WORK/curl.out" 2>&1 && fail "$store: wrong password accepted"
    grep -q 'NO \[AUTHENTICATIONFAILED\]' "$WORK/curl.out" || fail "$store: wrong password without [AUTHENTICATIONFAILED]"
    srv_stop
done

# Literals and the bounds of a command, then TLS: IMAPS and STARTTLS.
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 1 -keyout "$WORK/key.pem" \
    -out "$WORK/cert.pem" >/dev/null 2>&1 || fail "openssl could not make a certificate"
srv_start --users "$WORK/users" --set server.received=no --listen-imaps 127.0.0.1:0 --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem"
[[ -n $IMAPS_PORT ]] || fail "no imaps= in the READY line"
python3 "$RAW" literals "$IMAP_PORT" a@test.local pw-a >"$WORK/lit.out" 2>&1 || { cat "$WORK/lit.out"; fail "literals"; }
! grep -q '^FAKE: injected' "$WORK/server.log" || fail "a user name's newline reached the log"
grep -q 'user=<(control bytes)>' "$WORK/server.log" || fail "the refused control-byte login is not logged"
ok "synchronising and LITERAL+ literals; too long a literal or line refused; control bytes kept out of the log"
curl_send "$WORK/m1.eml" a@test.local || fail "curl send over TLS test"
curl -sS --max-time 10 -k "imaps://127.0.0.1:$IMAPS_PORT/INBOX;UID=1" -u a@test.local:pw-a >"$WORK/tls1" \
    && cmp -s "$WORK/tls1" "$WORK/m1.eml" || fail "IMAPS fetch"
curl -sS --max-time 10 -k --ssl-reqd "imap://127.0.0.1:$IMAP_PORT/INBOX;UID=1" -u a@test.local:pw-a >"$WORK/tls2" \
    && cmp -s "$WORK/tls2" "$WORK/m1.eml" || fail "STARTTLS fetch"
ok "IMAPS and STARTTLS fetch byte-exact"
srv_stop
echo "all IMAP server tests passed"
