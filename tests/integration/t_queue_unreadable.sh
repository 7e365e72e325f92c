#!/usr/bin/env bash
# t_queue_unreadable.sh: a queue the run can count but not read per message holds the
# sweep's proof back for as long as it holds anything, as a walk made now sees it,
# never as a count walked before. The reference server loses 3 of 100 messages
# ([fault.store] lose); a spool directory (server.spool_format = files) is walked once
# at the start (server.walk_interval = 1h), by the run itself as the user nobody, or by
# a `mailsoak probe` the run pulls (which counts, never reads). With the spool empty
# the sweep proves the 3 lost. Then the same run with a message put in the spool after
# the first walk (root's, mode 0600, which nobody cannot read): the 3 may still sit in
# that queue, so none is lost, all 3 pending. Before the fixes the collector's zero,
# and then the probe's, walked before the message was queued, let the sweep prove
# them lost. A few seconds a run.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"
[[ -x $MAILSOAK ]] || { echo "no $MAILSOAK: run make"; exit 77; }
command -v jq >/dev/null || { echo "skip: needs jq"; exit 77; }
[[ $(id -u) == 0 ]] || { echo "skip: needs root, to run mailsoak as nobody beside a file only root reads"; exit 77; }
command -v setpriv >/dev/null || { echo "skip: needs setpriv (util-linux)"; exit 77; }

SPOOL=$WORK/spool OUT=$WORK/out
mkdir -p "$SPOOL" "$OUT"
chmod 755 "$WORK" "$SPOOL"
chown nobody "$OUT"

PROBE_PID=
trap 'stop_probe; cleanup' EXIT
stop_probe() { [[ -z $PROBE_PID ]] || { stop_pid "$PROBE_PID"; wait "$PROBE_PID" 2>/dev/null; PROBE_PID=; }; }

# probe_up: a probe on a free loopback port walking the spool once at its start and
# when a puller asks for a fresh sample; its base URL in PROBE.
probe_up() {
    local log=$WORK/probe.err i
    printf '[server]\nspool_dir = %s\nspool_format = files\nwalk_interval = 1h\n' "$SPOOL" >"$WORK/probe.conf"
    "$MAILSOAK" probe --listen 127.0.0.1:0 --token t0k -c "$WORK/probe.conf" 2>"$log" &
    PROBE_PID=$! PROBE=
    for i in $(seq 200); do
        PROBE=$(grep -o 'http://[^ ]*/metrics' "$log" 2>/dev/null) && break
        kill -0 "$PROBE_PID" 2>/dev/null || break
        sleep 0.05
    done
    [[ -n $PROBE ]] || { cat "$log"; fail "the probe did not start"; }
    PROBE=${PROBE%/metrics}
}

# run NAME local|remote [hold]: a run against a server of its own (the 3 losses are
# the server's first 3 of every 10), counting the spool itself (as nobody) or through
# a probe; with hold, once the run has sampled (its first live line: the spool was
# walked before it), a message the run cannot read is queued.
run() {
    local name=$1 how=$2 hold=${3:-} as=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
    local spool=(--set server.spool_dir="$SPOOL" --set server.spool_format=files --set server.walk_interval=1h)
    rm -f "$SPOOL/held"
    if [[ $how == remote ]]; then
        probe_up
        spool=(--probe "$PROBE" --set server.probe_token=t0k)
        as=()
    fi
    srv_start --set users.count=20 --set fault.store.lose_every=10 --set fault.store.lose_max=3
    "${as[@]}" timeout 120 "$MAILSOAK" run --no-check \
        --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" --set users.count=20 --senders 2 --readers 1 \
        --messages 100 --duration 30s --drain 3s --set run.sweep_timeout=10s --settle 1s --interval 200ms \
        "${spool[@]}" --seed 3 --json "$OUT/$name.json" >"$OUT/$name.table" 2>"$OUT/$name.err" &
    local pid=$! i
    if [[ -n $hold ]]; then
        for i in $(seq 600); do
            grep -q '^\[ *[0-9.]*s ' "$OUT/$name.err" 2>/dev/null && break
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        grep -q '^\[ *[0-9.]*s ' "$OUT/$name.err" || { cat "$OUT/$name.err"; fail "$name: no live line"; }
        install -m 600 /dev/null "$SPOOL/held"
        echo 'X-Mailsoak-Id: unreadable to the run' >"$SPOOL/held"
    fi
    wait "$pid"
    local rc=$?
    srv_stop
    stop_probe
    ((rc == 0 || rc == 4)) || { cat "$OUT/$name.err"; fail "$name: mailsoak run exited $rc"; }
    # as nobody it cannot write to tests/run's sanitizer directory: its reports come here
    ! grep -qE '^(==[0-9]+==ERROR|.*runtime error:)' "$OUT/$name.err" || { cat "$OUT/$name.err"; fail "$name: a sanitizer report"; }
    [[ -s $OUT/$name.json ]] || fail "$name: no result"
}
sum() { jq -e ".summary.$2" "$OUT/$1.json" || fail "$1: no summary.$2"; }

for how in local remote; do
    run "empty-$how" "$how"
    [[ $(sum "empty-$how" lost) == 3 && $(sum "empty-$how" sent) == 100 ]] ||
        { cat "$OUT/empty-$how.table"; fail "$how, the empty spool: $(jq -c '.summary | {sent, lost, pending}' "$OUT/empty-$how.json"), want 3 lost of 100"; }
    ok "$how, an empty spool: the sweep proves the 3 messages the server discarded lost"

    run "held-$how" "$how" hold
    [[ -e $SPOOL/held ]] || fail "the held message is gone"
    [[ $(sum "held-$how" lost) == 0 ]] ||
        { cat "$OUT/held-$how.table"; fail "$how: a message the run cannot read sat in the queue, yet $(sum "held-$how" lost) were proven lost"; }
    [[ $(sum "held-$how" pending) -ge 3 && $(sum "held-$how" sent) == 100 ]] ||
        fail "held-$how: $(jq -c '.summary | {sent, lost, pending}' "$OUT/held-$how.json"), want the 3 pending"
    [[ $(jq -r .summary.settled "$OUT/held-$how.json") == false ]] || fail "held-$how: the sweep settled"
    ok "$how, a queued message the run cannot read, queued after the first walk: nothing proven lost, $(sum "held-$how" pending) pending"
done
echo "t_queue_unreadable: all checks passed"
