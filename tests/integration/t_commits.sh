#!/usr/bin/env bash
# t_commits.sh: the commits this clone can see since the rule began keep
# DEVELOPERS.md's rule for commit messages (scripts/check-commits: a subject of at
# most 72 characters, a blank line, a body), and the check really fails on each way
# of breaking it (commits planted in a repository of its own).
source "$(dirname "$0")/lib.sh"

# The tree's own commits, when it is a clone that holds the rule's base commit.
if git -C "$TOP" rev-parse -q --verify '937293b^{commit}' >/dev/null 2>&1; then
    (cd "$TOP" && scripts/check-commits) >"$WORK/own.txt" 2>&1
    check "the commits since 937293b keep the rule" eq "$?" 0
    cat "$WORK/own.txt"
else
    echo "ok   not a clone holding 937293b: its own commits not checked # SKIP"
fi

# A repository of its own: a base commit, then commits planted on top.
repo=$WORK/repo
git init -q "$repo"
g() { git -C "$repo" -c user.name=t -c user.email=t@example.invalid -c commit.gpgsign=false "$@"; }
g commit -q --allow-empty -m "base"
base=$(g rev-parse HEAD)
long=$(printf 'x%.0s' $(seq 1 73))
exact=$(printf 'y%.0s' $(seq 1 72))
# commit_at MESSAGE: a commit on top of base, whose hash it prints.
commit_at() {
    g checkout -q --detach "$base"
    g commit -q --allow-empty --cleanup=verbatim -m "$1"
    g rev-parse HEAD
}
# verdict_of HASH: check-commits on base..HASH; its exit status and output.
verdict_of() { (cd "$repo" && ALLOWED_COMMITS=${ALLOWED_COMMITS:-/dev/null} "$TOP/scripts/check-commits" "$base" "$1") >"$WORK/out.txt" 2>&1; }

good=$(commit_at "$exact"$'\n\n'"the why, in a body")
verdict_of "$good"
check "a subject of 72 characters with a body passes" eq "$?" 0
utf=$(commit_at "$(printf 'é%.0s' $(seq 1 72))"$'\n\n'"body")
verdict_of "$utf"
check "characters are counted, not bytes (72 two-byte letters pass)" eq "$?" 0

bad=$(commit_at "$long"$'\n\n'"body")
verdict_of "$bad"
check "a subject of 73 characters fails" eq "$?" 1
check "the failure names the commit and the length" grep -q "^${bad:0:9}: subject is 73 characters" "$WORK/out.txt"

bad=$(commit_at "subject only")
verdict_of "$bad"
check "a commit without a body fails" eq "$?" 1
check "the failure says so" grep -q "^${bad:0:9}: no body" "$WORK/out.txt"

bad=$(commit_at "subject"$'\n'"body with no blank line before it")
verdict_of "$bad"
check "a body without the blank line fails" eq "$?" 1
check "the failure says so" grep -q "^${bad:0:9}: no blank line after the subject" "$WORK/out.txt"

# One bad commit among good ones is found; the commits before BASE are not checked.
g checkout -q --detach "$base"
g commit -q --allow-empty -m "fine" -m "body"
g commit -q --allow-empty -m "$long" -m "body"
mid=$(g rev-parse HEAD)
g commit -q --allow-empty -m "fine again" -m "body"
verdict_of HEAD
check "a bad commit among good ones fails" eq "$?" 1
check "only it is named" eq "$(grep -c . "$WORK/out.txt")" 1
check "by its hash" grep -q "^${mid:0:9}:" "$WORK/out.txt"
(cd "$repo" && "$TOP/scripts/check-commits" "$mid" HEAD) >"$WORK/out.txt" 2>&1
check "commits before the base are not checked" eq "$?" 0

# A commit the allow list names (by its full hash) is passed over, the others not.
printf '# why\n%s  planted\n' "$mid" >"$WORK/allowed"
ALLOWED_COMMITS=$WORK/allowed verdict_of HEAD
check "a commit tests/allowed-commits names is passed over" eq "$?" 0
printf '%s  a short hash names nothing\n' "${mid:0:9}" >"$WORK/allowed"
ALLOWED_COMMITS=$WORK/allowed verdict_of HEAD
check "only by its full hash" eq "$?" 1

(cd "$repo" && "$TOP/scripts/check-commits" nosuchcommit) >"$WORK/out.txt" 2>&1
check "an unknown base is a wrong call (exit 2)" eq "$?" 2
finish
