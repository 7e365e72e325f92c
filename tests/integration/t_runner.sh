#!/usr/bin/env bash
# t_runner.sh: tests/run itself. Synthetic tests (one exits 77, one passes with a check
# reported "# SKIP", one cmocka-style skip, one plain pass) are reported as skipped
# without CI, fail under CI=true unless tests/allowed-skips names them, and an allowed
# skip stays a skip. The checked-in list names real tests, each with a reason. With
# TEST_JOBS=3, two tests that each wait for the other to have started both pass (they
# ran at once), a test the serial list names runs after them all with no other test
# beside it; the checked-in serial list names real tests.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

T=$WORK/t
mkdir -p "$T"
printf 'echo "skip: needs a frobnicator"; exit 77\n' >"$T/t_exit77.sh"
printf 'echo "ok 1 - first"; echo "ok 2 - over IPv6 # SKIP no IPv6 loopback"; exit 0\n' >"$T/t_tapskip.sh"
printf 'echo "[ RUN      ] test_x"; echo "[  SKIPPED ] test_x"; exit 0\n' >"$T/t_cmockaskip.sh"
# A plain pass whose wording is near a skip's: "skip" without TAP's "# SKIP".
printf 'echo "ok   the sweep skips empty mailboxes"; exit 0\n' >"$T/t_pass.sh"
TESTS=("$T/t_exit77.sh" "$T/t_tapskip.sh" "$T/t_cmockaskip.sh" "$T/t_pass.sh")

# runner OUT CI-VALUE ALLOWED-LIST-CONTENT: runs tests/run on the synthetic tests; its rc.
runner() {
    local out=$1 ci=$2
    printf '%s' "$3" >"$WORK/allowed"
    env -u ASAN_OPTIONS -u UBSAN_OPTIONS CI="$ci" ALLOWED_SKIPS="$WORK/allowed" \
        ARTEFACTS="$WORK/art-$out" "$TOP/tests/run" "${TESTS[@]}" >"$WORK/$out" 2>&1
}
status() { grep -E "^[A-Z]+ +$2 " "$WORK/$1" | awk '{ print $1 }'; }   # status OUT NAME
summary() { tail -n1 "$WORK/$1"; }

runner plain "" ""
check "without CI: exit 0" eq "$?" 0
check "without CI: summary" eq "$(summary plain)" "1 passed, 0 failed, 3 skipped"
for t in t_exit77.sh t_tapskip.sh t_cmockaskip.sh; do
    check "without CI: $t reported skipped" eq "$(status plain $t)" SKIP
done
check "without CI: t_pass.sh passes" eq "$(status plain t_pass.sh)" PASS
check "the exit-77 skip shows the test's reason" grep -q "SKIP .*t_exit77.sh .*needs a frobnicator" "$WORK/plain"
check "the TAP skip shows the skipped check" grep -q "SKIP .*t_tapskip.sh .*1 check(s) skipped: ok 2 - over IPv6" "$WORK/plain"

runner strict true ""
check "CI=true, nothing allowed: exit 1" eq "$?" 1
check "CI=true, nothing allowed: summary" eq "$(summary strict)" "1 passed, 3 failed, 0 skipped"
for t in t_exit77.sh t_tapskip.sh t_cmockaskip.sh; do
    check "CI=true: $t fails" eq "$(status strict $t)" FAIL
done
check "CI=true: the failure says why" grep -q "FAIL .*t_tapskip.sh .*skipped under CI=true" "$WORK/strict"

runner some true $'# comment\nt_exit77.sh  the frobnicator is not packaged for Debian\nt_tapskip.sh no IPv6 on this runner\n'
check "CI=true, two allowed: exit 1 for the third" eq "$?" 1
check "CI=true, two allowed: summary" eq "$(summary some)" "1 passed, 1 failed, 2 skipped"
check "CI=true: an allowed skip stays a skip, with its reason" \
    grep -q "SKIP .*t_exit77.sh .*allowed in CI: the frobnicator is not packaged for Debian" "$WORK/some"
