#!/usr/bin/env bash
# t_report_html: renders reports made from the fixture runs in headless Chromium and
# checks what a reader gets: the page loads with no console message, every chart has
# one line per run with a data series per label, runs without a collector leave gaps
# (not zeros), strings from the files stay text, and a screenshot is kept in ARTEFACTS.
# Then a real run against the reference server losing and corrupting mail: the page
# shows the evidence the JSON holds (each lost and corrupted example, a latency table
# with each command's p50, p90, p99 and max, the seed exact, only log classes with
# hits) and draws only the server's crashes and restarts across the charts, not the
# run's own notes (the queue recognised at the start). Before, none of these held.
set -uo pipefail
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
MAILSOAK=${MAILSOAK:-$TOP/build/mailsoak}
MAILSOAK_SERVER=${MAILSOAK_SERVER:-$TOP/build/mailsoak-server}
ARTEFACTS=${ARTEFACTS:-$TOP/build/test-artefacts}
FIX=$TOP/tests/fixtures/results
mkdir -p "$ARTEFACTS"

fail() { echo "FAIL: $*"; exit 1; }

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $CHROMIUM ]]; then
    # Run without scripts/test: install the tests' packages from the one list.
    if [[ $(id -u) -eq 0 ]]; then
        "$TOP/scripts/deps" install test
        CHROMIUM=$(command -v chromium || true)
    fi
    [[ -n $CHROMIUM ]] || { echo "skip: chromium is not installed and cannot be installed here (not root)"; exit 77; }
fi
command -v jq >/dev/null || { echo "skip: jq is needed to read the fixtures independently"; exit 77; }
[[ -x $MAILSOAK ]] || fail "$MAILSOAK is not built"

WORK=$(mktemp -d)
PROFILES=()
SRV=
. "$TOP/tests/integration/proc_lib.sh"
cleanup() { [[ -z $SRV ]] || stop_pid "$SRV"; rm -rf "$WORK" "${PROFILES[@]}"; }
trap cleanup EXIT

# chrome OUT_DOM LOG URL [extra flags]: one headless run, bounded in time, loopback-free.
chrome() {
    local dom=$1 log=$2 url=$3
    shift 3
    local profile
    profile=$(mktemp -d)
    PROFILES+=("$profile")
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --enable-logging=stderr --v=0 "$@" "$url" >"$dom" 2>"$log"
}

console_lines() { grep -E ':CONSOLE\(|:CONSOLE:|Uncaught' "$1" || true; }

# The console check must be able to see something: a page that logs must be caught.
echo '<!DOCTYPE html><title>canary</title><script>console.error("canary-message")</script>' >"$WORK/canary.html"
chrome "$WORK/canary.dom" "$WORK/canary.log" "file://$WORK/canary.html" --dump-dom
console_lines "$WORK/canary.log" | grep -q canary-message ||
    fail "chromium's console output is not visible in its log; the console check would be blind"

# ---- report 1: the eight fixture runs (four backends, two repeats each) ----
"$MAILSOAK" report -o "$WORK/report.html" --csv "$WORK/timeline.csv" "$FIX"/{maildir,mbox,sdbox,mdbox}-{1,2}.json ||
    fail "mailsoak report failed"
cp "$WORK/report.html" "$ARTEFACTS/report.html"

# Self-contained: nothing to fetch, no script.
if grep -nE '<script|<link|<img|<iframe|@import|url\(|src=|href="(https?:)?//' "$WORK/report.html" | head -5 | grep .; then
    fail "the report refers to something outside itself"
fi

chrome "$WORK/report.dom" "$WORK/report.log" "file://$WORK/report.html" --dump-dom || fail "chromium failed on the report"
[[ -s $WORK/report.dom ]] || fail "chromium dumped no DOM"
if console_lines "$WORK/report.log" | grep .; then
    fail "console messages while loading the report"
fi

