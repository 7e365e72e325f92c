#!/usr/bin/env bash
# Sharded load on loopback against the reference server. A shard owns its users:
# the mail of shard 1/3 lands only in mailboxes of index mod 3 = 1 and its readers
# log in only there (the server's own log and store say so, not mailsoak). Then two
# shards run at once against a server that loses exactly 4 messages; their merge
# reconciles exactly, has the 4 losses, percentiles equal to those computed here
# from the shards' buckets, a verdict of its own (the whole load's gates: exit 4),
# and compare and report read it. <= 30 s, <= 400 messages.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/merge_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"
[[ -x $MAILSOAK ]] || { echo "no $MAILSOAK: run make"; exit 77; }
command -v jq >/dev/null || { echo "skip: needs jq" >&2; exit 77; }
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}

USERS=(--set users.count=30)
run_shard() { # NAME SHARD [mailsoak args...]
    local name=$1 shard=$2
    shift 2
    timeout 60 "$MAILSOAK" run --no-check --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" \
        "${USERS[@]}" --shard "$shard" --seed 3 --interval 1s --json "$WORK/$name.json" "$@" \
        >"$WORK/$name.table" 2>&1
    # 4: a shard's own integrity gate on the losses the server is made to make
    local rc=$?
    ((rc == 0 || rc == 4)) || { cat "$WORK/$name.table"; fail "$name: mailsoak run failed (exit $rc)"; }
}
# indexes of the users NAME's lines of the server log name ("user0007@" -> 7)
owned_only() { # K N FILE...: every user index in the input is K mod N (and there is one)
    local k=$1 n=$2 idx seen=0
    shift 2
    while read -r idx; do
        seen=1
        ((10#$idx % n == k)) || { echo "     user $idx is not $k mod $n" >&2; return 1; }
    done < <(cat "$@" | grep -oE 'user[0-9]{4}@' | grep -oE '[0-9]{4}')
    ((seen)) || { echo "     no user at all" >&2; return 1; }
}

# ---- a shard's mail goes to its users only, and its readers read them only ----
srv_start "${USERS[@]}" --set server.store=maildir --set "server.store_dir=$WORK/mail" \
    --set server.fsync=no --set server.log_sessions=yes
run_shard send13 1/3 --senders 3 --readers 0 --messages 90 --duration 20s --set run.sweep=no
sent=$(jq .summary.sent "$WORK/send13.json")
[[ $sent == 90 ]] || fail "shard 1/3 sent $sent, want 90"
ls "$WORK/mail" >"$WORK/boxes"
boxes=0
for b in $(cat "$WORK/boxes"); do
    n=$(find "$WORK/mail/$b" -type f | wc -l)
    ((n > 0)) && { boxes=$((boxes + 1)); echo "$b" >>"$WORK/full"; }
done
owned_only 1 3 "$WORK/full" || fail "shard 1/3 sent mail to users it does not own: $(tr '\n' ' ' <"$WORK/full")"
((boxes >= 5)) || fail "90 messages reached only $boxes of shard 1/3's 10 mailboxes"
stored=$(find "$WORK/mail" -type f -path '*/new/*' | wc -l)
[[ $stored == 90 ]] || fail "the store holds $stored messages, want 90"
ok "shard 1/3: its 90 messages are in $boxes mailboxes, all of index 1 mod 3"

# readers of shard 2/3 find none of it; readers of 1/3 find it (an earlier run's:
# stale) and log in only to their users
: >"$WORK/server.log"
run_shard read23 2/3 --senders 0 --readers 2 --duration 2s --drain 0s
owned_only 2 3 <(grep 'pop3-login' "$WORK/server.log") || fail "shard 2/3 read a mailbox it does not own"
[[ $(jq .summary.stale "$WORK/read23.json") == 0 ]] || fail "shard 2/3 found mail of shard 1/3"
: >"$WORK/server.log"
run_shard read13 1/3 --senders 0 --readers 2 --duration 2s --drain 0s
owned_only 1 3 <(grep 'pop3-login' "$WORK/server.log") || fail "shard 1/3 read a mailbox it does not own"
stale=$(jq .summary.stale "$WORK/read13.json")
((stale > 0)) || fail "shard 1/3 did not find its earlier mail"
srv_stop
ok "readers: shard 2/3 logs in only to users 2 mod 3 and finds nothing; 1/3 only to 1 mod 3 ($stale found)"

# ---- two shards at once; the server loses exactly 4 accepted messages ----
LOST=4
srv_start "${USERS[@]}" --set fault.store.lose_every=20 --set "fault.store.lose_max=$LOST"
SHARD_ARGS=(--senders 3 --readers 2 --messages 150 --duration 20s --drain 5s --set run.sweep_timeout=30s --settle 1s)
run_shard s0 0/2 "${SHARD_ARGS[@]}" &
p0=$!
run_shard s1 1/2 "${SHARD_ARGS[@]}" &
p1=$!
wait "$p0" || fail "shard 0/2 failed"
wait "$p1" || fail "shard 1/2 failed"
srv_stop
"$MAILSOAK" merge "$WORK/s0.json" "$WORK/s1.json" -o "$WORK/all.json" >"$WORK/merge.out" 2>&1
mrc=$?
((mrc == 4)) || { cat "$WORK/merge.out"; fail "merge exited $mrc, want 4: the whole load's lost gate"; }
for k in sent read delivered lost pending duplicated corrupted errors; do
    sums_match "$WORK/all.json" "$k" "$WORK/s0.json" "$WORK/s1.json" || fail "merged $k is not the shards' sum"
done
[[ $(jq .summary.sent "$WORK/all.json") == 300 ]] || fail "merged sent is not 300"
ledger_reconciles "$WORK/all.json" || fail "the merged ledger does not reconcile"
[[ $(jq .summary.settled "$WORK/all.json") == true ]] || fail "the merge is not settled"
lost=$(jq .summary.lost "$WORK/all.json")
[[ $lost == "$LOST" ]] || fail "merged lost = $lost, the server lost $LOST"
percentiles_match "$WORK/all.json" "$WORK/s0.json" "$WORK/s1.json" || fail "merged percentiles"
[[ $(jq -c .shards "$WORK/all.json") == '{"n":2,"k":[0,1],"complete":true}' ]] || fail "merged shards: $(jq -c .shards "$WORK/all.json")"
ok "merge of 0/2 and 1/2: sent 300 = delivered + pending + lost, lost $LOST as injected, percentiles from the summed buckets"

# the whole load judged again with the shards' gates: its own verdict, not a shard's
v() { jq -r "$1" "$WORK/all.json"; }
[[ $(v .verdict.state) == failed && $(v .verdict.accepted) == 300 && $(v .verdict.proven) == $((300 - LOST)) ]] ||
    fail "merged verdict: $(jq -c '.verdict | {state, accepted, proven}' "$WORK/all.json"), want failed, 300, $((300 - LOST))"
[[ $(v '.verdict.gates.exit_status') == 4 && $(v '.verdict.gates.results[] | select(.name == "lost") | .value') == "$LOST" ]] ||
    fail "merged gates: $(jq -c .verdict.gates.failed "$WORK/all.json")"
# proven: the load's share, which no shard saw (each judged its own 150)
want=$(jq -n "($((300 - LOST)) / 300) >= 0.99")
[[ $(v '.verdict.gates.results[] | select(.name == "proven") | .pass') == "$want" ]] ||
    fail "merged proven gate: $(v '.verdict.gates.results[] | select(.name == "proven") | .text')"
grep -q "^verdict  FAILED: $LOST lost, 0 duplicated, 0 corrupted of 300 accepted" "$WORK/merge.out" ||
    { cat "$WORK/merge.out"; fail "merge printed no verdict of the whole load"; }
ok "merge judges the whole load: FAILED, $LOST lost of 300, exit 4, proven $((300 - LOST)) of 300 against the 99 % gate"

# the merge refuses to count a shard twice, and leaves its output alone
cp "$WORK/all.json" "$WORK/all.before"
if "$MAILSOAK" merge "$WORK/s0.json" "$WORK/s0.json" -o "$WORK/all.json" 2>"$WORK/refused"; then
    fail "merging one shard twice was accepted"
fi
grep -q 'shard 0/2 is in both' "$WORK/refused" || fail "no reason for the refusal: $(cat "$WORK/refused")"
cmp -s "$WORK/all.json" "$WORK/all.before" || fail "a refused merge changed its output file"
ok "one shard twice: refused, output untouched"

"$MAILSOAK" compare "$WORK/all.json" >"$WORK/compare.txt" 2>&1 || { cat "$WORK/compare.txt"; fail "compare"; }
grep -qE '^lost +4$' "$WORK/compare.txt" || { cat "$WORK/compare.txt"; fail "compare does not show lost 4"; }
"$MAILSOAK" report "$WORK/all.json" -o "$WORK/report.html" >/dev/null 2>&1 || fail "report"
grep -q 'delivery' "$WORK/report.html" || fail "the report has no delivery latency"
ok "compare and report read the merged file"
