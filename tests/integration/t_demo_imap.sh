#!/usr/bin/env bash
# t_demo_imap.sh: with no target, `mailsoak run --readers-protocol imap` soaks the
# reference server over IMAP, as the POP3 demo does: every message proven delivered
# exactly once by drain readers, then by clients idling in IDLE whose mail the
# server pushes (push latencies counted). Before, IMAP readers needed a target.
source "$(dirname "$0")/lib.sh"
[[ -x $MAILSOAK && -x $MAILSOAK_SERVER ]] || { echo "skip: build first"; exit 77; }

# demo NAME ARGS...: one short demo run over IMAP, its JSON in $WORK/NAME.json.
demo() {
    local name=$1
    shift
    TMPDIR=$WORK timeout 120 "$MAILSOAK" run --readers-protocol imap --duration 6s --messages 60 \
        --set users.count=20 --interval 1s --json "$WORK/$name.json" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
    check "$name: exits 0" eq "$?" 0 || { tail -5 "$WORK/$name.err"; cat "$WORK/$name.out"; }
    check "$name: the demo reads over IMAP" grep -q 'soaking the reference server (pid [0-9]*, smtp [^,]*, imap 127.0.0.1:' \
        "$WORK/$name.err"
    check "$name: 60 sent, 60 delivered exactly once" eq \
        "$(jget "$WORK/$name.json" '[.summary.sent, .summary.delivered, .summary.lost, .summary.duplicated] | @tsv')" \
        $'60\t60\t0\t0'
    check "$name: fetched over IMAP" gt "$(jget "$WORK/$name.json" '.summary.latency["imap.fetch"].count // 0')" 0
    check "$name: nothing over POP3" eq \
        "$(jget "$WORK/$name.json" '[.summary.latency | keys[] | select(startswith("pop3."))] | length')" 0
}

demo drain
demo idle --set imap.models=idle:100 --set pop3.exclusive=yes
check "idle: deliveries pushed as EXISTS" gt "$(jget "$WORK/idle.json" '.summary.latency["push.exists"].count // 0')" 0
finish
