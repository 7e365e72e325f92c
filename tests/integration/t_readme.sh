#!/usr/bin/env bash
# t_readme.sh: the README is a quick start that stays true. It is under 12 KB; its
# table of contents lists its sections; every relative link of the README and of
# docs/*.md leads to a file (and heading) that exists, and the README links every
# page of docs/. Every command of its code blocks is checked: run here, against a
# real Postfix + Dovecot testbed, with only the substitutions of README_SUBST below
# (scratch paths, the testbed's ports for mail.example.org, a short load), or, for
# scripts/demo, scripts/test and make, as written there. The rows of its sample
# table and of its table of rows are rows a run prints, in that order. The first
# command block of every docs/ page is checked too: run the same way (bounded: a
# capacity search of short steps within 20 s, a compare-backends of one short run),
# or, where it needs other hosts or an old checkout (hosts.md, performance.md) or is
# another test's (sql.md: t_testbed_sql), its program must know every flag it uses,
# and `make -n` every make target a page names.
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
awk '/^sent /, /^$/ { sub(/  +.*$/, ""); print }' "$WORK/demo.txt" >"$WORK/rows.txt"
awk '/^## Reading the table/ { s = 1 } s && /^```/ { if (inb) exit; inb = 1; next }
    inb && /^[a-z]/ { sub(/  +.*$/, ""); print }' "$readme" >"$WORK/readme-rows.txt"
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
# A capacity search of probes of a few seconds from 5 to 10 msg/s, unconfirmed, and
# no run started that would end after 20 s: a loaded testbed's first probe falls
# behind, and the staircase below it would run for a minute.
CAP_SHORT="--set capacity.start=5 --set capacity.max_rate=10 --set capacity.level=5s \
--set capacity.drain=20s --set capacity.confirm=no --settle 1s --set run.sweep_timeout=5s \
--set capacity.time_limit=20s"
readme_subst=(
    -e "s|^sudo ||"
    -e "s|/tmp/tb|$TB|g"
    -e "s|build/mailsoak |$MAILSOAK |g"
    -e "s|^mailsoak |$MAILSOAK |"
    -e "s|build/doc/|$WORK/doc/|g"
    -e "s|scripts/|$TOP/scripts/|g"
    -e "s| conf/| $TOP/conf/|g"
    -e 's|mail\.example\.org:25|127.0.0.1:$SMTP_PORT|g'
    -e 's|mail\.example\.org:110|127.0.0.1:$POP3_PORT|g'
    -e 's|mail\.example\.org:143|127.0.0.1:$IMAP_PORT|g'
    -e 's|users\.txt|$USERS_FILE|g'
    -e "s|--duration [0-9]*m|--duration 3s --messages 200 --drain 5s --set run.sweep_timeout=30s|g"
    -e "s|/tmp/mailsoak-testbed|$TB|g"
    -e "s|--set capacity.level=15s --set capacity.start=50 --set capacity.time_limit=10m|$CAP_SHORT|"
    -e "s|--duration 60s --repeat 2 --out /tmp/cb -- --rate 20|--duration 3s --repeat 1 --backends maildir --users 50 --out $WORK/cb -- --rate 20 --drain 3s --set run.sweep_timeout=10s|"
    -e "s|/tmp/cb/|$WORK/cb/|g"
    -e "s|--json run\.json|--json $WORK/run.json|g"
    -e "s|report run\.json -o report\.html|report $WORK/run.json -o $WORK/report.html|g"
)
# run_cmd PAGE CMD: one command of the README or a docs page, as the page writes it
# but for README_SUBST, with what its kind of command must show.
ran=0
run_cmd() {
    local page=$1 c=$2 cmd rc
    cmd=$(sed "${readme_subst[@]}" <<<"$c")
    # a run without a duration of its own (a docs page's) is shortened like the README's
    if [[ $c == *" run "* && $c != *--duration* && $c != *--messages* ]]; then
        cmd+=" --duration 3s --messages 200 --drain 5s --set run.sweep_timeout=30s --set fill.messages=0"
    fi
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
    # A capacity search that found none (1) still ran: its JSON says what it did.
    [[ $c != *" capacity "* || $rc != 1 ]] || rc=0
    check "$page: $c (exit 0)" eq "$rc" 0 || tail -20 "$WORK/out.txt"
    case $c in
    *" run --messages 1") check "$page: $c: the smoke test proves its message" grep -q '^verdict  PROVEN' "$WORK/out.txt" ;;
    *" run "*--json*) check "$page: $c: mail delivered" gt "$(jget "$WORK/run.json" .summary.delivered)" 0 ;;
    *" run "*) check "$page: $c: a verdict" grep -q '^verdict ' "$WORK/out.txt" ;;
    *" capacity "*) check "$page: $c: levels run" gt "$(jget "$WORK/cap.json" '.levels | length')" 0 ;;
    *compare-backends*) check "$page: $c: the table's summary" grep -qE '^  answer +' "$WORK/cb/compare.txt" ;;
    *" compare "*) check "$page: $c: a table" grep -q '^| sent |' "$WORK/out.txt" ;;
    *" report "*) check "$page: $c: a page with charts" grep -q '<svg' "$WORK/report.html" ;;
    *" --version") check "$page: $c: the build's version" eq "$(cat "$WORK/out.txt")" "mailsoak $(cat "$TOP/$BUILD/.version")" ;;
    "man -l "*) check "$page: $c: the page" grep -q 'mailsoak run' "$WORK/out.txt" ;;
    "source "*) check "$page: $c: completes mailsoak" bash -c "$cmd && complete -p mailsoak" ;;
    *"testbed down --dir /tmp/tb") check "$page: $c: nothing left running" bash -c "! \"$TOP/scripts/testbed\" status --dir \"$TB\" >/dev/null 2>&1" ;;
    esac
    ran=$((ran + 1))
}

