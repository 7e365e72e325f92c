#!/usr/bin/env bash
# mailsoak probe on loopback against the reference server: /metrics passes
# `promtool check metrics` and holds the server's figures; a run with both a local
# collector and the probe shows the same rows from each (side_by_side in
# probe_lib.sh says what may differ and why), including a log line written
# mid-run; on one host the estimated clock offset is within its error of 0; a
# wrong token is refused, a missing probe stops the run before any load (exit 2),
# and a probe that dies mid-run is counted, not fatal.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/probe_lib.sh"
source "$(dirname "$0")/prom_lib.sh"
command -v promtool >/dev/null || { echo "skip: needs promtool (Debian package prometheus)" >&2; exit 77; }
command -v jq >/dev/null || { echo "skip: needs jq" >&2; exit 77; }

SRV_PID=
stop_all() {
    [[ -n ${PROBE_PID:-} ]] && { stop_pid "$PROBE_PID"; wait "$PROBE_PID" 2>/dev/null; }
    [[ -n $SRV_PID ]] && { stop_pid "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; }
    cleanup
}
trap stop_all EXIT

mkdir -p "$WORK/mail"
"$MAILSOAK_SERVER" --listen-smtp 127.0.0.1:0 --listen-pop3 127.0.0.1:0 --store maildir --store-dir "$WORK/mail" \
    --log "$WORK/server.log" --pidfile "$WORK/server.pid" --ready-file "$WORK/ready" --set users.count=20 \
    >/dev/null 2>"$WORK/server.err" &
SRV_PID=$!
for _ in $(seq 100); do [[ -s $WORK/ready ]] && break; sleep 0.05; done
read -r _ smtp pop3 _ <"$WORK/ready" || { echo "FAIL: the reference server did not start"; exit 1; }
smtp=${smtp#smtp=} pop3=${pop3#pop3=}
MARK="mailsoak-t-probe-marker-$$"
cat >"$WORK/server.conf" <<CONF
[server]
pidfile = $WORK/server.pid
store_dir = $WORK/mail
log = $WORK/server.log
log_class = marker: $MARK
sample_interval = 250ms
CONF
start_probe PROBE 127.0.0.1:0 s3cret "" "$WORK/server.conf"

curl -s -o /dev/null -w '%{http_code}' "$PROBE/metrics" >"$WORK/code"
check "without the token: 401" eq "$(cat "$WORK/code")" 401
curl -sf -H 'Authorization: Bearer s3cret' "$PROBE/metrics" >"$WORK/metrics.txt"
check "the probe's /metrics passes promtool" promtool check metrics <"$WORK/metrics.txt"
check "/metrics: one server process" grep -qx 'mailsoak_server_processes 1' "$WORK/metrics.txt"
check "/metrics: the marker class" grep -q "mailsoak_server_log_lines_total{class=\"marker\"} 0" "$WORK/metrics.txt"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer s3cret' "$PROBE/samples?since=x")
check "/samples?since=x: 400" eq "$code" 400

run() {   # run JSON [more mailsoak args]: a bounded soak of the reference server
    local json=$1
    shift
    # (no kept-up gate: two readers trail 300 msg/s of a loaded machine's ASan
    # build, a backlog this test is not about; its exit statuses are the probe's)
    "$MAILSOAK" run --no-check --smtp "$smtp" --pop3 "$pop3" --set users.count=20 --senders 3 --readers 2 \
        --rate 300 --duration 3s --drain 5s --interval 500ms --seed 5 --set gate.kept_up=no --json "$json" "$@"
}
(sleep 1.5; printf 'fatal: %s\n' "$MARK" >>"$WORK/server.log") &
marker=$!
run "$WORK/run.json" -c "$WORK/server.conf" --probe "srv=$PROBE" --set server.probe_token=s3cret \
    >"$WORK/table.txt" 2>"$WORK/live.txt"
check "run with a local collector and the probe: exit 0" eq "$?" 0
wait "$marker"
cat "$WORK/table.txt"
curl -sf -H 'Authorization: Bearer s3cret' "$PROBE/samples?since=0" >"$WORK/samples.json"
side_by_side "$WORK/run.json" local srv "$WORK/samples.json"
check "the marker line counted once by each" eq \
    "$(jq -c '[.servers.local.log_classes.marker.count, .servers.srv.log_classes.marker.count]' "$WORK/run.json")" "[1,1]"
check "the same example line from each" eq \
    "$(jq -r '.servers.srv.log_classes.marker.examples[0].line' "$WORK/run.json")" \
    "$(jq -r '.servers.local.log_classes.marker.examples[0].line' "$WORK/run.json")"
check "the table shows both sources side by side" grep -qE '^obytes +[0-9.]+[KMG]?B +[0-9.]+[KMG]?B$' "$WORK/table.txt"
# One host, one clock: the true offset is 0, so the estimate must be within its error.
check "clock offset within its error of 0" jqe \
    '.servers.srv | (.clock_offset_ms | fabs) <= .clock_error_ms and .clock_error_ms < 50' "$WORK/run.json"
check "no pull failed" eq "$(jq .servers.srv.pull_errors "$WORK/run.json")" 0

run "$WORK/bad.json" --probe "$PROBE" --set server.probe_token=wrong >/dev/null 2>"$WORK/bad.txt"
check "a wrong token: exit 2" eq "$?" 2
check "a wrong token: said so" grep -q 'HTTP 401 (wrong or missing server.probe_token)' "$WORK/bad.txt"
check "a wrong token: no load sent" test ! -e "$WORK/bad.json"

# The probe dies mid-run: the run goes on, counts the failed pulls, and says so.
run "$WORK/dies.json" --probe "$PROBE" --set server.probe_token=s3cret >/dev/null 2>"$WORK/dies.txt" &
rpid=$!
# mid-run: once its live line says it sends (a probe gone before the run began
# stops it, exit 2, as above)
wait_for 60 grep -q 's send \]' "$WORK/dies.txt"
kill "$PROBE_PID"
wait "$PROBE_PID"
PROBE_PID=
wait "$rpid"
check "a probe that dies mid-run: exit 0" eq "$?" 0
check "a probe that dies mid-run: failed pulls counted" gt "$(jq '.servers | .[] | .pull_errors' "$WORK/dies.json")" 0
check "a probe that dies mid-run: an event" jqe '[.events[] | select(.kind == "probe_failing")] | length == 1' \
    "$WORK/dies.json"

run "$WORK/none.json" --probe "$PROBE" >/dev/null 2>"$WORK/none.txt"
check "no probe listening: exit 2" eq "$?" 2
check "no probe listening: said so" grep -q "server.probe: $PROBE: Couldn't connect" "$WORK/none.txt"

out=$(docs_prometheus docs/hosts.md "### The probe's metrics" "$WORK")
check "docs/hosts.md, the probe's metrics: promtool accepts the scrape config and the queries ($out)" eq "$?" 0
finish
