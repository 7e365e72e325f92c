#!/usr/bin/env bash
# A short soak against the real Postfix + Dovecot testbed, with the sweep on (so
# "lost = 0" is a claim the sweep could contradict): the totals must add up
# exactly — every accepted message is read, or still in a mailbox, or still in
# Postfix's queue, and then pending — and a clean server loses, duplicates and
# corrupts nothing. Then compare and report read the real run's JSON: its sent,
# read and lost rows, and a timeline CSV row per interval adding up to sent.
source "$(dirname "$0")/lib.sh"
testbed_up maildir 50

# A short drain: Postfix accepts far faster than it delivers over LMTP on 2 cores,
# so mail is still arriving when the sweep begins; the sweep reads it in passes
# until the server settled (or its 30 s end). The message count is bounded to keep
# the final flush short. Postfix falls behind by design here, so "kept up" is off:
# what this test proves is the sweep's.
"$MAILSOAK" run -c "$TOP/conf/james-393.conf" -c "$TB/mailsoak.conf" \
    --messages 600 --readers 3 --duration 20s --drain 2s --set run.sweep_timeout=30s --interval 1s --seed 7 \
    --set gate.kept_up=no \
    --json "$WORK/run.json" >"$WORK/table.txt" 2>"$WORK/live.txt"
rc=$?
cat "$WORK/table.txt"
cp "$WORK/run.json" "$ARTEFACTS/soak-testbed.json" 2>/dev/null || true
check "run exits 0" eq "$rc" 0

sent=$(jget "$WORK/run.json" .summary.sent)
read_=$(jget "$WORK/run.json" .summary.read)
errors=$(jget "$WORK/run.json" .summary.errors)
queue_at_end=$("$TOP/scripts/testbed" count --dir "$TB" | awk '$1 == "queue" {print $2}')
# Counting queue and store while Postfix delivers could see a message in both or
# neither: deliver everything first, then count.
check "queue flushed" "$TOP/scripts/testbed" flush --dir "$TB" --timeout 180
counts=$("$TOP/scripts/testbed" count --dir "$TB")
queue=$(awk '$1 == "queue" {print $2}' <<<"$counts")
store=$(awk '$1 == "store" {print $2}' <<<"$counts")
echo "sent=$sent read=$read_ store=$store queue=$queue (at the end of the run: $queue_at_end) errors=$errors"
check "messages were sent" eq "$sent" 600
check "messages were read" gt "$read_" 10
check "sent = read + store + queue" eq "$sent" "$((read_ + store + queue))"
check "pending = what the store holds after the flush" eq "$(jget "$WORK/run.json" .summary.pending)" "$store"
check "no errors" eq "$errors" 0
check "timeline has entries" gt "$(jget "$WORK/run.json" '.timeline | length')" 1
check "live line printed" grep -q "sent" "$WORK/live.txt"
for k in lost duplicated corrupted; do
    check "$k = 0" eq "$(jget "$WORK/run.json" ".summary.$k")" 0
done
check "delivery latency measured" gt "$(jget "$WORK/run.json" '.summary.latency.delivery.count')" 0
check "table has sent row" grep -qE '^sent +[0-9]' "$WORK/table.txt"

# compare and report read this real run's JSON, not only the fixtures.
"$MAILSOAK" compare --format csv "$WORK/run.json" >"$WORK/compare.csv"
check "compare exits 0" eq "$?" 0
row() { awk -F, -v k="$1" '$1 == k { print $4 }' "$WORK/compare.csv"; }
check "compare: sent as the run's" eq "$(row sent)" "$sent"
check "compare: read as the run's" eq "$(row read)" "$read_"
check "compare: lost as the run's" eq "$(row lost)" "$(jget "$WORK/run.json" .summary.lost)"
"$MAILSOAK" report "$WORK/run.json" -o "$WORK/report.html" --csv "$WORK/timeline.csv"
check "report exits 0" eq "$?" 0
check "report names the run" grep -q "$(jget "$WORK/run.json" .run_id)" "$WORK/report.html"
check "report draws charts" grep -q "<svg" "$WORK/report.html"
check "report's timeline CSV: a row per interval" \
    eq "$(($(wc -l <"$WORK/timeline.csv") - 1))" "$(jget "$WORK/run.json" '.timeline | length')"
check "report's timeline CSV: the intervals' sent add up to the run's" \
    eq "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "sent") c = i; next } { s += $c } END { print s }' \
        "$WORK/timeline.csv")" "$sent"
finish
