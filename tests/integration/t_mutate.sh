#!/usr/bin/env bash
# t_mutate.sh: scripts/mutate tells a killed mutation from one that survives, one whose
# original text is gone (not applicable) and one naming no test (invalid), exits 1 unless
# every one was killed, and never touches the tree: the source stays as it was and the
# scratch copy is gone after a normal exit and after SIGINT.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: needs python3" >&2; exit 77; }
F=src/mailsoak/verdict/judge.c
cat >"$WORK/list" <<'LIST'
# one of each outcome
file: src/mailsoak/verdict/judge.c
from: return held > 0 && held * 1000 > due;
to:   return held > 0 && held * 1000 >= due;
tests: test_judge
why: killed by the test of its bound

file: src/mailsoak/verdict/judge.c
from: return held > 0 && held * 1000 > due;
to:   return held > 0 && held * 1000 >= due;
tests: test_hist
why: a test that does not reach it

file: src/mailsoak/verdict/judge.c
from: a line no file holds
to:   anything
tests: test_judge

file: src/mailsoak/verdict/judge.c
from: return held > 0 && held * 1000 > due;
to:   return held > 0 && held * 1000 >= due;
tests: no_such_test
LIST
sum_before=$(sha256sum "$TOP/$F")
"$TOP/scripts/mutate" --list "$WORK/list" >"$WORK/out" 2>"$WORK/err"
rc=$?
cat "$WORK/out"
check "mutate exits 1 when not every mutation was killed" eq "$rc" 1
check "the first is killed by test_judge" grep -q '^  1 verdict/judge.c: killed by test_judge$' "$WORK/out"
check "the second survives test_hist" grep -q '^  2 verdict/judge.c: SURVIVED (test_hist)' "$WORK/out"
check "the third is not applicable" grep -q '^  3 verdict/judge.c: not applicable (the original text is in the file 0 times' "$WORK/out"
check "the fourth is invalid" grep -q "^  4 verdict/judge.c: INVALID (unknown test 'no_such_test')" "$WORK/out"
check "the score" grep -q '^mutate: 1 of 4 killed, 1 survived, 1 not applicable, 1 invalid$' "$WORK/out"
check "the source is as it was" eq "$(sha256sum "$TOP/$F")" "$sum_before"
copy=$(sed -n 's/^mutate: building the copy in //p' "$WORK/err")
check "the copy was made" test -n "$copy"
check "the copy is gone" test ! -e "$copy"

# Only the killed one: exit 0. Then SIGINT while it builds: the copy goes all the same.
"$TOP/scripts/mutate" --list "$WORK/list" --only 1 >"$WORK/out1" 2>/dev/null
check "only the killed one: exit 0" eq "$?" 0
# (a job started with & in a script ignores SIGINT: python3 puts back its default
# before mutate starts, as a terminal's Ctrl-C would find it)
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
    "$TOP/scripts/mutate" --list "$WORK/list" --only 1 >/dev/null 2>"$WORK/err2" &
pid=$!
wait_for 60 grep -q 'building the copy in' "$WORK/err2"
kill -INT "$pid"
wait "$pid"
check "SIGINT: exit 130" eq "$?" 130
copy=$(sed -n 's/^mutate: building the copy in //p' "$WORK/err2")
check "SIGINT: the copy is gone" test ! -e "$copy"
check "SIGINT: the source is as it was" eq "$(sha256sum "$TOP/$F")" "$sum_before"
finish
