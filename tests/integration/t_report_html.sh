#!/usr/bin/env bash
# t_report_html: renders reports made from the fixture runs in headless Chromium and
# checks what a reader gets: the page loads with no console message, every chart has
# one line per run with a data series per label, runs without a collector leave gaps
# (not zeros), strings from the files stay text, and a screenshot is kept in ARTEFACTS.
set -uo pipefail
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
MAILSOAK=${MAILSOAK:-$TOP/build/mailsoak}
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
cleanup() { rm -rf "$WORK" "${PROFILES[@]}"; }
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
