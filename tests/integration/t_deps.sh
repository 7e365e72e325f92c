#!/usr/bin/env bash
# t_deps.sh: the README's dependency table and scripts/deps (the list every installer
# uses) name the same packages in the same groups, so neither drifts from the other.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

# "package group" pairs of the table: a row's first cell may name several packages
# (commas; a library's name in parentheses), its second several groups.
awk -F'|' '
    /^### Dependencies/ { intable = 1; next }
    intable && /^#/ { exit }
    intable && /^\| *[a-z0-9]/ && $2 !~ /^ *package *$/ {
        gsub(/\([^)]*\)/, "", $2)
        np = split($2, pkgs, ","); ng = split($3, grps, ",")
        for (i = 1; i <= np; i++) for (j = 1; j <= ng; j++) {
            p = pkgs[i]; g = grps[j]
            gsub(/[ `]/, "", p); gsub(/[ `]/, "", g)
            print p, g
        }
    }' "$TOP/README.md" | sort -u >"$WORK/readme"
for g in $("$TOP/scripts/deps" groups); do
    "$TOP/scripts/deps" list "$g" | sed "s/\$/ $g/"
done | sort -u >"$WORK/deps"

check "the README's table names packages" gt "$(wc -l <"$WORK/readme")" 5
check "scripts/deps names packages" gt "$(wc -l <"$WORK/deps")" 5
check "every package of scripts/deps is in the README's table, in its group" \
    eq "$(comm -23 "$WORK/deps" "$WORK/readme" | paste -sd,)" ""
check "every package of the README's table is in scripts/deps, in that group" \
    eq "$(comm -13 "$WORK/deps" "$WORK/readme" | paste -sd,)" ""
finish
