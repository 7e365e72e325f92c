#!/usr/bin/env bash
# The IMAP idle model (imap.models = idle:100) against the reference server's IMAP:
# each of 20 users' clients idles on its INBOX, and every message is fetched when
# an EXISTS announces it, proven delivered exactly once, its push timed (accepted
# to EXISTS, accepted to fetched). Then the server's IMAP faults, each found: an
# IDLE that pushes nothing (silent) shows as push latency and the error class
# imap_idle_unannounced, never as a loss; a mix of idle clients and webmail
# sessions (idle:80,webmail:20) proves every message too; an EXPUNGE answered but not done
# (undone) leaves a message the sweep reads again: duplicated, exit 4.
source "$(dirname "$0")/lib.sh"
[[ -x $MAILSOAK && -x $MAILSOAK_SERVER ]] || { echo "skip: build first"; exit 77; }
USERS=20

# soak NAME [settings...]: 100 messages at 50/s to the idle clients; $WORK/NAME.json.
soak() {
    local name=$1
    shift
    "$MAILSOAK" run --smtp "$SMTP" --imap "$IMAP" --set readers.protocol=imap --set imap.models=idle:100 \
        --set users.count=$USERS --readers 2 --senders 4 --messages 100 --rate 50 --duration 30s --drain 10s \
        --set run.sweep_timeout=20s --interval 1s --seed 5 --json "$WORK/$name.json" "$@" \
        >"$WORK/$name.txt" 2>"$WORK/$name.live"
}
s() { jget "$WORK/$1.json" "$2"; }

ref_up clean
soak clean
rc=$?
cat "$WORK/clean.txt"
check "clean: exit 0" eq "$rc" 0
check "clean: 100 delivered exactly once" eq "$(s clean .summary.delivered)" 100
check "clean: no errors" eq "$(s clean .summary.errors)" 0
check "clean: $USERS idle clients" eq "$(s clean .imap.idle_users)" $USERS
check "clean: read by the idle clients, not the sweep" eq "$(s clean .summary.late)" 0
# each message read by an idle client (not later by the sweep) is timed to its
# EXISTS, or counted busy (its client was fetching when the EXISTS came), or
# missed: never both, never none
pushes() { jget "$WORK/$1.json" '(.summary.latency["push.exists"].count // 0) + .summary.push_busy + .summary.push_missed'; }
idle_read() { jget "$WORK/$1.json" '.summary.read - .summary.late'; }
check "clean: every message's push timed or counted" eq "$(pushes clean)" "$(idle_read clean)"
check "clean: accepted to EXISTS timed" gt "$(s clean '.summary.latency["push.exists"].count')" 0
check "clean: accepted to fetched timed" gt "$(s clean '.summary.latency["push.fetched"].count')" 0
check "clean: no push missed" eq "$(s clean .summary.push_missed)" 0
check "clean: the table shows the push" grep -q "accepted to EXISTS" "$WORK/clean.txt"
ref_down

# A mix: 16 idle clients and 4 webmail users, whose webmail sessions look at
# their mail every 2 s and leave it; no drain readers, so the sweep (the idle
# clients' sessions, once they log out) reads it.
ref_up mix
# (the webmail users' mail waits for the sweep by design, so the backlog grows by
# a fifth of the sending rate; a loaded machine's slower idle clients took it past
# the kept-up gate's bound: this scenario is about proof, so that gate is off)
soak mix --set imap.models=idle:80,webmail:20 --set imap.poll_interval=2s --readers 0 --set gate.kept_up=no
rc=$?
cat "$WORK/mix.txt"
check "mix: exit 0" eq "$rc" 0
check "mix: 100 delivered exactly once" eq "$(s mix .summary.delivered)" 100
check "mix: 16 idle and 4 webmail users" eq "$(s mix '"\(.imap.idle_users) \(.imap.webmail_users)"')" "16 4"
check "mix: webmail sessions fetched headers" gt "$(s mix '.summary.latency["imap.headers"].count // 0')" 0
check "mix: pushes timed" gt "$(s mix '.summary.latency["push.exists"].count // 0')" 0
ref_down

# silent: no EXISTS while any IDLE lasts; the renewal (2 s) finds the mail.
ref_up silent --set fault.imap.idle.kind=silent --set fault.imap.idle.every=1
# (the backlog grows for want of pushes within the short send window, and the
# kept-up gate says so: this scenario is about what is lost, so that gate is off)
soak silent --set imap.idle_renew=2s --set gate.kept_up=no
rc=$?
cat "$WORK/silent.txt"
check "silent: exit 0 (nothing lost)" eq "$rc" 0
check "silent: 100 delivered exactly once" eq "$(s silent .summary.delivered)" 100
check "silent: no push timed to an EXISTS" eq "$(s silent '.summary.latency["push.exists"].count // 0')" 0
check "silent: the missed pushes counted" gt "$(s silent .summary.push_missed)" 0
check "silent: every message's push counted" eq "$(pushes silent)" "$(idle_read silent)"
check "silent: an error of class imap_idle_unannounced per missed push" \
    eq "$(s silent '.summary.errors_by_class.imap_idle_unannounced // 0')" "$(s silent .summary.push_missed)"
ref_down

# undone: the first EXPUNGE is answered and not done.
ref_up undone --set fault.imap.expunge.kind=undone --set fault.imap.expunge.every=1 \
    --set fault.imap.expunge.max=1
soak undone
rc=$?
cat "$WORK/undone.txt"
check "undone: exit 4 (integrity)" eq "$rc" 4
# the messages of that one EXPUNGE (one or a few): read again by the sweep
check "undone: its messages duplicated" gt "$(s undone .summary.duplicated)" 0
check "undone: the rest delivered exactly once" \
    eq "$(($(s undone .summary.delivered) + $(s undone .summary.duplicated)))" 100
check "undone: nothing lost" eq "$(s undone .summary.lost)" 0
ref_down
finish
