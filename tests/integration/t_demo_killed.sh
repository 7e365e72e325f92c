#!/usr/bin/env bash
# t_demo_killed.sh: the demo's server (the reference server `mailsoak run` starts
# when given no target) ends with the run however the run ends: stopped by SIGTERM
# the run stops it itself; killed (SIGKILL, no time to clean up) the kernel sends
# it SIGTERM. Before, a killed run left its server serving, orphaned, for good.
source "$(dirname "$0")/lib.sh"
[[ -x $MAILSOAK && -x $MAILSOAK_SERVER ]] || { echo "skip: build first"; exit 77; }

RUN_PID= SRV=
stop_all() {
    [[ -n $RUN_PID ]] && { stop_pid "$RUN_PID"; wait "$RUN_PID" 2>/dev/null; }
    [[ -n $SRV ]] && stop_pid "$SRV"
    cleanup
}
trap stop_all EXIT

# demo NAME: a demo run in the background; sets RUN_PID and SRV (its server's pid).
demo() {
    local i
    : >"$WORK/$1.err"                # read below before the child may have opened it
    TMPDIR=$WORK "$MAILSOAK" run --no-check --duration 30s --set users.count=5 \
        --json "$WORK/$1.json" >"$WORK/$1.out" 2>"$WORK/$1.err" &
    RUN_PID=$!
    SRV=
    for ((i = 0; i < 200; i++)); do
        SRV=$(sed -n 's/.*soaking the reference server (pid \([0-9]*\),.*/\1/p' "$WORK/$1.err")
        [[ -n $SRV ]] && break
        sleep 0.05
    done
    [[ -n $SRV ]] && alive "$SRV"
}

# gone PID SECONDS: PID ends within SECONDS.
gone() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        alive "$1" || return 0
        sleep 0.05
    done
    echo "     pid $1 still runs $2 s later" >&2
    return 1
}

check "the demo's server starts" demo term
sleep 1
kill -TERM "$RUN_PID"
wait "$RUN_PID"
rc=$?
check "SIGTERM: the run exits 143 (128 + SIGTERM)" eq "$rc" 143
check "SIGTERM: the run wrote its JSON" test -s "$WORK/term.json"
RUN_PID=
check "SIGTERM: the run stopped its server" gone "$SRV" 1
SRV=

check "the demo's server starts again" demo kill
sleep 1
kill -KILL "$RUN_PID"
wait "$RUN_PID" 2>/dev/null
RUN_PID=
check "SIGKILL: the server gets SIGTERM from the kernel and ends within 2 s" gone "$SRV" 2
check "SIGKILL: the server logged the signal" grep -q "received signal 15" "$WORK"/mailsoak-demo.*/server.log
SRV=
finish
