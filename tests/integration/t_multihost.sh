#!/usr/bin/env bash
# Several load hosts on one machine: three network namespaces on a bridge (198.18.0.0/15,
# the benchmark range; nothing routes out): the reference server, losing exactly 5
# accepted messages, with `mailsoak probe` beside it, in one; two load shards, launched
# by scripts/shards with pdsh (its exec module reaching the namespaces through `ip
# netns exec`, as it would reach hosts through ssh) and both pulling the probe, in the
# two others. The merged result reconciles exactly, has the 5 losses, percentiles
# equal to those computed here from the shards' buckets, the server's rows from the
# probe once (not once per shard), and compare and report read it; the server's log
# shows each shard's host logging in only to its own users. <= 40 s, 300 messages.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_lib.sh"
source "$(dirname "$0")/merge_lib.sh"
need_root
for tool in jq pdsh; do
    command -v "$tool" >/dev/null || { echo "skip: needs $tool" >&2; exit 77; }
done
[[ -x $MAILSOAK && -x $MAILSOAK_SERVER ]] || { echo "skip: build first (make)" >&2; exit 77; }

SRV=mshs$$ L0=mshl$$a L1=mshl$$b
SRV_IP=198.18.0.1 L0_IP=198.18.0.10 L1_IP=198.18.0.11
ns_net_up "$SRV=$SRV_IP" "$L0=$L0_IP" "$L1=$L1_IP"
! ip -4 addr show | grep -q '198\.1[89]\.' || { echo "FAIL: a 198.18.0.0/15 address outside the namespaces"; exit 1; }

jtrue() { jq -e "$@" >/dev/null; }
LOST=5
USERS=(--set users.count=40 --set 'users.pattern=user%04d@test.local')
ns_bg SRV_PID "$SRV" "$MAILSOAK_SERVER" --listen-smtp "$SRV_IP:2525" --listen-pop3 "$SRV_IP:1110" \
    --ready-file "$WORK/ready" --log "$WORK/server.log" --pidfile "$WORK/server.pid" "${USERS[@]}" \
    --set server.log_sessions=yes --set server.store=maildir --set "server.store_dir=$WORK/mail" \
    --set server.fsync=no --set fault.store.lose_every=25 --set "fault.store.lose_max=$LOST" \
    >"$WORK/server.out" 2>&1
for _ in $(seq 100); do [[ -s $WORK/ready ]] && break; sleep 0.05; done
[[ -s $WORK/ready ]] || { cat "$WORK/server.out"; echo "FAIL: the server did not start"; exit 1; }
# What the probe on the server's host samples: the server's process, store and log.
printf '[server]\npidfile = %s\nstore_dir = %s\nstore_format = maildir\nlog = %s\nsample_interval = 250ms\n' \
    "$WORK/server.pid" "$WORK/mail" "$WORK/server.log" >"$WORK/server.conf"
ip netns exec "$L0" bash -c "exec 3<>/dev/tcp/$SRV_IP/2525" || { echo "FAIL: $L0 cannot reach the server"; exit 1; }
out_route=0
ip -n "$L0" route get 192.0.2.1 >/dev/null 2>&1 || out_route=1
check "a load host has no route out of the bridge" eq "$out_route" 1

# pdsh runs `ip netns exec HOST mailsoak probe ...` on the server's host, then
# `ip netns exec HOST mailsoak run --shard K/2 --probe ...` on each load host.
mkdir -p "$WORK/remote"
timeout --kill-after=10 120 "$TOP/scripts/shards" --hosts "$L0,$L1" --reach netns --mailsoak "$MAILSOAK" \
    --remote-dir "$WORK/remote" --out "$WORK/out" --probes "$SRV=$SRV_IP" --probe-conf "$WORK/server.conf" \
    --probe-token s3cret -- \
    --no-check --smtp "$SRV_IP:2525" --pop3 "$SRV_IP:1110" "${USERS[@]}" --senders 3 --readers 2 \
    --messages 150 --duration 20s --drain 5s --set run.sweep_timeout=30s --settle 1s --interval 1s --seed 5 \
    >"$WORK/shards.out" 2>&1
rc=$?
sed 's/^/    | /' "$WORK/shards.out" | tail -n 30
check "scripts/shards exits 4: the shards' lost gate fails on the losses the server made" eq "$rc" 4
check "it prints the whole load's verdict, judged by the merge" grep -q "^verdict  FAILED: $LOST lost, 0 duplicated, 0 corrupted of 300 accepted" "$WORK/shards.out"
left=$(ip netns pids "$L0"; ip netns pids "$L1")
check "nothing left running on the load hosts" eq "$left" ""
ns_stop "$SRV_PID" || true
check "nothing left running on the server's host (scripts/shards stopped the probe)" eq "$(ip netns pids "$SRV")" ""

