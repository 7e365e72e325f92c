# collector_lib.sh: sourced (after lib.sh) by the t_collector*.sh tests. Builds
# collector_probe.c with this build's compiler and flags (sanitizers included), runs
# it beside the load with the testbed's [server] settings, and stops it by PID.

PROBE=$WORK/collector_probe
PROBE_PID=""

build_probe() {
    local flags f cc_flags=()
    read -r -a flags <"$TOP/$BUILD/.settings"
    for f in "${flags[@]}"; do
        [[ $f == -MMD || $f == -MP ]] || cc_flags+=("$f")
    done
    # shellcheck disable=SC2046
    if ! (cd "$TOP" && "${cc_flags[@]}" -o "$PROBE" tests/integration/collector_probe.c \
        "$BUILD/libmsclient.a" "$BUILD/libmscommon.a" \
        $(pkg-config --libs openssl inih jansson libcurl sqlite3 libpq libmariadb) -lpthread -lm); then
        echo "FAIL: cannot build the collector probe"
        exit 1
    fi
}

# start_probe OUT.json [mailsoak run options]: samples until stop_probe; fd 7 is its
# stdin, so daemons started meanwhile must get 7>&- or they would keep it open.
start_probe() {
    local out=$1
    shift
    rm -f "$WORK/probe.in" "$WORK/probe.out"
    mkfifo "$WORK/probe.in"
    "$PROBE" "$out" "$@" <"$WORK/probe.in" >"$WORK/probe.out" 2>"$WORK/probe.err" &
    PROBE_PID=$!
    exec 7>"$WORK/probe.in"
    for _ in $(seq 1 100); do
        grep -q ready "$WORK/probe.out" 2>/dev/null && return 0
        kill -0 "$PROBE_PID" 2>/dev/null || break
        sleep 0.1
    done
    cat "$WORK/probe.err"
    echo "FAIL: the collector did not start"
    exit 1
}

# stop_probe: takes the final sample and writes the JSON; 1 if the probe failed.
stop_probe() {
    [[ -n $PROBE_PID ]] || return 0
    echo stop >&7
    exec 7>&-
    wait "$PROBE_PID"
    local rc=$?
    PROBE_PID=""
    cat "$WORK/probe.err"
    return "$rc"
}

kill_probe() {
    if [[ -n $PROBE_PID ]]; then
        kill "$PROBE_PID" 2>/dev/null
        wait "$PROBE_PID" 2>/dev/null
        PROBE_PID=""
    fi
}
trap 'kill_probe; cleanup' EXIT