# One line per chart from the dumped DOM: id, series paths, distinct labels, data-series.
charts() {
    awk 'BEGIN { RS = "<figure " } NR > 1 {
        rec = $0; sub(/<\/figure>.*/, "", rec)
        if (!match(rec, /id="[^"]*"/)) next
        id = substr(rec, RSTART + 4, RLENGTH - 5)
        ds = ""; if (match(rec, /data-series="[0-9]+"/)) ds = substr(rec, RSTART + 13, RLENGTH - 14)
        n = 0; delete seen; nl = 0; r = rec
        while (match(r, /<path class="series" data-label="[^"]*"/)) {
            n++; lab = substr(r, RSTART + 33, RLENGTH - 34)
            if (!(lab in seen)) { seen[lab] = 1; nl++ }
            r = substr(r, RSTART + RLENGTH)
        }
        bars = 0; delete cls; nc = 0; r = rec
        while (match(r, /<rect class="bar" data-class="[^"]*"/)) {
            c = substr(r, RSTART + 30, RLENGTH - 31); if (!(c in cls)) { cls[c] = 1; nc++ }
            r = substr(r, RSTART + RLENGTH)
        }
        lanes = 0; r = rec
        while (match(r, /<g class="lane"/)) { lanes++; r = substr(r, RSTART + RLENGTH) }
        print id, n, nl, ds, nc, lanes
    }' "$1"
}
charts "$WORK/report.dom" >"$WORK/charts.txt"
cat "$WORK/charts.txt"

