#!/usr/bin/env bash
# The same protocol tests against every store of mailsoak-server, driven by
# independent clients (swaks, curl, and a raw /dev/tcp session): delivery, unknown
# recipients, LIST sizes, byte-exact RETR of awkward bodies, UIDL, TOP, the mailbox
# lock ([IN-USE]), deletions that commit only at QUIT, and (file and SQL stores)
# mail that survives a restart.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
command -v swaks >/dev/null && command -v curl >/dev/null || { echo "skip: needs swaks and curl"; exit 77; }

printf 'a@test.local pw-a\nb@test.local pw-b\n' >"$WORK/users"

# Bodies that break naive servers: leading dots, a lone dot, "From " lines (mbox),
# ">From " (mboxrd), 8-bit bytes, a long line, and no blank line at the end.
printf 'Subject: one\r\nX-Test: 1\r\n\r\n.leading dot\r\n..two dots\r\n.\r\nFrom the start\r\n>From quoted\r\n\xc3\xa9t\xc3\xa9 8bit\r\n%s\r\nlast\r\n' \
    "$(head -c 3000 /dev/zero | tr '\0' x)" >"$WORK/m1.eml"
printf 'Subject: two\r\n\r\nshort\r\n' >"$WORK/m2.eml"
printf 'Subject: three\r\n\r\n' >"$WORK/m3.eml"