# The README's commands; the testbed's down line after the docs pages' commands, which
# need the server too.
while IFS= read -r c; do
    case $c in
    scripts/demo) continue ;;                  # above
    scripts/test) continue ;;                  # the suite this test is part of
    make) continue ;;                          # the build this test runs
    *"testbed down"*) continue ;;              # below
    esac
    run_cmd README "$c"
done <"$WORK/commands.txt"

# Each docs page's first code block (fenced, or indented by four spaces) that holds a
# command: its command lines, continuations joined, "PAGE<TAB>COMMAND" a line.
python3 - "$TOP" >"$WORK/docs-commands.txt" <<'PY'
import os, re, sys
top = sys.argv[1]
cmd = re.compile(r'^(sudo )?(make|scripts/|build/|mailsoak )')
def blocks(text):
    fenced, cur, prev_blank = False, None, True
    for line in text.split('\n'):
        if line.startswith('```'):
            if fenced:
                yield cur
            fenced, cur = not fenced, []
        elif fenced:
            cur.append(line)
        elif line.startswith('    ') and (cur is not None or prev_blank):
            cur = (cur or []) + [line[4:]]
        else:
            if cur:
                yield cur
            cur = None
        if not fenced:
            prev_blank = line.strip() == ''
for page in sorted(f for f in os.listdir(top + '/docs') if f.endswith('.md')):
    for b in blocks(open(top + '/docs/' + page, encoding='utf-8').read()):
        out, acc = [], ''
        for line in b:
            acc += line.rstrip()
            if acc.endswith('\\'):
                acc = acc[:-1]
                continue
            if cmd.match(acc.strip()):
                out.append(acc.strip())
            acc = ''
        if out:
            for c in out:
                print(page + '\t' + c)
            break
PY
cat "$WORK/docs-commands.txt"
check "docs pages show commands" gt "$(cut -f1 "$WORK/docs-commands.txt" | sort -u | wc -l)" 5
# make_n ARGS: make knows the target (a dry run, in a scratch build directory).
make_n() { make -C "$TOP" -n "$@" BUILD="$WORK/goal" >/dev/null 2>&1; }
# known_flags LINE: every --flag of the line is in its program's --help.
known_flags() {
    local line=${1#sudo } help flag bad=0
    case $line in
    mailsoak\ *) help=$("$MAILSOAK" "$(awk '{ print $2 }' <<<"$line")" --help 2>&1) ;;
    scripts/*) help=$("$TOP/${line%% *}" --help 2>&1) ;;
    *) echo "     no program to ask: $line" >&2; return 1 ;;
    esac
    for flag in $(grep -oE '(^| )--[a-z][a-z0-9-]*' <<<"$line"); do
        grep -q -- "$flag" <<<"$help" || { echo "     $flag is not in ${line%% *}'s --help" >&2; bad=1; }
    done
    return $bad
}
while IFS=$'\t' read -r page c; do
    # a command the README has ran above (the testbed's down line runs below)
    if grep -qxF -- "$c" "$WORK/commands.txt"; then
        echo "ok   docs/$page: $c (the README's, run there)"
        continue
    fi
    case $page:$c in
    building.md:* | *:make | *:make\ *) c=${c%%#*}; check "docs/$page: $c(a make target)" make_n ${c#make} ;;
    hosts.md:* | performance.md:*) check "docs/$page: $c (its flags known)" known_flags "$c" ;;
    # a testbed of each database, up and down, is t_testbed_sql's (a second testbed,
    # PostgreSQL's among them, would double this test's servers)
    sql.md:*) check "docs/$page: $c (its flags known; t_testbed_sql runs it)" known_flags "${c%%#*}" ;;
    *) run_cmd "docs/$page" "$c" ;;
    esac
done <"$WORK/docs-commands.txt"

# The README's testbed down, last.
while IFS= read -r c; do
    run_cmd README "$c"
done < <(grep 'testbed down' "$WORK/commands.txt")

check "README commands run" gt "$ran" 5
finish
