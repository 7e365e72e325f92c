#!/usr/bin/env bash
# t_readme.sh: the README is a quick start that stays true. It is under 12 KB; its
# table of contents lists its sections; every relative link of the README and of
# docs/*.md leads to a file (and heading) that exists, and the README links every
# page of docs/. Every command of its code blocks is checked: run here, against a
# real Postfix + Dovecot testbed, with only the substitutions of README_SUBST below
# (scratch paths, the testbed's ports for mail.example.org, a short load), or, for
# scripts/demo, scripts/test and make, as written there. The rows of its sample
# table and of its table of rows are rows a run prints, in that order.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
readme=$TOP/README.md

check "the README is under 12 KB" test "$(wc -c <"$readme")" -lt 12288

# Links and headings, with GitHub's anchors (lower case, punctuation dropped, spaces
# to hyphens).
python3 - "$TOP" >"$WORK/links.txt" <<'EOF'
import os, re, sys
top = sys.argv[1]
def slug(h):
    return re.sub(r'[^\w\- ]', '', h.strip().lower()).replace(' ', '-')
def headings(path):
    out, code = set(), False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            code = not code
        elif not code and re.match(r'#+ ', line):
            out.add(slug(line.lstrip('#')))
    return out
pages = ['README.md', 'DEVELOPERS.md'] + ['docs/' + f for f in sorted(os.listdir(top + '/docs')) if f.endswith('.md')]
bad = 0
for page in pages:
    text = re.sub(r'```.*?```', '', open(top + '/' + page, encoding='utf-8').read(), flags=re.S)
    for target in re.findall(r'\]\(([^)\s]+)\)', text):
        if re.match(r'[a-z]+:', target):
            continue
        path, _, anchor = target.partition('#')
        full = os.path.normpath(os.path.join(top, os.path.dirname(page), path)) if path else top + '/' + page
        if not os.path.exists(full):
            print(f'{page}: link to {target}: no such file'); bad += 1
        elif anchor and anchor not in headings(full):
            print(f'{page}: link to {target}: no such heading'); bad += 1
readme = open(top + '/README.md', encoding='utf-8').read()
toc = re.search(r'^## Contents\n(.*?)^## ', readme, re.S | re.M)
listed = re.findall(r'^- \[[^]]*\]\(#([^)]*)\)', toc.group(1), re.M) if toc else []
sections = [slug(h) for h in re.findall(r'^## (.*)', re.sub(r'```.*?```', '', readme, flags=re.S), re.M)]
if listed != [s for s in sections if s != 'contents']:
    print(f'README: the contents list {listed}, the sections are {sections}'); bad += 1
for page in pages[2:]:
    if '](' + page + ')' not in readme:
        print(f'README: {page} is not linked'); bad += 1
print(f'{len(pages)} pages checked')
sys.exit(1 if bad else 0)
EOF
rc=$?
cat "$WORK/links.txt"
check "every link leads somewhere, the contents are the sections, every docs page is linked" eq "$rc" 0

# The README's commands: the lines of code blocks whose first line is a command.
commands() {
    awk '/^```/ { if (inb) { inb = 0; next } inb = 1; first = 1; next }
        inb && first { first = 0; cmd = ($0 ~ /^(sudo |make|scripts\/|build\/|mailsoak|man |source |\. )/) }
        inb && cmd { line = line $0; if (line ~ /\\$/) { sub(/\\$/, "", line); next } print line; line = "" }' "$readme"
}
commands >"$WORK/commands.txt"
check "the README shows commands" gt "$(wc -l <"$WORK/commands.txt")" 5

# scripts/demo runs the demo with the README's arguments: this test runs that run, shortened.
check "scripts/demo runs mailsoak run -c conf/james-393.conf with its arguments" \
    grep -qx 'exec build/mailsoak run -c conf/james-393.conf "\$@"' "$TOP/scripts/demo"
"$MAILSOAK" run -c "$TOP/conf/james-393.conf" --duration 3s --drain 3s --interval 1s \
    >"$WORK/demo.txt" 2>"$WORK/demo.err"
check "the demo's run exits 0" eq "$?" 0
cat "$WORK/demo.txt"
# rows RULE-OF-BLOCK: a table's row names, in order.
awk '/^sent /, /^$/ { sub(/ +[^ ]+$/, ""); print }' "$WORK/demo.txt" >"$WORK/rows.txt"
awk '/^## Reading the table/ { s = 1 } s && /^```/ { if (inb) exit; inb = 1; next }
    inb && /^[a-z]/ { sub(/ +[^ ]+$/, ""); print }' "$readme" >"$WORK/readme-rows.txt"
sed -n '/^## Reading the table/,/^## /{ /^| [a-z]/ { s/^| \([^|]*\) |.*/\1/; s/, /\n/g; p } }' "$readme" |
    grep -vx row >"$WORK/readme-row-names.txt"
