#!/usr/bin/env bash
# The layering rules of DEVELOPERS.md hold in the tree, and scripts/check-layers
# really fails on a forbidden include (checked on a copy with one planted).
source "$(dirname "$0")/lib.sh"

"$TOP/scripts/check-layers" "$TOP" >"$WORK/clean.txt" 2>&1
check "the tree keeps its layers" eq "$?" 0
cat "$WORK/clean.txt"

plant() {   # plant FILE INCLUDE: a copy of the tree with one more include in FILE
    rm -rf "$WORK/copy"
    mkdir -p "$WORK/copy"
    cp -r "$TOP/src" "$TOP/include" "$WORK/copy/"
    printf '#include "%s"\n' "$2" >>"$WORK/copy/$1"
    "$TOP/scripts/check-layers" "$WORK/copy" >"$WORK/bad.txt" 2>&1
}
plant src/mailsoak/engine/ledger.c analyse/compare.h
check "engine including analysis fails" eq "$?" 1
check "the failure names file, line and header" grep -q 'src/mailsoak/engine/ledger.c:[0-9]*: includes "analyse/compare.h"' "$WORK/bad.txt"
plant src/server/smtp.c engine/ledger.h
check "server including client code fails" eq "$?" 1
plant include/lib/conn.h settings/config.h
check "lib including anything above it fails" eq "$?" 1
plant src/mailsoak/analyse/compare.c probe/collector.h
check "analysis including the probe fails" eq "$?" 1
plant src/mailsoak/probe/collector.c engine/ledger.h
check "the probe including the engine fails" eq "$?" 1
plant src/mailsoak/run/run.c engine/ledger.h
check "the run wiring may include the engine" eq "$?" 0
finish