S0=$WORK/out/shard-0.json S1=$WORK/out/shard-1.json M=$WORK/out/merged.json
for f in "$S0" "$S1" "$M"; do [[ -s $f ]] || { echo "FAIL: no $f"; exit 1; }; done
check "the merged files are shards 0 and 1, in host order" eq "$(jq -r '[.merged_from[].shards.k[0]] | join(",")' "$M")" "0,1"
check "the shards are 0/2 and 1/2, complete" eq "$(jq -c .shards "$M")" '{"n":2,"k":[0,1],"complete":true}'
for k in sent read delivered lost pending duplicated corrupted errors; do
    check "merged $k is the shards' sum" sums_match "$M" "$k" "$S0" "$S1"
done
check "merged sent: 2 x 150" eq "$(jq .summary.sent "$M")" 300
check "the merged ledger reconciles: sent = delivered + duplicated + corrupted + lost + pending" ledger_reconciles "$M"
check "both shards settled, so the merge's verdicts are final" eq "$(jq .summary.settled "$M")" true
check "merged lost equals what the server lost" eq "$(jq .summary.lost "$M")" "$LOST"
check "merged percentiles are those of the summed buckets (computed by jq)" percentiles_match "$M" "$S0" "$S1"
tl_sent=$(jq '[.timeline[].sent] | add' "$M")
shards_tl_sent=$(jq -s '[.[].timeline[].sent] | add' "$S0" "$S1")
check "the merged timeline holds every interval's counts of both shards" eq "$tl_sent" "$shards_tl_sent"

# Each host's readers logged in only to its shard's users, as the server saw them.
only_users() { # IP K: the users of the logins from IP are all K mod 2, and there are some
    local idx n=0
    while read -r idx; do
        ((10#$idx % 2 == $2)) || return 1
        n=$((n + 1))
    done < <(grep "pop3-login: .*rip=localhost\[$1\]" "$WORK/server.log" | grep -oE 'user[0-9]{4}' | grep -oE '[0-9]{4}')
    ((n > 0))
}
check "the server's logins from $L0_IP are all users 0 mod 2" only_users "$L0_IP" 0
check "the server's logins from $L1_IP are all users 1 mod 2" only_users "$L1_IP" 1

# The server's rows come from the probe, once: both shards pulled it, the merge
# keeps the one with more samples instead of adding them up.
check "the probe's rows are in the merge: samples" gt "$(jq .summary.server_samples "$M")" 0
check "the probe's rows are in the merge: memory" gt "$(jq .summary.mem "$M")" 0
check "the probe's rows are in the merge: I/O" gt "$(jq .summary.input "$M")" 0
stored=$(find "$WORK/mail" -type f \( -path '*/new/*' -o -path '*/cur/*' \) | wc -l)
check "the probe's store count is the store's own ($stored messages)" eq "$(jq .summary.store_messages "$M")" "$stored"
check "one file speaks for the server" eq "$(jq '[.merged_from[] | select(.server)] | length' "$M")" 1
check "the merged server rows are that file's" eq \
    "$(jq -s -c '.[0].merged_from as $f | [range(0; 2) as $i | select($f[$i].server) | .[$i + 1].summary | {input, output, mem, server_samples}][0]' "$M" "$S0" "$S1")" \
    "$(jq -c '.summary | {input, output, mem, server_samples}' "$M")"
check "both shards pulled the probe (so adding them up would have counted it twice)" \
    jtrue -s 'all(.[]; .summary.server_samples > 0 and .summary.input > 0)' "$S0" "$S1"
check "the server's own rows, by source: one, from the probe" eq "$(jq -c '.servers | keys' "$M")" "[\"$SRV\"]"
check "the merged timeline has the server's side" jtrue '[.timeline[] | .server.mem // 0] | max > 0' "$M"

"$MAILSOAK" compare "$M" >"$WORK/compare.txt" 2>&1
check "compare reads the merged file" eq "$?" 0
check "compare shows lost $LOST" grep -qE "^lost +$LOST\$" "$WORK/compare.txt"
check "compare shows the server's memory" grep -qE '^mem +[0-9.]+[KMG]?B$' "$WORK/compare.txt"
"$MAILSOAK" report "$M" "$S0" "$S1" -o "$WORK/report.html" --force >/dev/null 2>&1
check "report reads the merged file beside the shards" eq "$?" 0
check "the report shows the merged run" grep -qF "$(jq -r .run_id "$M")" "$WORK/report.html"
finish
