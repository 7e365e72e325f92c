#!/usr/bin/env bash
# t_deps.sh: DEVELOPERS.md's dependency table (each package with why it is there) and
# scripts/deps (the list every installer uses) name the same packages in the same
# groups, so neither drifts from the other.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

# "package group" pairs of the table: a row's first cell may name several packages
# (commas; a library's name in parentheses), its second several groups.
awk -F'|' '
    /^## Dependencies/ { intable = 1; next }
    intable && /^#/ { exit }
    intable && /^\| *[a-z0-9]/ && $2 !~ /^ *package *$/ {
        gsub(/\([^)]*\)/, "", $2)
        np = split($2, pkgs, ","); ng = split($3, grps, ",")
        for (i = 1; i <= np; i++) for (j = 1; j <= ng; j++) {
            p = pkgs[i]; g = grps[j]
            gsub(/[ `]/, "", p); gsub(/[ `]/, "", g)
            print p, g
        }
    }' "$TOP/DEVELOPERS.md" | sort -u >"$WORK/table"
for g in $("$TOP/scripts/deps" groups); do
    "$TOP/scripts/deps" list "$g" | sed "s/\$/ $g/"
done | sort -u >"$WORK/deps"

check "DEVELOPERS.md's table names packages" gt "$(wc -l <"$WORK/table")" 5
check "scripts/deps names packages" gt "$(wc -l <"$WORK/deps")" 5
check "every package of scripts/deps is in DEVELOPERS.md's table, in its group" \
    eq "$(comm -23 "$WORK/deps" "$WORK/table" | paste -sd,)" ""
check "every package of DEVELOPERS.md's table is in scripts/deps, in that group" \
    eq "$(comm -13 "$WORK/deps" "$WORK/table" | paste -sd,)" ""
finish
