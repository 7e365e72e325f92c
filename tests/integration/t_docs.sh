#!/usr/bin/env bash
# The manuals and the bash completion (doc/, scripts/gen-doc) against the programs'
# own --help and example files, which come from the same tables by another path:
# every command, flag and key the programs accept is in the pages and offered by
# the completion, and the pages render without a warning from mandoc or groff.
source "$(dirname "$0")/lib.sh"

for tool in mandoc groff; do
    command -v $tool >/dev/null || { echo "skip: $tool is not installed (scripts/deps)" >&2; exit 77; }
done

cd "$TOP" || exit 1
for t in mailsoak.1 mailsoak.conf.5 mailsoak-server.8 completion.bash; do
    BUILD=$BUILD scripts/gen-doc "doc/$t.in" >"$WORK/$t"
    check "$t generated" eq "$?" 0
done

for page in mailsoak.1 mailsoak.conf.5 mailsoak-server.8; do
    mandoc -T lint -W warning "$WORK/$page" >"$WORK/lint.txt" 2>&1
    check "$page: mandoc -T lint finds no warning" eq "$?" 0
    check "$page: mandoc said nothing" eq "$(cat "$WORK/lint.txt")" ""
    groff -ww -man -z "$WORK/$page" >"$WORK/groff.txt" 2>&1
    check "$page: groff -ww finds no warning" eq "$(cat "$WORK/groff.txt")" ""
    # The text as a reader sees it, without the overstrikes of bold and underline.
    mandoc -T ascii -O width=300 "$WORK/$page" | sed 's/.\x08//g' >"$WORK/$page.txt"
done

# keys_of_ini FILE: section.key of every "[section]" and ";key = " line of an example
# INI file (the programs' config-example and --help), one per line, sorted.
keys_of_ini() { awk '/^\[/ { s = substr($1, 2, length($1) - 2) } /^;[a-z_0-9]+ = / { sub(/^;/, ""); print s "." $1 }' "$1" | sort; }
# keys_of_help FILE: the same from --help's "[section]" and "  key (--flag)" lines.
keys_of_help() { awk '/^\[/ { s = substr($1, 2, length($1) - 2) } /^  [a-z_0-9]+( |$)/ && s { print s "." $1 }' "$1" | sort; }
# keys_of_page FILE: the same from a rendered page's "[section]" subsections and
# their "key = FORM" entries.
keys_of_page() {
    awk '/^[^ ]|^   [^ ]/ { s = "" } /^   \[[a-z0-9_.]+\]$/ { s = substr($1, 2, length($1) - 2) }
         /^       [a-z_0-9]+ = / && s { print s "." $1 }' "$1" | sort
}
same() { diff <(echo "$1") <(echo "$2") >&2; }

"$MAILSOAK" config-example >"$WORK/example.conf"
"$MAILSOAK" run --help >"$WORK/run-help.txt"
"$MAILSOAK_SERVER" --help >"$WORK/server-help.txt"
keys=$(keys_of_ini "$WORK/example.conf")
server_keys=$(keys_of_help "$WORK/server-help.txt")
check "the example has keys" gt "$(wc -l <<<"$keys")" 50
check "the server's help has keys" gt "$(wc -l <<<"$server_keys")" 15
check "run --help and config-example list the same keys" same "$keys" "$(keys_of_help "$WORK/run-help.txt")"
check "mailsoak.conf(5) has every key, in its section" same "$keys" "$(keys_of_page "$WORK/mailsoak.conf.5.txt")"
check "mailsoak-server(8) has every key, in its section" same "$server_keys" "$(keys_of_page "$WORK/mailsoak-server.8.txt")"

# Commands: the list of mailsoak --help, each with its own --help flags.
"$MAILSOAK" --help >"$WORK/help.txt"
commands=$(awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }' "$WORK/help.txt")
check "mailsoak --help lists commands" gt "$(wc -l <<<"$commands")" 4
for cmd in $commands; do
    check "mailsoak(1) has the command $cmd" grep -q "^       mailsoak $cmd\( \|$\)" "$WORK/mailsoak.1.txt"
done
flags=$(grep -o '(--[a-z0-9-]*)' "$WORK/run-help.txt" | tr -d '()' | sort)
check "run --help has flags" gt "$(wc -l <<<"$flags")" 10
check "mailsoak(1) has every flag of run" same "$flags" \
    "$(grep -oE '^       --[a-z0-9-]+ [A-Za-z0-9|/-]+$' "$WORK/mailsoak.1.txt" | awk '{ print $1 }' | sort)"
server_flags=$(grep -o '(--[a-z0-9-]*)' "$WORK/server-help.txt" | tr -d '()' | sort)
for f in $server_flags; do
    check "mailsoak-server(8) has $f" grep -q "^       $f " "$WORK/mailsoak-server.8.txt"
