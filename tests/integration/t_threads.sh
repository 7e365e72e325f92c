#!/usr/bin/env bash
# t_threads.sh: every thread of a run at once, for `make tsan` above all: four
# workers (their loops, the ledger appended to by each and marked by readers of
# the others), the collector sampling the reference server's process and maildir,
# the metrics server scraped while the run goes, and the controller. The ledger
# must come out exact: everything sent was delivered, once. 6 s, <= 400 messages.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
: "${MAILSOAK:?run through tests/run or set MAILSOAK}"
[[ -x $MAILSOAK ]] || { echo "no $MAILSOAK: run make"; exit 77; }
command -v jq >/dev/null && command -v curl >/dev/null || { echo "skip: needs jq and curl"; exit 77; }

srv_start --set users.count=20 --store maildir --store-dir "$WORK/mail" --set server.fsync=no
# The rate keeps the run (and its metrics server) up for about 3 s: unpaced, the 400
# messages went through in half a second, before the first scrape.
"$MAILSOAK" run --no-check --smtp "127.0.0.1:$SMTP_PORT" --pop3 "127.0.0.1:$POP3_PORT" \
    --set users.count=20 --workers 4 --senders 8 --readers 8 --duration 3s --drain 3s \
    --messages 400 --rate 150 --seed 1 --set server.pid="$SRV_PID" --set server.store_dir="$WORK/mail" \
    --set run.interval=1s --metrics 127.0.0.1:0 --json "$WORK/out.json" >"$WORK/out" 2>&1 &
pid=$!
# Port 0: the kernel picks a free one and run says which on stderr ("metrics on URL");
# a port of our choosing could be taken, by anything's ephemeral port among others.
scraped=0 url=
for _ in $(seq 30); do
    sleep 0.2
    [[ -n $url ]] || url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/metrics' "$WORK/out" 2>/dev/null) || continue
    if curl -sf --max-time 2 "$url" >"$WORK/metrics" 2>/dev/null && [[ -s $WORK/metrics ]]; then
        scraped=1
        break
    fi
done
wait "$pid" || { cat "$WORK/out"; fail "mailsoak run failed"; }
srv_stop
ok "4 workers, the collector and the metrics server ran to the end"
((scraped)) || fail "metrics were never served (${url:-no metrics address on stderr})"
ok "metrics scraped while the run went"
s() { jq -r ".summary.$1" "$WORK/out.json"; }
sent=$(s sent)
((sent > 0)) || fail "nothing sent"
[[ $(s delivered) == "$sent" && $(s lost) == 0 && $(s duplicated) == 0 && $(s corrupted) == 0 ]] ||
    fail "ledger not exact: sent $sent, $(jq -c '.summary | {delivered,lost,duplicated,corrupted,pending}' "$WORK/out.json")"
ok "sent $sent = delivered, nothing lost, duplicated or corrupted"
[[ $(jq '[.timeline[] | .server // empty] | length' "$WORK/out.json") -gt 0 ]] || fail "the collector left no sample"
ok "the collector sampled the server"
