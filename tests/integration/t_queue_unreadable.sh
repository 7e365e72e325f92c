#!/usr/bin/env bash
# t_queue_unreadable.sh: a queue the run can count but not read per message holds the
# sweep's proof back for as long as it holds anything, as the sweep's own scan sees it,
# never as a count walked before. The reference server loses 3 of 100 messages
# ([fault.store] lose); the run, as the user nobody, watches a spool directory
# (server.spool_format = files) walked once at its start (server.walk_interval = 1h).
# With the spool empty the sweep proves the 3 lost. Then the same run with a message
# the run cannot read (root's, mode 0600) put in the spool after its first walk: the 3
# may still sit in that queue, so none is lost, all 3 pending. Before the fix the
# collector's zero, walked before the message was queued, let the sweep prove them
# lost. A few seconds a run.
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

# run NAME [hold]: a run as nobody against a server of its own (the 3 losses are the
# server's first 3 of every 10); with hold, once the run has sampled (its first live
# line: the collector walked the spool before it), a message it cannot read is queued.
run() {
    local name=$1 hold=${2:-}
    rm -f "$SPOOL/held"
    srv_start --set users.count=20 --set fault.store.lose_every=10 --set fault.store.lose_max=3
    setpriv --reuid=nobody --regid=nogroup --clear-groups -- timeout 120 "$MAILSOAK" run --no-check \
        --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" --set users.count=20 --senders 2 --readers 1 \
        --messages 100 --duration 30s --drain 3s --set run.sweep_timeout=10s --settle 1s --interval 200ms \
        --set server.spool_dir="$SPOOL" --set server.spool_format=files --set server.walk_interval=1h \
        --seed 3 --json "$OUT/$name.json" >"$OUT/$name.table" 2>"$OUT/$name.err" &
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
    ((rc == 0 || rc == 4)) || { cat "$OUT/$name.err"; fail "$name: mailsoak run exited $rc"; }
    # as nobody it cannot write to tests/run's sanitizer directory: its reports come here
    ! grep -qE '^(==[0-9]+==ERROR|.*runtime error:)' "$OUT/$name.err" || { cat "$OUT/$name.err"; fail "$name: a sanitizer report"; }
    [[ -s $OUT/$name.json ]] || fail "$name: no result"
}
sum() { jq -e ".summary.$2" "$OUT/$1.json" || fail "$1: no summary.$2"; }

run empty
[[ $(sum empty lost) == 3 && $(sum empty sent) == 100 ]] ||
    { cat "$OUT/empty.table"; fail "the empty spool: $(jq -c '.summary | {sent, lost, pending}' "$OUT/empty.json"), want 3 lost of 100"; }
ok "an empty spool: the sweep proves the 3 messages the server discarded lost"

run held hold
[[ -e $SPOOL/held ]] || fail "the held message is gone"
[[ $(sum held lost) == 0 ]] ||
    { cat "$OUT/held.table"; fail "a message the run cannot read sat in the queue, yet $(sum held lost) were proven lost"; }
[[ $(sum held pending) -ge 3 && $(sum held sent) == 100 ]] ||
    fail "held: $(jq -c '.summary | {sent, lost, pending}' "$OUT/held.json"), want the 3 pending"
[[ $(jq -r .summary.settled "$OUT/held.json") == false ]] || fail "held: the sweep settled"
ok "a queued message the run cannot read, queued after its first walk: nothing proven lost, $(sum held pending) pending"
echo "t_queue_unreadable: all checks passed"
