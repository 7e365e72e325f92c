#!/usr/bin/env bash
# The ledger's compaction on a short soak of the reference server: once a chunk of
# 4096 messages is all delivered exactly once, the run drops their entries and
# counts them (summary.ledger_compacted), and the proof stays whole: sent =
# delivered, the verdict PROVEN, the timeline (kept on disk while the run goes)
# whole. Then a copy served again after its message was compacted: IMAP idle
# clients read every message as it is pushed, an EXPUNGE answered and not done
# leaves one message of the first chunk in its mailbox, and only the sweep, after
# that chunk was compacted, reads it again: it must count as duplicated (revived,
# summary.ledger_revived), never as unattributed, and show as an example.
# One worker, so that one shard fills a chunk. 2 runs of about 10 s, 5000 messages each.
source "$(dirname "$0")/lib.sh"
[[ -x $MAILSOAK && -x $MAILSOAK_SERVER ]] || { echo "skip: build first"; exit 77; }
USERS=20 N=5000

s() { jget "$WORK/$1.json" "$2"; }

# POP3 readers, the default workload: every chunk but the one still filling goes.
ref_up pop3
"$MAILSOAK" run --no-check --smtp "$SMTP" --pop3 "$POP3" --set users.count=$USERS --messages $N \
    --workers 1 --rate 1000 --duration 30s --drain 10s --interval 1s --seed 3 --json "$WORK/pop3.json" \
    >"$WORK/pop3.txt" 2>"$WORK/pop3.live"
rc=$?
ref_down
check "pop3: exit 0" eq "$rc" 0 || cat "$WORK/pop3.txt"
check "pop3: $N delivered exactly once" eq "$(s pop3 .summary.delivered)" $N
check "pop3: the verdict proven" eq "$(s pop3 .verdict.state)" proven
check "pop3: the first chunk (4096) compacted" eq "$(s pop3 .summary.ledger_compacted)" 4096
check "pop3: nothing revived" eq "$(s pop3 .summary.ledger_revived)" 0
check "pop3: the timeline whole (one entry a second at least)" \
    gt "$(s pop3 '.timeline | length')" "$(s pop3 '.elapsed_s | floor - 2')"
check "pop3: its entries in order" eq "$(s pop3 '[.timeline[].t] | . == sort')" true

# The 100th EXPUNGE answered and not done: its message stays for the sweep.
ref_up undone --set fault.imap.expunge.kind=undone --set fault.imap.expunge.after=99 \
    --set fault.imap.expunge.every=1 --set fault.imap.expunge.max=1
"$MAILSOAK" run --smtp "$SMTP" --imap "$IMAP" --set readers.protocol=imap --set imap.models=idle:100 \
    --set users.count=$USERS --readers 2 --senders 4 --workers 1 --messages $N --rate 1000 --duration 30s \
    --drain 10s --set run.sweep_timeout=20s --interval 1s --seed 5 --json "$WORK/undone.json" \
    --ledger-csv "$WORK/undone.csv" \
    >"$WORK/undone.txt" 2>"$WORK/undone.live"
rc=$?
ref_down
cat "$WORK/undone.txt"
check "undone: exit 4 (integrity)" eq "$rc" 4
check "undone: the first chunk compacted" eq "$(s undone .summary.ledger_compacted)" 4096
check "undone: its copy read after that: revived" gt "$(s undone .summary.ledger_revived)" 0
check "undone: duplicated, as many as revived" eq "$(s undone .summary.duplicated)" "$(s undone .summary.ledger_revived)"
check "undone: never unattributed" eq "$(s undone .summary.unattributed)" 0
check "undone: the rest delivered exactly once" \
    eq "$(($(s undone .summary.delivered) + $(s undone .summary.duplicated)))" $N
check "undone: nothing lost or corrupted" eq "$(s undone '.summary.lost + .summary.corrupted')" 0
check "undone: shown as an example" gt "$(s undone '.summary.duplicated_examples | length')" 0
check "undone: the example says it was compacted" eq "$(s undone '.summary.duplicated_examples[0].compacted')" true
check "undone: the table says so" grep -q "its entry compacted, then found again" "$WORK/undone.txt"
check "undone: in the CSV, without the size and time not kept" \
    grep -q ',,,duplicated,compacted,' "$WORK/undone.csv"
finish
