#!/usr/bin/env bash
# t_config_errors.sh: every kind of bad setting gets one exit status (2), a message
# naming the key (with file:line when it came from a file) and what it accepts, and
# leaves nothing behind: in particular no mailsoak-demo.* directory, since without a
# target each of these runs would be the demo. Cases, each "exit status, message":
# values outside a key's bounds (10^8 senders once aborted with SIGABRT, exit 134,
# from an allocation of 10^8 sessions, and left the demo's directory; size 0-100G,
# rcpts 0 and an interval of 0 were taken silently); more sessions than the
# descriptors this process may open.
source "$(dirname "$0")/lib.sh"

# fails WANT_STATUS WANT_TEXT ARGS...: mailsoak run ARGS exits WANT_STATUS, says
# WANT_TEXT (a fixed string) on stderr, prints nothing on stdout and leaves no
# directory in its TMPDIR.
n=0
fails() {
    local status=$1 text=$2 rc
    shift 2
    n=$((n + 1))
    mkdir -p "$WORK/tmp.$n"
    (cd "$WORK" && TMPDIR=$WORK/tmp.$n "$MAILSOAK" run "$@" --duration 2s >"$WORK/out.$n" 2>"$WORK/err.$n")
    rc=$?
    check "run $*: exit $status" eq "$rc" "$status" || cat "$WORK/err.$n"
    check "run $*: says '$text'" grep -qF -- "$text" "$WORK/err.$n" || cat "$WORK/err.$n"
    check "run $*: nothing on stdout" test ! -s "$WORK/out.$n"
    check "run $*: no directory left" eq "$(ls -A "$WORK/tmp.$n")" ""
}
conf() { printf "$2" >"$WORK/$1"; }   # conf NAME TEXT: a config file in $WORK

# Bounds.
fails 2 "--senders: smtp.senders: must be between 0 and 1000000: '100000000'" --senders 100000000
conf senders.conf '[smtp]\nsenders = 100000000\n'
fails 2 "$WORK/senders.conf:2: smtp.senders: must be between 0 and 1000000: '100000000'" -c "$WORK/senders.conf"
fails 2 "--size: smtp.size: must be between 0 and 64M: '0-100G'" --size 0-100G
fails 2 "--set: smtp.rcpts: must be between 1 and 64: '0'" --set smtp.rcpts=0
fails 2 "--interval: run.interval: must be at least 100ms: '0s'" --interval 0s
fails 2 "--workers: run.workers: must be between 0 and 1024: '100000'" --workers 100000
fails 2 "--readers: pop3.readers: must be between 0 and 1000000: '2000000'" --readers 2000000
# Within the bounds, beyond this process's descriptors (a hard limit lowered here).
(ulimit -Sn 1000 && ulimit -Hn 1000 && fails 2 \
    "smtp.senders + pop3.readers: 2010 sessions need 2074 file descriptors (one each, and 64 more), and this process may open at most 1000 (the hard RLIMIT_NOFILE" \
    --senders 2000 && finish) || failures=$((failures + 1))
finish
