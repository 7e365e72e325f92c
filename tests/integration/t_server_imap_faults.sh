#!/usr/bin/env bash
# The reference server's IMAP faults, each seen by independent clients (curl, and
# imap_raw.py for IDLE): an EXPUNGE answered but not done leaves the message for
# the next session; an IDLE that pushes nothing still shows the message at NOOP; a
# fetched message served again under a new UID has the same bytes; a delayed FETCH
# answers late but right; a STORE refused after it set its flags leaves them for
# an EXPUNGE. Each fault is logged.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
command -v curl >/dev/null && command -v python3 >/dev/null || { echo "skip: needs curl and python3"; exit 77; }
RAW=$(dirname "$0")/imap_raw.py

printf 'a@test.local pw-a\nb@test.local pw-b\n' >"$WORK/users"
printf 'Subject: one\r\n\r\nbody one\r\n' >"$WORK/m1.eml"
uids() { curl_imap INBOX "$1" "$2" -X "UID SEARCH ALL" | tr -d '\r' | sed -n 's/^\* SEARCH *//p'; }
base=(--users "$WORK/users" --set server.received=no)

# undone: "* 1 EXPUNGE" and OK, yet the message is there for the next session and POP3.
srv_start "${base[@]}" --set fault.imap.expunge.kind=undone --set fault.imap.expunge.every=1 \
    --set fault.imap.expunge.max=1
curl_send "$WORK/m1.eml" a@test.local || fail "send"
curl_imap INBOX a@test.local pw-a -X 'UID STORE 1 +FLAGS.SILENT (\Deleted)' >/dev/null || fail "STORE"
out=$(curl_imap INBOX a@test.local pw-a -X 'UID EXPUNGE 1' | tr -d '\r') || fail "UID EXPUNGE"
[[ $out == '* 1 EXPUNGE' ]] || fail "undone: the EXPUNGE was not answered as done: [$out]"
[[ $(uids a@test.local pw-a) == 1 ]] || fail "undone: the message is gone: [$(uids a@test.local pw-a)]"
[[ $(curl_pop "" a@test.local pw-a | wc -l) -eq 1 ]] || fail "undone: POP3 does not see the message"
grep -q 'Error: Mailbox INBOX: expunge of 1 messages answered but not done' "$WORK/server.log" || fail "undone: not logged"
# max = 1: the next EXPUNGE is done.
curl_imap INBOX a@test.local pw-a -X 'UID STORE 1 +FLAGS.SILENT (\Deleted)' >/dev/null || fail "STORE 2"
curl_imap INBOX a@test.local pw-a -X 'UID EXPUNGE 1' >/dev/null || fail "UID EXPUNGE 2"
[[ -z $(uids a@test.local pw-a) ]] || fail "undone: max = 1 but the second EXPUNGE was not done either"
ok "undone: EXPUNGE answered, message still there (IMAP and POP3), logged; max respected"
srv_stop

# applied: the STORE is answered NO, yet its \Deleted is set: UID EXPUNGE removes the message.
srv_start "${base[@]}" --set fault.imap.store.kind=applied --set fault.imap.store.every=1
curl_send "$WORK/m1.eml" a@test.local || fail "send"
curl_imap INBOX a@test.local pw-a -X 'UID STORE 1 +FLAGS.SILENT (\Deleted)' >/dev/null 2>"$WORK/store.err" \
    && fail "applied: the STORE was answered OK"
out=$(curl_imap INBOX a@test.local pw-a -X 'UID EXPUNGE 1' | tr -d '\r') || fail "applied: UID EXPUNGE"
[[ $out == '* 1 EXPUNGE' ]] || fail "applied: the refused STORE's flag was not there to expunge: [$out]"
[[ -z $(uids a@test.local pw-a) ]] || fail "applied: the message is still there: [$(uids a@test.local pw-a)]"
grep -q 'Error: Mailbox INBOX: store answered NO after its flags were written' "$WORK/server.log" \
    || fail "applied: not logged"
ok "applied: STORE refused, its \\Deleted set all the same, expunged, logged"
srv_stop

# silent: no EXISTS during IDLE, NOOP shows the message.
srv_start "${base[@]}" --set fault.imap.idle.kind=silent --set fault.imap.idle.every=1
python3 "$RAW" idle-silent "$IMAP_PORT" b@test.local pw-b "$SMTP_PORT" >"$WORK/idle.out" 2>&1 \
    || { cat "$WORK/idle.out"; fail "silent IDLE"; }
grep -q 'Warning: IDLE: mailbox notifications lost' "$WORK/server.log" || fail "silent: not logged"
ok "silent: nothing pushed during IDLE, NOOP shows the new message, logged"
srv_stop

# again: a fetched message comes back under a new UID with the same bytes.
srv_start "${base[@]}" --set fault.imap.fetch.kind=again --set fault.imap.fetch.every=1 \
    --set fault.imap.fetch.max=1
curl_send "$WORK/m1.eml" a@test.local || fail "send"
curl_imap "INBOX;UID=1" a@test.local pw-a >"$WORK/got1" && cmp -s "$WORK/got1" "$WORK/m1.eml" || fail "again: first fetch"
[[ $(uids a@test.local pw-a) == 2 ]] || fail "again: UIDs after the fetch: [$(uids a@test.local pw-a)], want 2"
curl_imap "INBOX;UID=2" a@test.local pw-a >"$WORK/got2" && cmp -s "$WORK/got2" "$WORK/m1.eml" || fail "again: UID 2 is not the same message"
grep -q 'Warning: Mailbox INBOX: Expunged message reappeared, giving a new UID (old uid=1, new uid=2, ' \
    "$WORK/server.log" || fail "again: not logged"
ok "again: the fetched message is served again as UID 2, byte-exact, logged"
srv_stop

# delay: the FETCH is answered at least the delay later, and right.
srv_start "${base[@]}" --set fault.imap.fetch.kind=delay --set fault.imap.fetch.delay=1500ms \
    --set fault.imap.fetch.every=1
curl_send "$WORK/m1.eml" a@test.local || fail "send"
t=$(curl_imap "INBOX;UID=1" a@test.local pw-a -o "$WORK/got1" -w '%{time_total}') || fail "delayed fetch"
cmp -s "$WORK/got1" "$WORK/m1.eml" || fail "delay: wrong bytes"
awk -v t="$t" 'BEGIN { exit !(t >= 1.5) }' || fail "delay: answered after ${t}s, before the 1.5 s delay"
grep -q 'fetch from .*: reply delayed 1500ms' "$WORK/server.log" || fail "delay: not logged"
ok "delay: FETCH answered after ${t}s (>= 1.5 s), byte-exact, logged"
srv_stop
echo "all IMAP fault tests passed"
