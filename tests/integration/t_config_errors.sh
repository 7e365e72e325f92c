#!/usr/bin/env bash
# t_config_errors.sh: every kind of bad setting gets one exit status (2), a message
# naming the key (with file:line when it came from a file) and what it accepts, and
# leaves nothing behind: in particular no mailsoak-demo.* directory, since without a
# target each of these runs would be the demo. Cases, each "exit status, message":
# values outside a key's bounds (10^8 senders once aborted with SIGABRT, exit 134,
# from an allocation of 10^8 sessions, and left the demo's directory; size 0-100G,
# rcpts 0 and an interval of 0 were taken silently); more sessions than the
# descriptors this process may open; a missing users file, once exit 3 with the
# preflight, 2 with --no-check and 1 for the demo, never naming users.file; a
# section header without its ']' (once reported a line later as ".senders: unknown
# key"); an unknown section (once "unknown key"), an unknown key and an enum's
# value, each with its values or the nearest name; a users line without a password
# (once taken with an empty one). And a relative path in a configuration file is
# the file's directory's, not the working directory's.
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
    "smtp.senders + pop3.readers (+ imap's idle users): 2010 sessions need 2074 file descriptors (one each, and 64 more), and this process may open at most 1000 (the hard RLIMIT_NOFILE" \
    --senders 2000 && finish) || failures=$((failures + 1))

# The users file: the same error and status whichever part would read it first.
fails 2 "users.file: $WORK/none.txt: No such file or directory" --users "$WORK/none.txt" --smtp 127.0.0.1:9 --pop3 127.0.0.1:9
fails 2 "users.file: $WORK/none.txt: No such file or directory" --users "$WORK/none.txt" --smtp 127.0.0.1:9 --pop3 127.0.0.1:9 --no-check
mkdir -p "$WORK/sub"
conf sub/users.conf '[users]\nfile = users.txt\n'
fails 2 "users.file: $WORK/sub/users.txt: No such file or directory" -c "$WORK/sub/users.conf"
printf 'a@test.local pw\nb@test.local\n' >"$WORK/sub/users.txt"
fails 2 "users.file: $WORK/sub/users.txt:2: 'b@test.local' has no password (expected 'address password')" \
    -c "$WORK/sub/users.conf"
"$MAILSOAK" check --users "$WORK/none.txt" --smtp 127.0.0.1:9 --pop3 127.0.0.1:9 >/dev/null 2>"$WORK/err.txt"
check "check: a missing users file is exit 2 too" eq "$?" 2
check "check: and says so the same way" grep -qF "users.file: $WORK/none.txt: No such file or directory" "$WORK/err.txt"

# The file's own mistakes, each at its line, with what would have been right.
conf unclosed.conf '[smtp\nsenders = 1\n'
fails 2 "$WORK/unclosed.conf:1: '[smtp': a section header ends with ']'" -c "$WORK/unclosed.conf"
# an unknown section at its header's line, not its first key's
conf section.conf '# a comment\n[smpt]\n\nsenders = 1\n'
fails 2 "$WORK/section.conf:2: [smpt]: unknown section (did you mean [smtp]?)" -c "$WORK/section.conf"
conf key.conf '[pop3]\nreadrs = 1\n'
fails 2 "$WORK/key.conf:2: pop3.readrs: unknown key (did you mean pop3.readers?)" -c "$WORK/key.conf"
conf enum.conf '[smtp]\ntls = starttsl\n'
fails 2 "$WORK/enum.conf:2: smtp.tls: not one of none|starttls|implicit: 'starttsl' (did you mean starttls?)" \
    -c "$WORK/enum.conf"
fails 2 "--pipelining: smtp.pipelining: not one of auto|on|off: 'sometimes'" --pipelining sometimes

# Relative paths are the configuration file's neighbours: the demo, run from another
# directory, reads the users and the sizes beside the file (either missing would be
# exit 2 above), and the JSON's config says where it found the sizes.
printf 'a@test.local pw\nb@test.local pw\n' >"$WORK/sub/users.txt"
printf '777\n' >"$WORK/sub/sizes.txt"
conf sub/rel.conf '[users]\nfile = users.txt\n[smtp]\nsize_dist = file\nsize_file = sizes.txt\n'
mkdir -p "$WORK/tmp.rel"
(cd / && TMPDIR=$WORK/tmp.rel "$MAILSOAK" run -c "$WORK/sub/rel.conf" --duration 1s --drain 2s --senders 1 \
    --readers 1 --json "$WORK/rel.json" >/dev/null 2>"$WORK/rel.err")
check "relative paths: the demo runs from / (exit 0)" eq "$?" 0 || cat "$WORK/rel.err"
check "relative paths: smtp.size_file taken beside its file" eq "$(jq -r .config.smtp.size_file "$WORK/rel.json")" \
    "$WORK/sub/sizes.txt"
check "relative paths: mail of the users of that file delivered" gt "$(jq .summary.delivered "$WORK/rel.json")" 0
finish
