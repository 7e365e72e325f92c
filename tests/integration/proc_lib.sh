# proc_lib.sh: sourced by lib.sh and server_lib.sh. Stopping what a test started,
# by PID and bounded in time: a process that ignores SIGTERM is killed, and says so,
# rather than outliving its test (and holding its ports and descriptors).

STOP_MAX=${STOP_MAX:-10}    # s from SIGTERM to SIGKILL

# alive PID: the process runs (a zombie, exited but not yet waited for, does not).
alive() {
    local st
    st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ -n $st && ${st%% *} != Z ]]
}

# stop_pid PID: SIGTERM, then SIGKILL if it still runs STOP_MAX s later. 1 if it
# had to be killed. The caller waits for a child of its own to learn its status.
stop_pid() {
    local i
    kill -TERM "$1" 2>/dev/null
    for ((i = 0; i < STOP_MAX * 20; i++)); do
        alive "$1" || return 0
        sleep 0.05
    done
    kill -KILL "$1" 2>/dev/null
    return 1
}