check "CI=true: the unlisted one still fails" eq "$(status some t_cmockaskip.sh)" FAIL

runner all true $'t_exit77.sh a\nt_tapskip.sh b\nt_cmockaskip.sh c\n'
check "CI=true, all allowed: exit 0" eq "$?" 0
check "CI=true, all allowed: summary" eq "$(summary all)" "1 passed, 0 failed, 3 skipped"

# bad_entries LIST: the entries of a checked-in list that name no test of this tree, or give
# no reason.
bad_entries() {
    awk '!/^#/ && NF' "$1" | while read -r name reason; do
        [[ -n $reason ]] || { echo "$name: no reason"; continue; }
        [[ -e $TOP/tests/integration/$name || -e $TOP/tests/unit/$name.c ]] || echo "$name: no such test"
    done
}
check "tests/allowed-skips names existing tests, each with a reason" eq "$(bad_entries "$TOP/tests/allowed-skips")" ""
# TEST_JOBS: t_busy1 and t_busy2 wait (10 s at most) for each other to have begun;
# t_solo, named in the serial list and given first, runs last and finds no other test
# running, t_after's marker already there. A marker NAME.running exists while a test
# runs, NAME.done once it ended.
M=$WORK/markers
mkdir -p "$M" "$T/par"
busy() {   # busy NAME OTHER: a test that waits for OTHER to be running too
    printf '%s\n' "touch $M/$1.running" \
        "for _ in \$(seq 100); do [[ -e $M/$2.running || -e $M/$2.done ]] && break; sleep 0.1; done" \
        "[[ -e $M/$2.running || -e $M/$2.done ]] || { echo \"$2 never ran beside $1\"; rm $M/$1.running; exit 1; }" \
        "touch $M/$1.done; rm $M/$1.running" >"$T/par/t_$1.sh"
}
busy busy1 busy2
busy busy2 busy1
printf '%s\n' "shopt -s nullglob; r=($M/*.running); ((\${#r[@]} == 0)) || { echo \"beside \${r[*]}\"; exit 1; }" \
    "[[ -e $M/after.done && -e $M/busy1.done && -e $M/busy2.done ]] || { echo 'ran before the others'; exit 1; }" \
    >"$T/par/t_solo.sh"
printf '%s\n' "touch $M/after.done" >"$T/par/t_after.sh"
printf 't_solo.sh  finds no other test running\n' >"$WORK/serial"
env -u ASAN_OPTIONS -u UBSAN_OPTIONS TEST_JOBS=3 SERIAL_TESTS="$WORK/serial" ARTEFACTS="$WORK/art-par" \
    "$TOP/tests/run" "$T/par/t_solo.sh" "$T/par/t_busy1.sh" "$T/par/t_busy2.sh" "$T/par/t_after.sh" >"$WORK/par" 2>&1
check "TEST_JOBS=3: exit 0" eq "$?" 0
check "TEST_JOBS=3: summary" eq "$(summary par)" "4 passed, 0 failed, 0 skipped"
for t in t_busy1.sh t_busy2.sh t_solo.sh t_after.sh; do
    check "TEST_JOBS=3: $t passes" eq "$(status par $t)" PASS
done
check "TEST_JOBS=3: the run says how many at a time" grep -q "(3 at a time)" "$WORK/par"
# one at a time, with fresh markers: the pair cannot meet
rm -f "$M"/*
env -u ASAN_OPTIONS -u UBSAN_OPTIONS TEST_JOBS=1 ARTEFACTS="$WORK/art-one" "$TOP/tests/run" \
    "$T/par/t_busy1.sh" >"$WORK/one" 2>&1
check "TEST_JOBS=1: a test waiting for another fails alone" eq "$(status one t_busy1.sh)" FAIL
env TEST_JOBS=0 "$TOP/tests/run" "$T/t_pass.sh" >"$WORK/zero" 2>&1
check "TEST_JOBS=0: refused, exit 2" eq "$?" 2
check "tests/serial names existing tests, each with a reason" eq "$(bad_entries "$TOP/tests/serial")" ""
finish
