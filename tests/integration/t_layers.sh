#!/usr/bin/env bash
# The layering rules of DEVELOPERS.md hold in the tree, and scripts/check-layers
# really fails on a forbidden include. One pass, over a copy of the tree with six
# includes planted (five forbidden, one allowed): it must fail, name each forbidden
# one by file, line and header, and say nothing else, neither of the allowed one nor
# of any file of the tree itself.
source "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/copy"
cp -r "$TOP/src" "$TOP/include" "$WORK/copy/"
# FILE INCLUDE: the forbidden ones
planted=(
    "src/mailsoak/engine/ledger.c analyse/compare.h"      # engine including analysis
    "src/server/smtp.c engine/ledger.h"                   # the server including client code
    "include/lib/conn.h settings/config.h"                # lib including anything above it
    "src/mailsoak/analyse/compare.c probe/collector.h"    # analysis including the probe
    "src/mailsoak/probe/collector.c engine/ledger.h"      # the probe including the engine
)
allowed="src/mailsoak/run/run.c engine/ledger.h"          # the run wiring may include the engine
want=()
for p in "${planted[@]}" "$allowed"; do
    read -r file inc <<<"$p"
    printf '#include "%s"\n' "$inc" >>"$WORK/copy/$file"
    [[ $p == "$allowed" ]] || want+=("$file:$(wc -l <"$WORK/copy/$file"): includes \"$inc\"")
done
"$TOP/scripts/check-layers" "$WORK/copy" >"$WORK/out.txt" 2>&1
check "check-layers fails on the planted includes" eq "$?" 1
for w in "${want[@]}"; do
    check "it names ${w%%:*}'s" grep -qF "$w," "$WORK/out.txt"
done
check "and nothing else (the tree keeps its layers; run/ may include the engine)" \
    eq "$(grep -cvF -f <(printf '%s,\n' "${want[@]}") "$WORK/out.txt")" 0
cat "$WORK/out.txt"
finish
