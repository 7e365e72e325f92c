# server_lib.sh: sourced by the t_server_*.sh tests. Starts mailsoak-server on free
# loopback ports in a temporary directory, waits for its READY file, and stops it by
# PID on exit (IMAP listens too). Also a tiny raw POP3 client on a bash /dev/tcp descriptor, for what
# curl cannot do (hold a session open, drop it without QUIT).

: "${MAILSOAK_SERVER:?run through tests/run or set MAILSOAK_SERVER}"
[[ -x $MAILSOAK_SERVER ]] || { echo "no $MAILSOAK_SERVER: run make"; exit 77; }

. "$(dirname "${BASH_SOURCE[0]}")/proc_lib.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mailsoak-srv-test.XXXXXX")
SRV_PID=
cleanup() {
    [[ -n $SRV_PID ]] && { stop_pid "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; }
    if [[ ${KEEP:-0} = 1 || -n ${FAILED:-} ]]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

fail() { FAILED=1; echo "FAIL: $*"; [[ -f $WORK/server.log ]] && tail -n 20 "$WORK/server.log"; exit 1; }
ok() { echo "ok: $*"; }

# srv_start [server args...]: sets SMTP_PORT, POP3_PORT, IMAP_PORT, SRV_PID.
srv_start() {
    rm -f "$WORK/ready"
    "$MAILSOAK_SERVER" --listen-smtp 127.0.0.1:0 --listen-pop3 127.0.0.1:0 --listen-imap 127.0.0.1:0 \
        --ready-file "$WORK/ready" --log "$WORK/server.log" --pidfile "$WORK/server.pid" "$@" \
        >"$WORK/stdout" 2>"$WORK/stderr" &
    SRV_PID=$!
    for _ in $(seq 100); do
        [[ -s $WORK/ready ]] && break
        kill -0 "$SRV_PID" 2>/dev/null || { cat "$WORK/stderr"; SRV_PID=; fail "server did not start: $*"; }
        sleep 0.05
    done
    [[ -s $WORK/ready ]] || fail "server not ready after 5s"
    local line
    line=$(cat "$WORK/ready")
    [[ $line =~ ^READY\ smtp=127\.0\.0\.1:([0-9]+)\ pop3=127\.0\.0\.1:([0-9]+)\ pid=([0-9]+)\ imap=127\.0\.0\.1:([0-9]+)( imaps=127\.0\.0\.1:([0-9]+))?$ ]] \
        || fail "bad READY line: $line"
    SMTP_PORT=${BASH_REMATCH[1]} POP3_PORT=${BASH_REMATCH[2]} IMAP_PORT=${BASH_REMATCH[4]} IMAPS_PORT=${BASH_REMATCH[6]}
    [[ ${BASH_REMATCH[3]} = "$SRV_PID" ]] || fail "READY pid ${BASH_REMATCH[3]} is not $SRV_PID"
}

srv_stop() {
    alive "$SRV_PID" || fail "server $SRV_PID already gone"
    local rc=0 killed=
    stop_pid "$SRV_PID" || killed=1
    wait "$SRV_PID" || rc=$?
    SRV_PID=
    [[ -z $killed ]] || fail "server still running ${STOP_MAX}s after SIGTERM: killed"
    [[ $rc -eq 0 ]] || { cat "$WORK/stderr"; fail "server exited $rc after SIGTERM"; }
    ! grep -qE '^(==[0-9]+==ERROR|.*runtime error:)' "$WORK/stderr" || { cat "$WORK/stderr"; fail "sanitizer report from the server"; }
}

# Raw POP3 on descriptor 3: pop_open; pop_cmd "STAT" (sets REPLY); pop_close.
pop_open() {
    exec 3<>"/dev/tcp/127.0.0.1/$POP3_PORT" || fail "cannot connect to POP3"
    IFS= read -r -t 5 REPLY <&3 || fail "no POP3 banner"
}
pop_cmd() {
    printf '%s\r\n' "$1" >&3
    IFS= read -r -t 5 REPLY <&3 || fail "no reply to $1"
    REPLY=${REPLY%$'\r'}
}
pop_close() { exec 3>&- 3<&-; }

# One message through curl (it dot-stuffs and sends the file byte for byte).
curl_send() { # file rcpt [more curl args]
    local f=$1 r=$2
    shift 2
    curl -sS --max-time 10 "smtp://127.0.0.1:$SMTP_PORT" --mail-from sender@test.local \
        --mail-rcpt "$r" -T "$f" "$@"
}
curl_imap() { # path user pass [more curl args]: imap://.../PATH (INBOX, INBOX;UID=n)
    local p=$1 u=$2 w=$3
    shift 3
    curl -sS --max-time 10 "imap://127.0.0.1:$IMAP_PORT/$p" -u "$u:$w" "$@"
}
curl_pop() { # path user pass [more curl args]
    local p=$1 u=$2 w=$3
    shift 3
    curl -sS --max-time 10 "pop3://127.0.0.1:$POP3_PORT/$p" -u "$u:$w" "$@"
}
