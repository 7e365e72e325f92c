# tests/integration/lib.sh: helpers sourced by the integration tests — a private
# testbed per test (stopped by PID on exit), JSON field access, assertions.
set -uo pipefail
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${BUILD:-build}
MAILSOAK=${MAILSOAK:-$TOP/$BUILD/mailsoak}
MAILSOAK_SERVER=${MAILSOAK_SERVER:-$TOP/$BUILD/mailsoak-server}
ARTEFACTS=${ARTEFACTS:-$TOP/$BUILD/test-artefacts}
. "$(dirname "${BASH_SOURCE[0]}")/proc_lib.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mailsoak-it.XXXXXX")
chmod 755 "$WORK"   # the testbed lives inside: postfix and dovecot users must enter
TB="" REF_PID=""
failures=0

cleanup() {
    [[ -z $REF_PID ]] || ref_down
    if [[ -n $TB ]]; then
        "$TOP/scripts/testbed" down --dir "$TB" >/dev/null 2>&1 || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

need_root() {
    if [[ $(id -u) -ne 0 ]]; then
        echo "skip: needs root to run a private Postfix + Dovecot" >&2
        exit 77
    fi
}

# testbed_up BACKEND NUSERS [testbed up OPTION...]: a fresh testbed in $WORK/tb; sources its env.
testbed_up() {
    need_root
    TB=$WORK/tb
    if ! "$TOP/scripts/testbed" up "$@" --dir "$TB" >"$WORK/testbed-up.log" 2>&1; then
        cat "$WORK/testbed-up.log" >&2
        echo "FAIL: testbed up $*" >&2
        exit 1
    fi
    # shellcheck disable=SC1091
    source "$TB/testbed.env"
}

# postfix_queued: the messages in the testbed's Postfix queue, counted by queue id and read
# until two reads in a row agree (at most 5 s). qmgr renames queue files between incoming,
# active and deferred while find walks them: a file met in two directories would count twice,
# one moved into a directory already walked not at all; a queue id is the file's name.
postfix_queued() {
    local d dirs=() n prev=-1
    for d in incoming active deferred hold maildrop; do
        [[ -d $POSTFIX_QUEUE/$d ]] && dirs+=("$POSTFIX_QUEUE/$d")
    done
    for _ in $(seq 1 50); do
        n=$(find "${dirs[@]}" -type f -printf '%f\n' 2>/dev/null | sort -u | wc -l)
        ((n == prev)) && break
        prev=$n
        sleep 0.1
    done
    echo "$n"
}

# testbed_store_count: the messages in the testbed's store (scripts/testbed count,
# independent of the servers' counters), once Postfix's queue is empty (at most 30 s).
testbed_store_count() {
    local q s
    for _ in $(seq 1 300); do
        read -r _ q < <("$TOP/scripts/testbed" count --dir "$TB" | grep '^queue')
        [[ $q == 0 ]] && break
        sleep 0.1
    done
    read -r _ s < <("$TOP/scripts/testbed" count --dir "$TB" | grep '^store')
    echo "$s"
}

# jget FILE JQ-EXPRESSION
# ref_up NAME [server args...]: a fresh reference server in $WORK/NAME serving SMTP,
# POP3 and IMAP to $USERS users (its log server.log, its output server.out); sets
# REF_PID, SMTP, POP3 and IMAP. ref_down stops it (so does the exit).
ref_up() {
    local d=$WORK/$1
    shift
    mkdir -p "$d"
    "$MAILSOAK_SERVER" --listen-smtp 127.0.0.1:0 --listen-pop3 127.0.0.1:0 --listen-imap 127.0.0.1:0 \
        --ready-file "$d/ready" --log "$d/server.log" --set users.count="$USERS" "$@" >"$d/server.out" 2>&1 &
    REF_PID=$!
    # a server that never got ready is stopped too: nothing is left running
    wait_for 10 test -s "$d/ready" || { cat "$d/server.out"; echo "FAIL: the server did not start"; ref_down; exit 1; }
    [[ $(cat "$d/ready") =~ smtp=(127\.0\.0\.1:[0-9]+).*pop3=(127\.0\.0\.1:[0-9]+).*imap=(127\.0\.0\.1:[0-9]+) ]] ||
        { echo "FAIL: no address in $d/ready"; ref_down; exit 1; }
    SMTP=${BASH_REMATCH[1]} POP3=${BASH_REMATCH[2]} IMAP=${BASH_REMATCH[3]}
}
ref_down() { stop_pid "$REF_PID"; wait "$REF_PID" 2>/dev/null; REF_PID=""; }

jget() { jq -r "$2" "$1"; }

# wait_for SECONDS COMMAND...: polls every 0.2 s until COMMAND succeeds; 1 on timeout.
wait_for() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.2
    done
}

# check DESCRIPTION COMMAND...: fails (returns 1) with it, so `check ... || show` shows why.
# With STOP_AT_FAIL set (scripts/mutate: a mutation is killed by its first failure) the
# test exits there, and its exit stops what it started.
check() {
    local what=$1
    shift
    if "$@"; then
        echo "ok   $what"
    else
        echo "FAIL $what"
        failures=$((failures + 1))
        [[ -z ${STOP_AT_FAIL:-} ]] || exit 1
        return 1
    fi
}

eq() { [[ "$1" == "$2" ]] || { echo "     expected '$2', got '$1'" >&2; return 1; }; }
gt() { [[ "$1" -gt "$2" ]] || { echo "     expected more than $2, got $1" >&2; return 1; }; }

finish() {
    if [[ $failures -gt 0 ]]; then
        echo "$failures check(s) failed"
        exit 1
    fi
    exit 0
}