# subsequence A B: every line of A is a line of B, in the same order, but for the
# rows a run prints only when they have something to say (late: when the sweep found
# mail the drain did not, which a 3-second demo may not leave).
subsequence() {
    awk 'BEGIN { i = n = 0 } NR == FNR { if ($0 != "late") want[n++] = $0; next } i < n && $0 == want[i] { i++ }
        END { if (i < n) print "     missing or out of order: " want[i] > "/dev/stderr"; exit i < n }' "$1" "$2"
}
check "the README's sample table has rows" gt "$(wc -l <"$WORK/readme-rows.txt")" 10
check "the sample table's rows are the run's, in order" subsequence "$WORK/readme-rows.txt" "$WORK/rows.txt"
check "the table of rows explains rows" gt "$(wc -l <"$WORK/readme-row-names.txt")" 10
check "the table of rows names the run's rows, in order" subsequence "$WORK/readme-row-names.txt" "$WORK/rows.txt"

# The manuals and the completion the README reads from the tree: make's default goal
# builds them (asked of make -n with a scratch BUILD, so that this build's stamps,
# .version among them, stay as make left them), and the commands below read the
# same pages generated here (make asan's tree need not have them).
check "make builds the man pages and the completion" bash -c \
    "make -C '$TOP' -pn BUILD='$WORK/goal' 2>/dev/null | grep '^all:' | grep -q '$WORK/goal/doc/mailsoak.1' &&
     make -C '$TOP' -pn BUILD='$WORK/goal' 2>/dev/null | grep '^all:' | grep -q '$WORK/goal/doc/completion.bash'"
mkdir -p "$WORK/doc"
for t in mailsoak.1 mailsoak.conf.5 mailsoak-server.8 completion.bash; do
    (cd "$TOP" && BUILD=$BUILD scripts/gen-doc "doc/$t.in") >"$WORK/doc/$t"
done

# README_SUBST: what differs between the README's commands and their run here.
need_root
TB=$WORK/tb     # lib.sh's cleanup takes it down on any exit
readme_subst=(
    -e "s|^sudo ||"
    -e "s|/tmp/tb|$TB|g"
    -e "s|build/mailsoak |$MAILSOAK |g"
    -e "s|build/doc/|$WORK/doc/|g"
    -e "s|scripts/|$TOP/scripts/|g"
    -e "s| conf/| $TOP/conf/|g"
    -e 's|mail\.example\.org:25|127.0.0.1:$SMTP_PORT|g'
    -e 's|mail\.example\.org:110|127.0.0.1:$POP3_PORT|g'
    -e 's|users\.txt|$USERS_FILE|g'
    -e "s|--duration [0-9]*m|--duration 3s --messages 200 --drain 5s --set run.sweep_timeout=30s|g"
    -e "s|--json run\.json|--json $WORK/run.json|g"
    -e "s|report run\.json -o report\.html|report $WORK/run.json -o $WORK/report.html|g"
)
# The testbed's down line runs last, after the commands that need a server.
{ grep -v 'testbed down' "$WORK/commands.txt"; grep 'testbed down' "$WORK/commands.txt"; } >"$WORK/order.txt"
ran=0
while IFS= read -r c; do
    case $c in
    scripts/demo) continue ;;                  # above
    scripts/test) continue ;;                  # the suite this test is part of
    make) continue ;;                          # the build this test runs
    esac
    cmd=$(sed "${readme_subst[@]}" <<<"$c")
    [[ $c != *" run "* ]] || rm -f "$WORK/run.json"
    # $SMTP_PORT and the like come from the testbed's environment, once it is up.
    (cd "$WORK" && { [[ ! -r $TB/testbed.env ]] || . "$TB/testbed.env"; } && eval "$cmd") >"$WORK/out.txt" 2>&1
    rc=$?
    # A run's status is its verdict's: 4 or 5 when a gate failed (a backlog Postfix had
    # not delivered within the short sweep, on a loaded machine); the command worked.
    if [[ $c == *" run "* && ($rc == 4 || $rc == 5) ]]; then
        echo "     (exit $rc: $(grep -m1 '^verdict' "$WORK/out.txt"))"
        rc=0
    fi
    check "README: $c (exit 0)" eq "$rc" 0 || tail -20 "$WORK/out.txt"
    case $c in
    *" run "*) check "README: $c: mail delivered" gt "$(jget "$WORK/run.json" .summary.delivered)" 0 ;;
    *" report "*) check "README: $c: a page with charts" grep -q '<svg' "$WORK/report.html" ;;
    *" --version") check "README: $c: the build's version" eq "$(cat "$WORK/out.txt")" "mailsoak $(cat "$TOP/$BUILD/.version")" ;;
    "man -l "*) check "README: $c: the page" grep -q 'mailsoak run' "$WORK/out.txt" ;;
    "source "*) check "README: $c: completes mailsoak" bash -c "$cmd && complete -p mailsoak" ;;
    *"testbed down"*) check "README: $c: nothing left running" bash -c "! \"$TOP/scripts/testbed\" status --dir \"$TB\" >/dev/null 2>&1" ;;
    esac
    ran=$((ran + 1))
done <"$WORK/order.txt"
check "README commands run" gt "$ran" 5
finish
