#!/usr/bin/env bash
# mailsoak logscan over the fixture logs of Postfix, Dovecot, Exim, OpenSMTPD, Courier
# and mailutils (tests/fixtures/logs/*.tsv, each line with the classes it must land
# in): per class, logscan's count is the number of lines expected in it, --lines
# prints exactly the lines expected in some class, with those classes; then custom
# classes from --class and from a config file, the config's logs, a Java stack trace
# counted once as in a run, and bad input refused with exit 2.
source "$(dirname "$0")/lib.sh"

classes="sql_lock deadlock lock timeout oom java_exception fatal defer io lock_wait too_many_connections dict db_error"
for tsv in "$TOP"/tests/fixtures/logs/*.tsv; do
    name=$(basename "$tsv" .tsv)
    grep -v '^#' "$tsv" | grep -v '^$' >"$WORK/$name.expected"
    # a blank line after each: every line is judged alone, as the fixture means (a
    # Java frame right after an exception is that exception's, see below)
    cut -f2- "$WORK/$name.expected" | awk '{print; print ""}' >"$WORK/$name.log"
    "$MAILSOAK" logscan --examples 0 "$WORK/$name.log" >"$WORK/$name.out" 2>&1
    check "$name: exit 0" eq "$?" 0
    for c in $classes; do
        want=$(cut -f1 "$WORK/$name.expected" | tr ',' '\n' | grep -cx "$c")
        got=$(awk -v c="$c" '$1 == c {print $2}' "$WORK/$name.out")
        check "$name: $c counts $want" eq "$got" "$want"
    done
    # --lines: the lines expected in a class, in order, each with its classes
    awk -F'\t' '$1 != "-" {print 2 * NR - 1 ": " $1}' "$WORK/$name.expected" >"$WORK/$name.want-lines"
    "$MAILSOAK" logscan --lines --examples 0 "$WORK/$name.log" |
        sed -n "s|^$WORK/$name.log:\([0-9]*\): \([a-z_,]*\): .*|\1: \2|p" >"$WORK/$name.got-lines"
    # the classes of a line are printed in class order; the fixture may list them otherwise
    sort_classes() { while IFS=': ' read -r n cl; do echo "$n: $(tr ',' '\n' <<<"$cl" | sort | paste -sd,)"; done; }
    check "$name: --lines prints the expected lines and classes" \
        diff <(sort_classes <"$WORK/$name.want-lines") <(sort_classes <"$WORK/$name.got-lines")
done

# A class of one's own, from --class, and from a config file, which also names the log.
printf 'Nov 30 10:00:00 mx app: queue run stalled\nNov 30 10:00:01 mx app: all fine\n' >"$WORK/app.log"
out=$("$MAILSOAK" logscan --no-defaults --class 'stall: queue run stalled' "$WORK/app.log")
check "--class counts its line" grep -qE '^stall +1$' <<<"$out"
check "--no-defaults drops the built-in classes" eq "$(grep -c '^lock ' <<<"$out")" 0
printf '[server]\nlog = %s\nlog_class = stall/i: QUEUE RUN STALLED\n' "$WORK/app.log" >"$WORK/scan.conf"
out=$("$MAILSOAK" logscan -c "$WORK/scan.conf" --examples 1)
check "-c: the config's class and log" grep -qE '^stall +1$' <<<"$out"
check "-c: the built-in classes stay" grep -qE '^lock +0$' <<<"$out"
check "an example names file and line" grep -qF "$WORK/app.log:1: Nov 30 10:00:00 mx app: queue run stalled" <<<"$out"

# A Java stack trace is one exception, as for a followed log.
printf 'Exception in thread "main" java.lang.IllegalStateException: boom\n\tat a.B.c(B.java:1)\n\tat a.B.d(B.java:2)\n' >"$WORK/java.log"
check "a stack trace counts once" grep -qE '^java_exception +1$' <<<"$("$MAILSOAK" logscan "$WORK/java.log")"

# Control bytes from a log never reach the terminal.
printf 'Nov 30 10:00:00 mx x: fatal: \033[31mred\033[0m\n' >"$WORK/ctl.log"
out=$("$MAILSOAK" logscan --lines "$WORK/ctl.log")
check "control bytes are escaped" eq "$(grep -c $'\033' <<<"$out")" 0
check "the escaped line is shown" grep -qF 'fatal: \x1b[31mred' <<<"$out"

"$MAILSOAK" logscan "$WORK/nonexistent.log" >/dev/null 2>"$WORK/err"
check "a missing log: exit 2" eq "$?" 2
check "a missing log is named" grep -q "nonexistent.log" "$WORK/err"
"$MAILSOAK" logscan --class 'bad: a(b' "$WORK/app.log" >/dev/null 2>"$WORK/err"
check "a bad pattern: exit 2" eq "$?" 2
"$MAILSOAK" logscan >/dev/null 2>"$WORK/err"
check "no log at all: exit 2" eq "$?" 2
"$MAILSOAK" logscan --help >"$WORK/help"
check "--help exits 0" eq "$?" 0
check "--help says what it does" grep -q "tune" "$WORK/help"
finish