for store in memory maildir mbox sqlite; do
    echo "== $store"
    rm -rf "$WORK/store"
    args=(--users "$WORK/users" --store "$store" --store-dir "$WORK/store" --set server.received=no)
    srv_start "${args[@]}"

    # swaks: a normal message; an unknown recipient is refused with 550 at RCPT.
    swaks --server 127.0.0.1 --port "$SMTP_PORT" -f s@test.local -t b@test.local \
        --h-Subject swaks --body "from swaks" >"$WORK/swaks.out" 2>&1 || fail "$store: swaks send"
    grep -q '^<-  250 2.0.0 Ok: queued as' "$WORK/swaks.out" || fail "$store: no 250 after DATA"
    swaks --server 127.0.0.1 --port "$SMTP_PORT" -f s@test.local -t nobody@test.local \
        >"$WORK/swaks.out" 2>&1 && fail "$store: unknown recipient accepted"
    grep -q '^<\*\* 550 5.1.1' "$WORK/swaks.out" || fail "$store: unknown recipient not 550 5.1.1"
    ok "$store: swaks delivers; unknown user gets 550"

    for m in m1 m2 m3; do curl_send "$WORK/$m.eml" a@test.local || fail "$store: curl send $m"; done
    list=$(curl_pop "" a@test.local pw-a) || fail "$store: LIST"
    want=$(printf '1 %s\r\n2 %s\r\n3 %s\r\n' "$(stat -c %s "$WORK/m1.eml")" "$(stat -c %s "$WORK/m2.eml")" "$(stat -c %s "$WORK/m3.eml")")
    [[ $list == "$want" ]] || fail "$store: LIST sizes: got [$list] want [$want]"
    for i in 1 2 3; do
        curl_pop "$i" a@test.local pw-a >"$WORK/got$i" || fail "$store: RETR $i"
        cmp -s "$WORK/got$i" "$WORK/m$i.eml" || fail "$store: RETR $i is not byte-exact"
    done
    ok "$store: LIST sizes match, RETR byte-exact for 3 awkward messages"

    uidl=$(curl_pop "" a@test.local pw-a -X UIDL | tr -d '\r') || fail "$store: UIDL"
    [[ $(wc -l <<<"$uidl") -eq 3 && $(cut -d' ' -f2 <<<"$uidl" | sort -u | wc -l) -eq 3 ]] \
        || fail "$store: UIDL not 3 unique ids: $uidl"
    top=$(curl_pop "" a@test.local pw-a -X 'TOP 1 2' | tr -d '\r')
    [[ $top == $'Subject: one\nX-Test: 1\n\n.leading dot\n..two dots' ]] || fail "$store: TOP 1 2 gave [$top]"
    ok "$store: UIDL unique, TOP returns headers and 2 body lines"

    # The mailbox lock: a session holds it, a second login gets [IN-USE].
    pop_open
    pop_cmd "USER a@test.local"; pop_cmd "PASS pw-a"
    [[ $REPLY == +OK* ]] || fail "$store: raw login: $REPLY"
    curl_pop "" a@test.local pw-a -v >"$WORK/curl.out" 2>&1 && fail "$store: second login while locked succeeded"
    grep -q -- '-ERR \[IN-USE\]' "$WORK/curl.out" || fail "$store: second login did not get [IN-USE]"
    ok "$store: second login gets -ERR [IN-USE]"

    # DELE then a dropped connection: nothing is deleted, and the lock is released.
    pop_cmd "DELE 1"; [[ $REPLY == +OK* ]] || fail "$store: DELE: $REPLY"
    pop_cmd "STAT"; [[ $REPLY == "+OK 2 "* ]] || fail "$store: STAT after DELE: $REPLY"
    pop_close
    sleep 0.2
    n=$(curl_pop "" a@test.local pw-a | wc -l) || fail "$store: LIST after drop"
    [[ $n -eq 3 ]] || fail "$store: a dropped session deleted mail ($n left)"
    ok "$store: deletion without QUIT is not committed, lock released"

    # DELE, RSET, DELE 2, QUIT commits exactly message 2.
    pop_open
    pop_cmd "USER a@test.local"; pop_cmd "PASS pw-a"
    pop_cmd "DELE 1"; pop_cmd "RSET"; pop_cmd "DELE 2"; [[ $REPLY == +OK* ]] || fail "$store: DELE 2"
    pop_cmd "RETR 2"; [[ $REPLY == -ERR* ]] || fail "$store: RETR of a deleted message: $REPLY"
    pop_cmd "QUIT"; [[ $REPLY == +OK* ]] || fail "$store: QUIT: $REPLY"
    pop_close
    curl_pop 1 a@test.local pw-a >"$WORK/got1" && cmp -s "$WORK/got1" "$WORK/m1.eml" || fail "$store: message 1 changed after QUIT"
    curl_pop 2 a@test.local pw-a >"$WORK/got2" && cmp -s "$WORK/got2" "$WORK/m3.eml" || fail "$store: message 3 is not now number 2"
    [[ $(curl_pop "" a@test.local pw-a | wc -l) -eq 2 ]] || fail "$store: QUIT did not delete exactly one"
    ok "$store: QUIT commits exactly the DELE'd message (after RSET)"

    # curl's own DELE (it QUITs after): the count drops.
    curl_pop 1 a@test.local pw-a -X DELE -I >/dev/null || fail "$store: curl DELE"
    [[ $(curl_pop "" a@test.local pw-a | wc -l) -eq 1 ]] || fail "$store: curl DELE did not commit"
    ok "$store: curl DELE commits"

    # Wrong password: [AUTH].
    curl_pop "" a@test.local wrong -v >"$WORK/curl.out" 2>&1 && fail "$store: wrong password accepted"
    grep -q -- '-ERR \[AUTH\]' "$WORK/curl.out" || fail "$store: wrong password without [AUTH]"

    srv_stop
    [[ -e $WORK/server.pid ]] && fail "$store: pid file left after SIGTERM"
    if [[ $store != memory ]]; then
        srv_start "${args[@]}"
        curl_pop 1 a@test.local pw-a >"$WORK/got1" && cmp -s "$WORK/got1" "$WORK/m3.eml" || fail "$store: mail lost across a restart"
        [[ $(curl_pop "" b@test.local pw-b | wc -l) -eq 1 ]] || fail "$store: b's mail lost across a restart"
        srv_stop
        ok "$store: mail survives a restart"
    fi
done

# Pipelining: one write with the whole transaction; replies come back in order.
srv_start --users "$WORK/users"
exec 4<>"/dev/tcp/127.0.0.1/$SMTP_PORT"
printf 'EHLO t\r\nMAIL FROM:<s@test.local>\r\nRCPT TO:<a@test.local>\r\nRCPT TO:<x@test.local>\r\nDATA\r\n' >&4
codes=()
while IFS= read -r -t 5 l <&4; do
    codes+=("${l:0:4}")
    [[ ${l:0:3} = 354 ]] && break
done
[[ "${codes[*]}" == "220  250- 250- 250- 250- 250  250  250  550  354 " ]] || fail "pipelined replies: ${codes[*]}"
printf 'Subject: p\r\n\r\nx\r\n.\r\nMAIL FROM:<s@test.local>\r\nRCPT TO:<b@test.local>\r\nDATA\r\ny\r\n.\r\nQUIT\r\n' >&4
rest=$(timeout 5 cat <&4 | cut -c1-3 | tr '\r\n' '  ')
[[ $rest == "250 250 250 354 250 221 " ]] || fail "pipelined second transaction: $rest"
exec 4>&- 4<&-
ok "pipelined commands answered in order"
srv_stop
echo "all store tests passed"
