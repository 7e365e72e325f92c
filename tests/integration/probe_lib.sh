# probe_lib.sh: sourced (after lib.sh) by the tests of `mailsoak probe`. Starts a
# probe (in a network namespace or not) and compares, side by side, what a run's
# local collector and the probe measured of the same server in the same run.

# start_probe VAR LISTEN TOKEN NS CONF...: a probe on LISTEN reading the CONF files,
# in namespace NS (or here, when NS is empty); its base URL in VAR, its PID in
# PROBE_PID (stopped by ns_cleanup when started in a namespace, else by the test).
start_probe() {
    local var=$1 listen=$2 token=$3 ns=$4 log="$WORK/probe.$RANDOM.err" url= c
    shift 4
    local args=(probe --listen "$listen" --token "$token")
    for c in "$@"; do args+=(-c "$c"); done
    if [[ -n $ns ]]; then
        ns_bg PROBE_PID "$ns" "$MAILSOAK" "${args[@]}" 2>"$log"
    else
        "$MAILSOAK" "${args[@]}" 2>"$log" &
        PROBE_PID=$!
    fi
    for _ in $(seq 100); do
        url=$(grep -o 'http://[^ ]*/metrics' "$log" 2>/dev/null) && break
        kill -0 "$PROBE_PID" 2>/dev/null || break
        sleep 0.05
    done
    [[ -n $url ]] || { cat "$log"; echo "FAIL: the probe did not start"; exit 1; }
    printf -v "$var" '%s' "${url%/metrics}"
}

# jqe FILTER FILE: true when the filter holds (jq -e), quietly.
jqe() { jq -e "$1" "$2" >/dev/null; }

# side_by_side JSON A B SAMPLES: the figures sources A and B of the run gave of one
# server must agree. SAMPLES is the probe's /samples?since=0 after the run (its
# samples over the run, for the mem tolerance). What may differ, and by how much:
# - spool, store messages and bytes: the last values, taken within milliseconds of
#   each other after the drain emptied queue and mailboxes: exactly equal.
# - input, output, ibytes, obytes: deltas over each source's window; the windows
#   differ at each edge by the time between the two sources' samples (window_s) plus
#   the probe's clock error; in that time the server works at most at its peak rate
#   (from the timeline, which adds both sources up: half of it is one server).
# - mem (peak RSS): each source found its peak at its own sampling instants, so the
#   peaks differ at most by the largest change between two consecutive samples.
# - log hits: lines counted by time; a line written mid-run is in both windows.
side_by_side() {
    local json=$1 a=$2 b=$3 samples=$4 key tol va vb
    local -A rows=()
    for key in spool store_messages store_bytes log_hits; do
        va=$(jq -r --arg s "$a" --arg k "$key" '.servers[$s][$k]' "$json")
        vb=$(jq -r --arg s "$b" --arg k "$key" '.servers[$s][$k]' "$json")
        check "$key: $a $va, $b $vb" eq "$vb" "$va"
    done
    for key in input output ibytes obytes; do
        tol=$(jq -r --arg a "$a" --arg b "$b" --arg k "$key" '
            (.servers[$a].window_s) as $wa | (.servers[$b].window_s) as $wb
            | ((($wa[0] - $wb[0]) | fabs) + (($wa[1] - $wb[1]) | fabs)
               + 2 * (([.servers[$a].clock_error_ms, .servers[$b].clock_error_ms] | map(. // 0) | max) / 1000)) as $gap
            | [foreach .timeline[] as $e ({t: 0, r: 0}; {t: $e.t, r: (($e.server[$k] // 0) / 2 / ([$e.t - .t, 0.001] | max))}; .r)]
            | (max // 0) as $rate | ($rate * $gap) | ceil' "$json")
        va=$(jq -r --arg s "$a" --arg k "$key" '.servers[$s][$k]' "$json")
        vb=$(jq -r --arg s "$b" --arg k "$key" '.servers[$s][$k]' "$json")
        check "$key: $a $va, $b $vb (tolerance $tol)" test $(( va > vb ? va - vb : vb - va )) -le "$tol"
        check "$key: measured at all" gt "$va" 0
    done
    tol=$(jq '[.samples | . as $s | range(1; length) | ($s[.].mem - $s[. - 1].mem) | fabs] | max // 0' "$samples")
    va=$(jq -r --arg s "$a" '.servers[$s].mem' "$json")
    vb=$(jq -r --arg s "$b" '.servers[$s].mem' "$json")
    check "mem: $a $va, $b $vb (tolerance $tol, the largest step between samples)" \
        test $(( va > vb ? va - vb : vb - va )) -le "$tol"
}
