#!/usr/bin/env bash
# fill.messages against the real testbed: every mailbox filled through Postfix to a
# seeded count, verified by listing every mailbox, and counted independently in
# the store (scripts/testbed count: the maildir files); a soak on that store
# (fill.from) that leaves it as it was; then a soak after a second fill, whose
# readers leave the filled messages and clear the first run's away.
source "$(dirname "$0")/lib.sh"
testbed_up maildir 30


# 1. The fill alone (fill.only), as a script would: 5-15 messages per mailbox.
"$MAILSOAK" run -c "$TB/mailsoak.conf" --fill 5-15 --fill-only yes --seed 3 --set run.settle=2s \
    --set fill.ledger_csv="$WORK/fill.csv" --json "$WORK/fill.json" >"$WORK/fill.out" 2>&1
check "fill-only exits 0" eq "$?" 0
planned=$(jget "$WORK/fill.json" .fill.planned)
echo "planned $planned"
check "every mailbox got some" eq "$(jget "$WORK/fill.json" .fill.mailboxes)" 30
check "planned within 30 x 5-15" awk -v n="$planned" 'BEGIN { exit !(n >= 150 && n <= 450) }'
check "all accepted" eq "$(jget "$WORK/fill.json" .fill.accepted)" "$planned"
check "all verified by the listing" eq "$(jget "$WORK/fill.json" .fill.verified)" "$planned"
check "none duplicated or missing" eq "$(jget "$WORK/fill.json" '.fill.duplicated + .fill.missing + .fill.unverified')" 0
check "the fill ledger lists each, verified" eq "$(grep -c ',verified$' "$WORK/fill.csv")" "$planned"
check "the store holds exactly the planned count (independent count)" eq "$(testbed_store_count)" "$planned"

# 2. A soak on that store (fill.from: the fill-only run's JSON): its readers leave
# the filled messages as if it had filled them, and the store keeps them exactly.
"$MAILSOAK" run -c "$TB/mailsoak.conf" --fill-from "$WORK/fill.json" --seed 4 --senders 4 --readers 4 \
    --messages 200 --duration 30s --drain 20s --json "$WORK/reuse.json" >"$WORK/reuse.out" 2>&1
check "soak on the filled store exits 0" eq "$?" 0
check "it names the fill it left" eq "$(jget "$WORK/reuse.json" .fill.run_id)" "$(jget "$WORK/fill.json" .fill.run_id)"
check "soak: 200 sent, all delivered once" eq "$(jget "$WORK/reuse.json" .summary.delivered)" 200
check "soak: nothing lost, pending, duplicated" eq "$(jget "$WORK/reuse.json" '.summary.lost + .summary.pending + .summary.duplicated')" 0
check "soak: no filled message taken for stale" eq "$(jget "$WORK/reuse.json" .summary.stale)" 0
check "the store still holds exactly the fill" eq "$(testbed_store_count)" "$planned"

# 3. A soak after a second fill in the same run. The readers leave this fill's
# messages (skipped by UIDL) and clear what they meet of the first run's as stale:
# at the end the store holds exactly the second fill and the first's not met.
"$MAILSOAK" run -c "$TB/mailsoak.conf" --fill 2-4 --seed 4 --set run.settle=2s --senders 4 --readers 4 \
    --messages 200 --duration 30s --drain 20s --json "$WORK/soak.json" >"$WORK/soak.out" 2>&1
check "soak exits 0" eq "$?" 0
planned2=$(jget "$WORK/soak.json" .fill.planned)
check "second fill verified" eq "$(jget "$WORK/soak.json" .fill.verified)" "$planned2"
check "the first fill met by the verification, left alone" eq "$(jget "$WORK/soak.json" .fill.foreign)" "$planned"
check "soak: 200 sent" eq "$(jget "$WORK/soak.json" .summary.sent)" 200
check "soak: all 200 delivered once" eq "$(jget "$WORK/soak.json" .summary.delivered)" 200
check "soak: nothing lost, pending, duplicated" eq "$(jget "$WORK/soak.json" '.summary.lost + .summary.pending + .summary.duplicated')" 0
stale=$(jget "$WORK/soak.json" .summary.stale)
check "soak: some of the first fill cleared as stale" gt "$stale" 0
check "the store holds the second fill and the first's not cleared" eq "$(testbed_store_count)" $((planned2 + planned - stale))
check "the workload names the fill" eq "$(jget "$WORK/soak.json" .workload.fill)" "2-4"
finish
