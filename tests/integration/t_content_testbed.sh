#!/usr/bin/env bash
# Mail that looks like mail, through the real testbed (Postfix + Dovecot, maildir):
# MIME messages as clients write them with sizes from the published distribution
# (conf/sizes/email-2002.cdf) and several recipients by weight; then corpus replay:
# real messages delivered by Postfix into a Dovecot mbox (an mbox testbed's, copied
# out), and the same messages as a folder of .eml files, replayed to the test users,
# each recipient's copy proven delivered exactly once by its id and the digest of its
# body as sent.
source "$(dirname "$0")/lib.sh"
rm -rf "$ARTEFACTS/t_content_testbed"   # a failure's evidence (soak, below), of an earlier run
testbed_up mbox 20

# The messages of the corpus: what clients and lists send, with what an mbox must
# escape (">From " and "From " lines), dots, long lines, 8-bit text, folded headers.
mkdir -p "$WORK/eml"
cat >"$WORK/eml/1.eml" <<'M'
From: Alice Example <alice@example.org>
To: Bob <bob@example.org>
Cc: carol@example.org
Subject: quarterly figures
Date: Mon, 30 Nov 2026 10:00:00 +0000
Message-ID: <q1@example.org>
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="b1"

--b1
Content-Type: text/plain; charset=UTF-8

Hi Bob,
From the top: the figures are attached.
.this line starts with a dot
Grüße, Alice
--b1
Content-Type: text/html; charset=UTF-8

<p>Hi Bob,</p>
--b1--
M
{
    printf 'From: list@lists.example.org\nTo: everyone@lists.example.org\nSubject: [list] a long\n thread\n'
    printf 'List-Id: <list.example.org>\nDate: Mon, 30 Nov 2026 11:00:00 +0000\n\n'
    printf '%s\n' "$(head -c 3000 /dev/zero | tr '\0' 'y')"
    printf '>From an escaped line\nlast line without a newline'
} >"$WORK/eml/2.eml"
printf 'From: c@example.org\nSubject: short\n\nok\n' >"$WORK/eml/3.eml"
for f in "$WORK"/eml/*.eml; do
    curl -sS --max-time 10 "smtp://127.0.0.1:$SMTP_PORT" --mail-from c@example.org \
        --mail-rcpt user0000@test.local -T "$f" || echo "FAIL could not deliver $f"
done
for _ in $(seq 1 100); do
    n=$(grep -c '^Subject: ' "$MAIL_DIR/test.local/user0000/mbox" 2>/dev/null)
    [[ ${n:-0} -ge 3 ]] && break
    sleep 0.1
done
check "Postfix delivered the 3 corpus messages into Dovecot's mbox" eq "${n:-0}" 3
cp "$MAIL_DIR/test.local/user0000/mbox" "$WORK/corpus.mbox"
# The soaks go to a maildir testbed: content is what they judge, and Dovecot's mbox
# store, read over POP3 while LMTP appends to it, now and then serves a message again
# after its deletion (a server finding: each copy saved once by LMTP, retrieved and
# deleted, then retrieved again with the Status headers Dovecot had written; 1 run in 10
# of this test under ASan, CI's asan phase once; pop3_lock_session = yes did not end it).
"$TOP/scripts/testbed" down --dir "$TB" >/dev/null 2>&1
testbed_up maildir 20
cp "$USERS_FILE" "$WORK/users"

# outcomes JSON: the summary's outcome counts on one line (a failure's first evidence)
outcomes() {
    jq -r '.summary | "sent \(.sent) delivered \(.delivered) lost \(.lost) corrupted \(.corrupted)" +
        " duplicated \(.duplicated) pending \(.pending) unattributed \(.unattributed) settled \(.settled)" +
        ([to_entries[] | select((.key | startswith("pending_")) and .value > 0) | " \(.key) \(.value)"] | add // "")' "$1"
}

soak() {   # soak NAME [flags]: 120 messages to 1-3 recipients, read and proven
    local name=$1 before=$failures
    shift
    "$MAILSOAK" run --users "$WORK/users" --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" \
        --senders 4 --readers 4 --messages 120 --duration 40s --drain 20s --seed 21 \
        --set smtp.rcpts_weights=60,30,10 --json "$WORK/$name.json" \
        --ledger-csv "$WORK/$name.csv" "$@" >"$WORK/$name.txt" 2>&1
    check "$name: exits 0" eq "$?" 0
    local sent
    sent=$(jget "$WORK/$name.json" .summary.sent)
    check "$name: more copies than messages (1-3 recipients)" gt "$sent" 120
    check "$name: every copy delivered exactly once" eq "$(jget "$WORK/$name.json" .summary.delivered)" "$sent"
    check "$name: nothing corrupted, lost, pending or duplicated" eq \
        "$(jget "$WORK/$name.json" '.summary.corrupted + .summary.lost + .summary.pending + .summary.duplicated + .summary.unattributed')" 0
    if ((failures > before)); then   # the evidence a failure needs, kept with the test's artefacts (CI's too)
        local keep=$ARTEFACTS/t_content_testbed
        echo "     $name: $(outcomes "$WORK/$name.json")"
        mkdir -p "$keep" && cp "$WORK/$name".* "$keep"/ && gzip -c "$POSTFIX_LOG" >"$keep/$name-postfix.log.gz" &&
            gzip -c "$DOVECOT_LOG" >"$keep/$name-dovecot.log.gz" && tar -C "$MAIL_DIR" -czf "$keep/$name-mail.tar.gz" . &&
            echo "     $name: its JSON, CSV, output, Postfix's and Dovecot's logs and the mailboxes: $keep"
    fi
}
soak mime --content mime --set smtp.size_dist=cdf --set smtp.size_file="$TOP/conf/sizes/email-2002.cdf" --set smtp.size=0-256k
soak mbox --content corpus --corpus "$WORK/corpus.mbox"
soak eml --content corpus --corpus "$WORK/eml"
# a replayed message keeps its own headers and carries ours
"$MAILSOAK" run --users "$WORK/users" --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" --senders 1 \
    --readers 0 --messages 3 --duration 10s --content corpus --corpus "$WORK/corpus.mbox" --seed 2 >/dev/null 2>&1
for _ in $(seq 1 100); do
    box=$(grep -rl 'X-Mailsoak-Id' "$MAIL_DIR"/test.local/user00*/ 2>/dev/null | head -1)
    [[ -n $box ]] && break
    sleep 0.1
done
check "a replayed message has our id and the corpus's From" grep -q '^From: \(Alice\|list\|c@\)' "$box"
check "and the corpus's Subject" grep -q '^Subject: \(quarterly figures\|\[list\] a long\|short\)' "$box"
check "the original recipients are gone" bash -c "! grep -q '^Cc: carol@example.org' '$box'"
finish