# Expected from the fixtures themselves: the fixed charts plus a p99 chart per command.
ncmds=$(jq -r '.timeline[].latency // {} | keys[]' "$FIX"/*.json | grep -vx delivery | sort -u | wc -l)
nline=$(grep -c '^chart-' "$WORK/charts.txt")
[[ $nline -eq $((16 + ncmds)) ]] || fail "expected $((16 + ncmds)) time charts, found $nline"
while read -r id n nl ds _; do
    [[ $id == chart-* ]] || continue
    [[ $n -eq 8 && $nl -eq 4 ]] || fail "$id: $n series of $nl labels, expected 8 runs of 4 labels"
    [[ $ds -eq $n ]] || fail "$id: says data-series=$ds but draws $n"
done <"$WORK/charts.txt"
# Every series has points (a path with at least 50 segments for 60 entries).
short=$(grep -oE '<path class="series"[^>]* d="[^"]*"' "$WORK/report.dom" | awk '{ if (gsub(/ L/, "&") < 50) n++ } END { print n + 0 }')
[[ $short -le 0 ]] || fail "$short series have fewer than 50 points"

# Errors by class: one chart per label, a bar class per error class the label had.
for label in maildir mbox sdbox mdbox; do
    want_err=$(jq -r '.timeline[].errors_by_class // {} | to_entries[] | select(.value > 0) | .key' "$FIX/$label"-*.json | sort -u | wc -l)
    want_log=$(jq -r '.timeline[].server.log_hits // {} | to_entries[] | select(.value > 0) | .key' "$FIX/$label"-*.json | sort -u | wc -l)
    line=$(grep -F "data-label=\"$label\"" "$WORK/report.dom" | grep -o 'id="classes-[0-9]*"' | head -1 | cut -d'"' -f2)
    [[ -n $line ]] || fail "no errors-by-class chart for $label"
    read -r _ _ _ ds nc lanes < <(grep "^$line " "$WORK/charts.txt")
    [[ $nc -eq $want_err && $ds -eq $want_err ]] || fail "$label: $nc error classes drawn (says $ds), expected $want_err"
    [[ $lanes -eq $want_log ]] || fail "$label: $lanes log-hit lanes, expected $want_log"
done

# The summary table: a column per label, in order, with the repeats' count.
grep -q '<thead><tr><th></th><th>maildir</th><th>mbox</th><th>sdbox</th><th>mdbox</th></tr></thead>' "$WORK/report.dom" ||
    fail "summary table header is not maildir, mbox, sdbox, mdbox"

# Timeline CSV: a row per file per entry.
want_rows=$(jq '.timeline | length' "$FIX"/*.json | awk '{ s += $1 } END { print s }')
got_rows=$(($(wc -l <"$WORK/timeline.csv") - 1))
[[ $got_rows -eq $want_rows ]] || fail "timeline CSV has $got_rows rows, expected $want_rows"

chrome /dev/null "$WORK/shot.log" "file://$WORK/report.html" --hide-scrollbars \
    --screenshot="$ARTEFACTS/report.png" --window-size=1400,3000 || fail "screenshot failed"
[[ $(head -c 8 "$ARTEFACTS/report.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
    fail "no PNG screenshot"
echo "screenshot: $ARTEFACTS/report.png"

# ---- report 2: runs without a collector, and a hostile label ----
evil='<script>alert(1)</script> & "q"'
for i in 1 2; do
    jq --arg l "$evil" '.label = $l | del(.timeline[].server)
        | .summary |= del(.spool, .mem, .mem_final, .input, .output, .ibytes, .obytes,
                          .store_messages, .store_bytes, .log_hits, .log_classes, .server_crashes)' \
        "$FIX/sdbox-$i.json" >"$WORK/nocollector-$i.json"
done
"$MAILSOAK" report -o "$WORK/partial.html" "$FIX"/maildir-{1,2}.json "$WORK"/nocollector-{1,2}.json ||
    fail "report of runs without a collector failed"
chrome "$WORK/partial.dom" "$WORK/partial.log" "file://$WORK/partial.html" --dump-dom || fail "chromium failed"
if console_lines "$WORK/partial.log" | grep .; then
    fail "console messages while loading the partial report"
fi
grep -q '<script' "$WORK/partial.dom" && fail "a label became a script element"
grep -qF '&lt;script&gt;alert(1)&lt;/script&gt; &amp; "q"' "$WORK/partial.dom" || fail "the hostile label is not shown as text"
charts "$WORK/partial.dom" >"$WORK/pcharts.txt"
for id in spool store_messages store_bytes mem input output ibytes obytes procs log_hits; do
    read -r _ n nl _ < <(grep "^chart-$id " "$WORK/pcharts.txt")
    [[ $n -eq 2 && $nl -eq 1 ]] || fail "chart-$id: $n series of $nl labels; expected only the 2 runs with a collector"
done
for id in rate_in rate_out errors delivery_p99; do
    read -r _ n nl _ < <(grep "^chart-$id " "$WORK/pcharts.txt")
    [[ $n -eq 4 && $nl -eq 2 ]] || fail "chart-$id: $n series of $nl labels; expected 4 runs of 2 labels"
done
# "-" for what was not measured, in the summary's mem row, never 0.
mem_row=$(grep -o '<tr><th>mem</th>.*' "$WORK/partial.dom" | head -1 | sed 's#</tr>.*##')
[[ $mem_row == *'<td>-</td>' ]] || fail "mem of runs without a collector is not '-': $mem_row"
echo "ok: $nline time charts of 8 runs, class charts per label, partial runs leave gaps"

# ---- report 3: a real run that lost and corrupted mail ----
mkdir -p "$WORK/srv" "$WORK/spool"
"$MAILSOAK_SERVER" --listen-smtp 127.0.0.1:0 --listen-pop3 127.0.0.1:0 --ready-file "$WORK/srv/ready" \
    --log "$WORK/srv/log" --set users.count=20 --set server.seed=7 --set fault.store.lose_every=7 \
    --set fault.store.lose_max=3 --set fault.store.corrupt_every=50 >/dev/null 2>"$WORK/srv/err" &
SRV=$!
for _ in $(seq 100); do [[ -s $WORK/srv/ready ]] && break; sleep 0.05; done
read -r _ smtp pop3 _ <"$WORK/srv/ready" || fail "the reference server did not start: $(cat "$WORK/srv/err")"
seed=2636132211000123        # above 2^53 / 4: printed as a double it would not replay
timeout 60 "$MAILSOAK" run --no-check --smtp "${smtp#smtp=}" --pop3 "${pop3#pop3=}" --set users.count=20 \
    --senders 4 --readers 2 --messages 300 --duration 2s --drain 2s --set run.sweep_timeout=5s --settle 1s --seed $seed \
    --set server.pid=$SRV --set server.log="$WORK/srv/log" --set server.spool_dir="$WORK/spool" --set server.spool_format=files \
    --json "$WORK/real.json" >/dev/null 2>"$WORK/real.err"
rc=$?
# 4: the integrity gates fail on the losses and corruption made on purpose
[[ $rc == 4 ]] || fail "the real run failed (exit $rc, want 4): $(tail -3 "$WORK/real.err")"
stop_pid "$SRV"
SRV=
R=$WORK/real.json
[[ $(jq '.summary.lost_examples | length' "$R") -gt 0 && $(jq '.summary.corruption_examples | length' "$R") -gt 0 ]] ||
    fail "the real run has no lost or corrupted examples to show: $(jq -c '.summary | {sent, lost, corrupted, pending, pending_unswept, pending_unsettled, settled}' "$R")"
# The same run with a crash added, so that the charts have a server event to draw.
jq '.label = "crashed" | .events += [{"t": 1.5, "kind": "crash", "text": "master gone"}]' "$R" >"$WORK/crash.json"
# --force: jq writes the rate 0.0 as 0, which report takes for another workload
"$MAILSOAK" report --force -o "$WORK/real.html" "$R" "$WORK/crash.json" || fail "report of the real run failed"
grep -q '<h2 id="verdict">Verdict</h2>' "$WORK/real.html" && grep -qE '<p class="warn"><b>[^<]*</b>: FAILED: [0-9]+ lost' "$WORK/real.html" &&
    grep -qE '<li>lost [0-9]+, must be = 0</li>' "$WORK/real.html" || fail "the report has no verdict with its failed gates"
cp "$WORK/real.html" "$ARTEFACTS/report-real.html"
chrome "$WORK/real.dom" "$WORK/real.log" "file://$WORK/real.html" --dump-dom || fail "chromium failed on the real report"
if console_lines "$WORK/real.log" | grep .; then
    fail "console messages while loading the real report"
fi
D=$WORK/real.dom
# The ledger's evidence, every example of both runs.
nlost=$(jq '.summary.lost_examples | length' "$R")
[[ $(grep -c '<tr class="lost">' "$D") -eq $((2 * nlost)) ]] || fail "$((2 * nlost)) lost examples expected in the page"
while read -r id; do
    grep -qF "<code>$id</code>" "$D" || fail "lost message $id is not in the page"
done < <(jq -r '.summary.lost_examples[].id' "$R")
ncorr=$(jq '.summary.corruption_examples | length' "$R")
[[ $(grep -c '<tr class="corrupted">' "$D") -eq $((2 * ncorr)) ]] || fail "$((2 * ncorr)) corruption examples expected"
# A latency table: a row per command and delivery, p50 p90 p99 max as the JSON has them.
fmt() { awk -v x="$1" 'BEGIN { printf("%.2f", x) }'; }     # as the run's own table
nlat=$(jq '.summary.latency | length' "$R")
table=$(sed -n '/<table class="latency">/,/<\/table>/p' "$D")
[[ $(grep -c '^<tr><th>' <<<"$table") -eq $nlat ]] || fail "the latency table does not have the $nlat rows of the JSON"
for cmd in smtp.eod pop3.retr delivery; do
    want="<tr><th>$cmd</th>"
    for p in p50 p90 p99 max; do want+="<td>$(fmt "$(jq ".summary.latency[\"$cmd\"].$p" "$R")")</td>"; done
    grep -qF "$want" <<<"$table" || fail "latency row of $cmd: want $want"
done
# The seed as it was, to replay the run with.
grep -qF "<td>$seed</td>" "$D" || fail "the seed $seed is not shown exactly"
# Only the log classes with hits: the run had classes with none.
zero=$(jq -r '.summary.log_classes | to_entries[] | select(.value.count == 0) | .key' "$R")
[[ -n $zero ]] || fail "the real run has no log class without hits to leave out"
for c in $zero; do
    grep -qF "<td class=\"l\">log</td><td class=\"l\">$c</td>" "$D" && fail "the log class $c (no hits) is listed"
done
# Markers: the added crash on the charts, the queue recognised at the start not.
jq -e '[.events[] | select(.kind == "spool")] | length > 0' "$R" >/dev/null || fail "the run noted no spool"
markers=$(grep -o '<line class="event"[^>]*><title>[^<]*' "$D")
[[ -n $markers ]] || fail "the crash is not drawn"
if grep -v ': crash: master gone$' <<<"$markers" | grep .; then
    fail "markers drawn for what is not a server event"
fi
echo "ok: the real run's $nlost lost and $ncorr corrupted examples, $nlat latency rows, the seed, only classes with hits, only server events drawn"
