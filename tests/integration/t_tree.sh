#!/usr/bin/env bash
# What DEVELOPERS.md says of the tree holds where a script can tell
# (scripts/check-tree: opening comments, the layout table, a header named after
# each file, bench and command names, sizes, one out-of-memory policy, three mutable globals, result files read
# by key in result/ alone), and check-tree really fails on
# each of them (on a copy of the tree with one thing planted).
source "$(dirname "$0")/lib.sh"

case $BUILD in /*) objs=$BUILD/src ;; *) objs=$TOP/$BUILD/src ;; esac

BUILD=$BUILD "$TOP/scripts/check-tree" "$TOP" >"$WORK/clean.txt" 2>&1
check "the tree keeps what DEVELOPERS.md says of it" eq "$?" 0
cat "$WORK/clean.txt"

fresh() {   # a copy of the sources, DEVELOPERS.md and the objects (linked)
    rm -rf "$WORK/copy"
    mkdir -p "$WORK/copy/build" "$WORK/copy/fuzz" "$WORK/copy/tests"
    cp -r "$TOP/src" "$TOP/include" "$TOP/bench" "$TOP/DEVELOPERS.md" "$WORK/copy/"
    cp "$TOP"/fuzz/*.[ch] "$WORK/copy/fuzz/"
    cp -r "$TOP/tests/unit" "$WORK/copy/tests/"
    cp -rs "$objs" "$WORK/copy/build/src"
}
tree_check() { BUILD=build "$TOP/scripts/check-tree" "$WORK/copy" >"$WORK/bad.txt" 2>&1; }

fresh
printf '\nstatic void *planted(void) { return malloc(8); }\n' >>"$WORK/copy/src/mailsoak/engine/ledger.c"
tree_check
check "a raw malloc fails" eq "$?" 1
check "the failure names file and line" grep -q '^src/mailsoak/engine/ledger.c:[0-9]*:.*allocates around lib/alloc.h' "$WORK/bad.txt"

fresh
printf 'int planted;\n' >"$WORK/copy/src/lib/planted.c"
tree_check
check "a file without its opening comment fails" eq "$?" 1
check "the failure names the file" grep -q '^src/lib/planted.c:1: does not open with a comment' "$WORK/bad.txt"
check "a file the layout does not name fails" grep -q '^src/lib/planted.c: .*does not name planted.c' "$WORK/bad.txt"

fresh
rm "$WORK/copy/include/probe/dbox.h"
sed -i 's|#include "probe/dbox.h"|#include "probe/store.h"|' "$WORK/copy/src/mailsoak/probe/dbox.c"
tree_check
check "a file without a header of its name fails" eq "$?" 1
check "the failure names it" grep -q '^src/mailsoak/probe/dbox.c: has no header of its name (include/probe/dbox.h)' "$WORK/bad.txt"

fresh
sed -i '0,/#include "engine\/smtp.h"/s||#include <stdint.h>\n#include "engine/smtp.h"|' "$WORK/copy/src/mailsoak/engine/smtp.c"
tree_check
check "a file not including its own header first fails" eq "$?" 1
check "the failure names it" grep -q '^src/mailsoak/engine/smtp.c: does not include its own header first' "$WORK/bad.txt"

fresh
rm "$WORK/copy/src/lib/hist.c"
tree_check
check "a file the layout names that is gone fails" eq "$?" 1
check "the failure names it" grep -q '^DEVELOPERS.md: names hist.c, which does not exist' "$WORK/bad.txt"

fresh
mv "$WORK/copy/bench/bench_ledger.c" "$WORK/copy/bench/ledger.c"
sed -i '1s|/\* bench_ledger:|/* ledger:|' "$WORK/copy/bench/ledger.c"
tree_check
check "a benchmark named after its module fails" eq "$?" 1
check "the failure names it" grep -q '^bench/ledger.c: a benchmark is bench/bench_NAME.c' "$WORK/bad.txt"

fresh
mv "$WORK/copy/src/mailsoak/cmd/cmd_merge.c" "$WORK/copy/src/mailsoak/cmd/merge.c"
sed -i '1s|/\* cmd_merge:|/* merge:|' "$WORK/copy/src/mailsoak/cmd/merge.c"
tree_check
check "a command named after the module it drives fails" eq "$?" 1
check "the failure names it" grep -q '^src/mailsoak/cmd/merge.c: a command is src/mailsoak/cmd/cmd_NAME.c' "$WORK/bad.txt"

fresh
# a function of 121 lines, and a file of 801 (the JSON helpers padded)
{ printf '\nint planted_long(int x);\nint planted_long(int x)\n{\n'; for _ in $(seq 119); do printf '    x++;\n'; done
  printf '}\n'; } >>"$WORK/copy/src/lib/json.c"
tree_check
check "a function over 120 lines fails" eq "$?" 1
check "the failure names it, its line and its length" \
    grep -q '^src/lib/json.c:[0-9]*: planted_long() is 121 lines, over 120' "$WORK/bad.txt"
n=$(wc -l <"$WORK/copy/src/lib/json.c")
for _ in $(seq $((801 - n))); do echo >>"$WORK/copy/src/lib/json.c"; done
tree_check
check "a file over 800 lines fails" grep -q '^src/lib/json.c: 801 lines, over 800' "$WORK/bad.txt"

fresh
# a capacity step reading its result file by key, past result/result.h
sed -i '0,/^    f->sent = r->c.sent;/s||    f->sent = json_path_count(r->summary, "sent");|' "$WORK/copy/src/mailsoak/capacity/step.c"
tree_check
check "a result file read by key outside result/ fails" eq "$?" 1
check "the failure names the file" grep -q '^src/mailsoak/capacity/step.c: reads a JSON document by key 1 times' "$WORK/bad.txt"
fresh
printf '\nstatic double planted(const json_t *r) { return json_path_number_or(r, "elapsed_s", 0); }\n' \
    >>"$WORK/copy/src/mailsoak/run/fill_file.c"
tree_check
check "one more read by key in a file of the list fails" eq "$?" 1
check "the failure names it and its entry" grep -q '^src/mailsoak/run/fill_file.c: .*over the 6 of check-tree' "$WORK/bad.txt"

fresh
printf '/* planted: a counter */\nint planted_counter;\nint planted_next(void);\nint planted_next(void) { return ++planted_counter; }\n' \
    >"$WORK/copy/src/mailsoak/run/planted.c"
${CC:-cc} -c -o "$WORK/copy/build/src/mailsoak/run/planted.o" "$WORK/copy/src/mailsoak/run/planted.c"
tree_check
check "a fourth mutable global fails" eq "$?" 1
check "the failure names it" grep -q '^src/mailsoak/run/planted.c: planted_counter is a mutable global' "$WORK/bad.txt"
finish
