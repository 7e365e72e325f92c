#!/usr/bin/env bash
# IMAP readers (readers.protocol = imap, the drain model) against the testbed's
# Postfix + Dovecot: a short run proves every message delivered exactly once over
# IMAP (fetched, digest checked, flagged \Deleted and expunged), through the drain
# and the sweep, and exits 0; the per-command latencies are IMAP's, none POP3's.
# Idle clients with webmail beside them (idle:80,webmail:20) over STARTTLS do too,
# with their pushes timed.
# The testbed raised the kernel's inotify limit above the IMAP sessions it holds.
# Then a copy of a delivered message put into its mailbox (a second UID of one
# message) is found duplicated, and the run fails its integrity gate (exit 4).
source "$(dirname "$0")/lib.sh"
testbed_up maildir 20

# The testbed's Dovecot serves IMAP (IMAP_PORT, and [imap] target in its mailsoak.conf).
check "the testbed serves IMAP" test -n "${IMAP_PORT:-}" || finish
# Each of Dovecot's IMAP sessions takes an inotify instance of the mail user: the
# testbed raised the kernel's limit above the sessions it is set up for.
check "inotify instances for $IMAP_MAX_CLIENTS IMAP sessions" \
    test "$(cat /proc/sys/fs/inotify/max_user_instances)" -gt "$IMAP_MAX_CLIENTS"
IMAP=(--set readers.protocol=imap)

# 200 messages as fast as Postfix takes them: a burst that outruns delivery by design
# (this scenario judges the ledger over IMAP), so the kept-up gate, which judges such
# a burst when it spans two intervals, is off.
"$MAILSOAK" run -c "$TB/mailsoak.conf" "${IMAP[@]}" --set gate.kept_up=no \
    --messages 200 --readers 3 --duration 30s --drain 10s --set run.sweep_timeout=40s --interval 1s --seed 11 \
    --json "$WORK/run.json" >"$WORK/table.txt" 2>"$WORK/live.txt"
rc=$?
cat "$WORK/table.txt"
check "run exits 0" eq "$rc" 0
check "the preflight checked the IMAP target" grep -q "^OK imap 127.0.0.1:$IMAP_PORT: .*EXAMINE INBOX" "$WORK/live.txt"
check "200 sent" eq "$(jget "$WORK/run.json" .summary.sent)" 200
check "200 delivered exactly once" eq "$(jget "$WORK/run.json" .summary.delivered)" 200
for k in lost duplicated corrupted pending errors; do
    check "$k = 0" eq "$(jget "$WORK/run.json" ".summary.$k")" 0
done
for k in imap.login imap.select imap.list imap.fetch imap.store imap.expunge; do
    check "$k timed" gt "$(jget "$WORK/run.json" ".summary.latency[\"$k\"].count")" 0
done
check "no POP3 command was timed" eq "$(jget "$WORK/run.json" '[.summary.latency | keys[] | select(startswith("pop3."))] | length')" 0
check "the mailboxes are empty" eq "$(testbed_store_count)" 0

# Idle clients and webmail over STARTTLS, on Dovecot: every message proven, the
# pushes and the TLS handshakes timed.
"$MAILSOAK" run -c "$TB/mailsoak.conf" "${IMAP[@]}" --set imap.tls=starttls --set imap.tls_ca="$CA_CERT" \
    --set imap.models=idle:80,webmail:20 --set imap.poll_interval=5s \
    --messages 40 --rate 20 --readers 2 --duration 30s --drain 20s --set run.sweep_timeout=30s --interval 1s \
    --seed 13 --json "$WORK/idle.json" >"$WORK/idle.txt" 2>"$WORK/idle-live.txt"
rc=$?
cat "$WORK/idle.txt"
check "idle over STARTTLS: exit 0" eq "$rc" 0
check "idle over STARTTLS: 40 delivered exactly once" eq "$(jget "$WORK/idle.json" .summary.delivered)" 40
check "idle over STARTTLS: TLS handshakes timed" gt "$(jget "$WORK/idle.json" '.summary.latency["imap.tls"].count')" 0
check "idle over STARTTLS: pushes timed" gt "$(jget "$WORK/idle.json" '.summary.latency["push.exists"].count // 0')" 0

# A copy of a delivered message under another name: Dovecot gives it a UID of its
# own, the readers fetch the message twice, and the ledger calls it duplicated.
# The readers start late, so the copy is made before they come (the sweep's full
# pass would find it anyway).
"$MAILSOAK" run -c "$TB/mailsoak.conf" "${IMAP[@]}" --no-check \
    --messages 20 --readers 2 --duration 30s --drain 10s --set run.sweep_timeout=40s --interval 1s --seed 12 \
    --set pop3.start_after=8s --json "$WORK/dup.json" >"$WORK/dup-table.txt" 2>"$WORK/dup-live.txt" &
run_pid=$!
delivered_one() { find "$MAIL_DIR" -path '*/Maildir/new/*' -type f -print -quit | grep -q .; }
copied=no
if wait_for 60 delivered_one; then
    f=$(find "$MAIL_DIR" -path '*/Maildir/new/*' -type f -print -quit)
    cp -p "$f" "$(dirname "$f")/$(date +%s).M1P$$.copy" && copied=yes
fi
wait "$run_pid"
rc=$?
check "a delivered message was copied" eq "$copied" yes
check "the copy is found duplicated" eq "$(jget "$WORK/dup.json" .summary.duplicated)" 1
check "the run fails its integrity gate (exit 4)" eq "$rc" 4
finish
