#!/usr/bin/env bash
# mailsoak run's edges without a mail server (and the version, --version and
# `mailsoak version` alike): bad configuration exits 2 naming the
# file, line and key; the preflight's exit 3 on a closed port; an unreachable server
# (with --no-check) is counted, not fatal; SIGINT ends the run early and the full
# report is still written, with no temporary file left; with no target the demo
# runs and removes its directory; conf/mailsoak.conf is the current config-example.
source "$(dirname "$0")/lib.sh"

printf '[smtp]\nsenders = 2\n\n[pop3]\nreadrs = 3\n' >"$WORK/bad.conf"
"$MAILSOAK" run -c "$WORK/bad.conf" 2>"$WORK/err.txt"
check "bad key exits 2" eq "$?" 2
check "bad key names file:line: key" grep -q "$WORK/bad.conf:5: pop3.readrs: unknown key" "$WORK/err.txt"
"$MAILSOAK" run --duration forever --smtp 127.0.0.1:1 2>"$WORK/err.txt"
check "bad value exits 2" eq "$?" 2
check "bad value names the flag" grep -q -- "--duration: run.duration" "$WORK/err.txt"
"$MAILSOAK" run --help >"$WORK/help.txt"
check "run --help exits 0" eq "$?" 0
check "run --help lists every section" gt "$(grep -c "^\\[" "$WORK/help.txt")" 4
"$MAILSOAK" --help >/dev/null
check "--help exits 0" eq "$?" 0
version="mailsoak $(cat "$TOP/$BUILD/.version")"
check "--version prints the build's version" eq "$("$MAILSOAK" --version)" "$version"
check "version prints the build's version" eq "$("$MAILSOAK" version)" "$version"
"$MAILSOAK" version extra >/dev/null 2>"$WORK/err.txt"
check "version with an argument exits 2" eq "$?" 2
check "version with an argument says why" grep -q 'mailsoak version: takes no arguments' "$WORK/err.txt"

# A port nobody listens on (bound, never listened to, so nothing else takes it).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 1)
# The preflight check refuses to start against it, naming the problem...
"$MAILSOAK" run --smtp 127.0.0.1:$port --pop3 127.0.0.1:$port --duration 2s 2>"$WORK/check.txt" >/dev/null
check "preflight: exit 3 against a closed port" eq "$?" 3
check "preflight: names the target and the problem" grep -q "smtp 127.0.0.1:$port: connection refused" "$WORK/check.txt"
# Output paths are checked before any load: a missing folder is a setting's mistake,
# named at once (before the preflight, which would take its own time).
"$MAILSOAK" run --smtp 127.0.0.1:$port --pop3 127.0.0.1:$port --json "$WORK/missing/x.json" 2>"$WORK/out.txt" >/dev/null
check "run --json into a missing folder: exit 2" eq "$?" 2
check "run --json into a missing folder: names the flag and path" \
    grep -q "run.json (--json): $WORK/missing/x.json: the folder $WORK/missing does not exist" "$WORK/out.txt"
check "run --json into a missing folder: before the preflight" eq "$(grep -c 'connection refused' "$WORK/out.txt")" 0
# capacity: the same check, naming what was set (never capacity.dir, not set)
"$MAILSOAK" capacity --smtp 127.0.0.1:$port --pop3 127.0.0.1:$port --json "$WORK/missing/c.json" 2>"$WORK/out.txt" >/dev/null
check "capacity --json into a missing folder: exit 2" eq "$?" 2
check "capacity --json into a missing folder: names run.json" grep -q "run.json (--json): $WORK/missing/c.json" "$WORK/out.txt"
check "capacity --json into a missing folder: not capacity.dir" eq "$(grep -c 'capacity.dir' "$WORK/out.txt")" 0
# capacity without --json: a step that could not run says why on stderr; a search
# that ran no step leaves no folder behind.
mkdir "$WORK/cap" && (cd "$WORK/cap" && "$MAILSOAK" capacity --smtp 127.0.0.1:$port --pop3 127.0.0.1:$port \
    >/dev/null 2>"$WORK/cap.txt")
check "capacity: a step that could not run says why on stderr" grep -q "smtp 127.0.0.1:$port: connection refused" "$WORK/cap.txt"
rm -rf "$WORK/cap" && mkdir "$WORK/cap" && (cd "$WORK/cap" && "$MAILSOAK" capacity --smtp 127.0.0.1:$port \
    --pop3 127.0.0.1:$port --set capacity.time_limit=1s >/dev/null 2>&1)
check "capacity: no step ran, no folder left behind" eq "$(ls -A "$WORK/cap" | wc -l)" 0
# ...and without it the run goes on, counting the failures.
"$MAILSOAK" run --no-check --smtp 127.0.0.1:$port --pop3 127.0.0.1:$port --duration 2s --drain 1s \
    --senders 3 --readers 2 --json "$WORK/unreach.json" >"$WORK/table.txt" 2>/dev/null
check "unreachable server: exit 4, the sent gate" eq "$?" 4
# The version is the build's (git describe, see the Makefile), not a literal.
check "result carries the build's version" eq "$(jget "$WORK/unreach.json" .version)" "$(cat "$TOP/$BUILD/.version")"
check "unreachable server: smtp connect errors counted" gt "$(jget "$WORK/unreach.json" '.summary.errors_by_class.smtp_connect_refused')" 0
check "unreachable server: pop3 connect errors counted" gt "$(jget "$WORK/unreach.json" '.summary.errors_by_class.pop3_connect_refused')" 0
check "unreachable server: table printed" grep -q smtp_connect_refused "$WORK/table.txt"

# SIGINT: the run ends early, exit 130, the JSON is complete and marked interrupted.
"$MAILSOAK" run --no-check --smtp 127.0.0.1:$port --readers 0 --duration 60s --interval 1s \
    --json "$WORK/int.json" >"$WORK/int.txt" 2>/dev/null &
pid=$!
sleep 2
kill -INT $pid
wait $pid
rc=$?
check "SIGINT exits 130" eq "$rc" 130
check "SIGINT: the verdict prints the status returned" eq "$(grep -o '(exit [0-9]*' "$WORK/int.txt")" "(exit $rc"
check "SIGINT: JSON written" eq "$(jget "$WORK/int.json" .interrupted)" true
check "SIGINT: timeline kept" gt "$(jget "$WORK/int.json" '.timeline | length')" 0
check "SIGINT: table printed" grep -q '^sent' "$WORK/int.txt"
check "SIGINT: no temp file left" eq "$(ls "$WORK" | grep -c tmp)" 0
# No target: the demo soaks the reference server it starts, then stops it and
# removes its directory.
TMPDIR=$WORK "$MAILSOAK" run --duration 2s --drain 2s --json "$WORK/demo.json" >/dev/null 2>"$WORK/demo.txt"
check "no target: the demo runs" eq "$?" 0
check "no target: mail went through" gt "$(jget "$WORK/demo.json" .summary.delivered)" 0
check "no target: its directory is gone" eq "$(ls -d "$WORK"/mailsoak-demo.* 2>/dev/null | wc -l)" 0

# conf/mailsoak.conf documents every key: it must be what the table says today.
"$MAILSOAK" config-example >"$WORK/example.conf"
check "conf/mailsoak.conf is current (regenerate: mailsoak config-example)" cmp -s "$WORK/example.conf" "$TOP/conf/mailsoak.conf"
check "the example parses" "$MAILSOAK" run -c "$TOP/conf/mailsoak.conf" --help
# inih reads lines of at most 200 bytes; the example's help comments are wrapped.
check "no line of the example is over 78 columns" eq "$(awk 'length > 78' "$WORK/example.conf" | wc -l)" 0
finish
