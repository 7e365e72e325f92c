#!/usr/bin/env bash
# t_demo_killed.sh: the demo's server (the reference server `mailsoak run` starts
# when given no target) ends with the run however the run ends: stopped by SIGTERM
# the run stops it itself; killed (SIGKILL, no time to clean up) the kernel sends
# it SIGTERM. Before, a killed run left its server serving, orphaned, for good.
# Interrupted at a terminal (Ctrl-C: SIGINT to the whole foreground process group)
# the server is not in that group: the run ends the load, then stops its server
# itself, so the report blames the server for nothing and still has its rows.
# Before, the server died of the same SIGINT first: 90 errors such as
# smtp_eod_closed and smtp_connect_refused, and mem 0B.
# A killed run leaves its mailsoak-demo.* directory (no handler runs on SIGKILL):
# the next demo removes it, by the owner file in it naming a run and a server that
# both ended, and leaves alone a live demo's directory and any directory without
# that file or not named as mkdtemp names ours. Before, the directory stayed.
source "$(dirname "$0")/lib.sh"
[[ -x $MAILSOAK && -x $MAILSOAK_SERVER ]] || { echo "skip: build first"; exit 77; }

RUN_PID= SRV= LIVE_PID=
stop_all() {
    [[ -n $RUN_PID ]] && { stop_pid "$RUN_PID"; wait "$RUN_PID" 2>/dev/null; }
    [[ -n $LIVE_PID ]] && { stop_pid "$LIVE_PID"; wait "$LIVE_PID" 2>/dev/null; }
    [[ -n $SRV ]] && stop_pid "$SRV"
    cleanup
}
trap stop_all EXIT

# demo NAME [LAUNCHER...]: a demo run in the background; sets RUN_PID and SRV (its
# server's pid).
demo() {
    local i name=$1
    shift
    : >"$WORK/$name.err"             # read below before the child may have opened it
    TMPDIR=$WORK "$@" "$MAILSOAK" run --no-check --duration 30s --set users.count=5 --interval 200ms \
        --json "$WORK/$name.json" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    RUN_PID=$!
    SRV=
    for ((i = 0; i < 200; i++)); do
        SRV=$(sed -n 's/.*soaking the reference server (pid \([0-9]*\),.*/\1/p' "$WORK/$name.err")
        [[ -n $SRV ]] && break
        sleep 0.05
    done
    [[ -n $SRV ]] && alive "$SRV"
}

# demo_dir NAME: the directory the demo NAME said it soaks from.
demo_dir() {
    sed -n 's/.*soaking the reference server (pid [0-9]*, .*, \([^,]*\))$/\1/p' "$WORK/$1.err"
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

# A demo that stays alive meanwhile: its directory must survive the clean-up.
check "a live demo starts" demo live
LIVE_PID=$RUN_PID
live_dir=$(demo_dir live)
RUN_PID=
check "the demo's server starts again" demo kill
killed_dir=$(demo_dir kill)
sleep 1
kill -KILL "$RUN_PID"
wait "$RUN_PID" 2>/dev/null
RUN_PID=
check "SIGKILL: the server gets SIGTERM from the kernel and ends within 2 s" gone "$SRV" 2
check "SIGKILL: the server logged the signal" grep -q "received signal 15" "$killed_dir/server.log"
check "SIGKILL: the run's directory is left ($killed_dir): nothing of the run could run" test -d "$killed_dir"
SRV=
# Not ours to remove: no owner file; a name mkdtemp would not make, though its
# owner file names runs long gone.
mkdir "$WORK/mailsoak-demo.nofile" "$WORK/mailsoak-demo.longername"
echo "mailsoak-demo run=1 start=1 server=1 server_start=1" >"$WORK/mailsoak-demo.longername/owner"

# As a terminal's Ctrl-C: the run leads a process group of its own (setsid, as a
# shell's foreground job would), and SIGINT goes to the whole group once mail flows.
check "the demo's server starts in the run's process group" demo int setsid
check "the next demo removed the killed run's directory" test ! -e "$killed_dir"
check "the next demo said so" grep -qF "removed $killed_dir, left by demo run" "$WORK/int.err"
check "a live demo's directory is kept" test -d "$live_dir" -a -s "$live_dir/owner"
check "a directory without an owner file is kept" test -d "$WORK/mailsoak-demo.nofile"
check "a directory named otherwise is kept" test -d "$WORK/mailsoak-demo.longername"
for ((i = 0; i < 200; i++)); do
    grep -qE 'sent [1-9]' "$WORK/int.err" && break
    sleep 0.05
done
check "the run sends mail" grep -qE 'sent [1-9]' "$WORK/int.err"
kill -INT -- "-$RUN_PID"
wait "$RUN_PID"
rc=$?
RUN_PID=
check "group SIGINT: the run exits 130 (128 + SIGINT)" eq "$rc" 130
check "group SIGINT: the run stopped its server" gone "$SRV" 1
SRV=
cat "$WORK/int.out"
check "group SIGINT: no error blamed on the server" eq \
    "$(jq -c '.summary.errors_by_class | with_entries(select(.value > 0))' "$WORK/int.json")" "{}"
check "group SIGINT: the server's memory measured" gt "$(jq '.summary.mem // 0' "$WORK/int.json")" 0
check "group SIGINT: the server still there at the last sample" gt "$(jq '.summary.mem_final // 0' "$WORK/int.json")" 0
check "group SIGINT: the table's mem row has a figure" grep -qE '^mem +[1-9][0-9.]*[KMG]B( \(RSS [0-9.]+[KMG]B\)| RSS)$' "$WORK/int.out"
dir=$(sed -n 's/.*soaking the reference server (pid [0-9]*, .*, \([^,]*\))$/\1/p' "$WORK/int.err")
check "group SIGINT: the demo's directory ($dir) is gone" test -n "$dir" -a ! -e "$dir"
kill -TERM "$LIVE_PID"
wait "$LIVE_PID"
rc=$?
LIVE_PID=
check "the live demo, stopped, exits 143" eq "$rc" 143
check "the live demo removed its own directory" test ! -e "$live_dir"
finish