done
for outcome in delivered duplicated corrupted lost pending; do
    check "mailsoak(1) has the outcome $outcome" grep -qE "^       $outcome( |$)" "$WORK/mailsoak.1.txt"
done
check "mailsoak(1) has the exit statuses" grep -q "^EXIT STATUS" "$WORK/mailsoak.1.txt"
for stage in smtp.rcpt smtp.eod pop3.pass pop3.retr; do
    check "mailsoak-server(8) names the fault stage $stage" grep -q "fault.${stage%.*}.STAGE" "$WORK/mailsoak-server.8.txt"
    check "mailsoak-server(8) lists the stage ${stage#*.}" grep -A2 "fault.${stage%.*}.STAGE" "$WORK/mailsoak-server.8.txt" \
        | grep -qw "${stage#*.}"
done
# The fault sections are parsed by hand, not from a table: their prose must follow
# the parser, whose errors list what it takes.
kinds=$("$MAILSOAK_SERVER" --set fault.smtp.rcpt.kind=bogus 2>&1 | sed -n "s/.*expected \(.*\): 'bogus'/\1/p" |
        sed 's/,\| or / /g')
check "the server names its fault kinds" gt "$(wc -w <<<"$kinds")" 5
for k in $kinds; do
    check "mailsoak-server(8) describes the fault kind $k" grep -qE "^              ([^ ]+, )?$k(,| |$)" \
        "$WORK/mailsoak-server.8.txt"
done
fkeys=$("$MAILSOAK_SERVER" --set fault.smtp.rcpt.bogus=1 2>&1 | sed -n 's/.*unknown key (\(.*\)).*/\1/p' | tr -d ,)
check "the server names its fault keys" gt "$(wc -w <<<"$fkeys")" 5
for k in $fkeys; do
    check "mailsoak-server(8) describes the fault key $k" grep -q "^       $k = " "$WORK/mailsoak-server.8.txt"
done
rkeys=$("$MAILSOAK_SERVER" --set fault.rate.bogus=1 2>&1 | sed -n 's/.*unknown key (\(.*\)).*/\1/p' | tr -d ,)
check "the server names its rate fault keys" gt "$(wc -w <<<"$rkeys")" 3
for k in $rkeys; do
    check "mailsoak-server(8) describes the rate fault key $k" grep -q "^       $k = " "$WORK/mailsoak-server.8.txt"
done

# The completion, as bash calls it: COMP_LINE up to the cursor.
# offers LINE: what it offers, one per line, sorted.
offers() {
    bash -c 'source "$1"; COMP_LINE=$2; COMP_POINT=${#2}; _mailsoak; printf "%s\n" "${COMPREPLY[@]}"' \
        _ "$WORK/completion.bash" "$1" | sort
}
check "completion: the commands" same "$(sort <<<"$commands")" "$(offers 'mailsoak ' | grep -v '^--help$')"
check "completion: --set offers every key" same "$(sed 's/$/=/' <<<"$keys")" "$(offers 'mailsoak run --set ')"
check "completion: run offers every flag of its --help" same "$flags" \
    "$(offers 'mailsoak run --' | grep -vxE -- '--(help|config|set|no-check)')"
check "completion: the server's --set offers every key" same "$(sed 's/$/=/' <<<"$server_keys")" \
    "$(offers 'mailsoak-server --set ')"
for cmd in $commands; do
    "$MAILSOAK" "$cmd" --help >"$WORK/cmd-help.txt"
    check "$cmd --help exits 0" eq "$?" 0
    # Flags where a usage names them: at a line's indentation, in [brackets] or
    # (parentheses), or after "-o, ".
    for f in $(grep -oE -- '(^ *|[[(]|, )--?[a-z][a-z0-9-]*' "$WORK/cmd-help.txt" | grep -oE -- '--?[a-z][a-z0-9-]*' | sort -u); do
        check "completion: $cmd offers $f" grep -qx -- "$f" <(offers "mailsoak $cmd ${f:0:2}")
    done
done
check "completion: an enum's values" same "$(printf '%s\n' implicit none starttls)" "$(offers 'mailsoak run --set smtp.tls=' | sed 's/.*=//')"
check "completion: a flag's values" same "$(printf '%s\n' auto off on)" "$(offers 'mailsoak run --pipelining ')"
check "completion: the value after '=' alone (bash breaks the word there)" same "starttls" "$(offers 'mailsoak run --smtp-tls=st')"
check "completion: compare --format" same "$(printf '%s\n' csv json markdown text)" "$(offers 'mailsoak compare --format ')"
check "completion: no settings for compare" same "" "$(offers 'mailsoak compare --set ' | grep '=')"
finish
