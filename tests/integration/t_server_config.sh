#!/usr/bin/env bash
# mailsoak-server's configuration: the documented example loads as it is and with
# every fault switched on; bad keys stop it with "file:line: key: reason" and exit
# status 2; --help lists the keys; --version prints the build's; SIGINT stops it
# cleanly. A relative path in a configuration file (store_dir, log, pidfile,
# ready_file, users.file, fault.rate.spool_dir) is taken beside that file,
# whatever the working directory, as mailsoak's own are; before, against the
# working directory.
set -uo pipefail
. "$(dirname "$0")/server_lib.sh"
CONF=$TOP/conf/server-faults.conf

srv_start -c "$CONF" --set server.store_dir="$WORK/mail"
srv_stop
ok "conf/server-faults.conf loads"

# Switch every commented fault section and key on.
sed -E 's/^;(\[fault|[a-z_]+ =)/\1/' "$CONF" >"$WORK/all.conf"
grep -q '^\[fault.store\]' "$WORK/all.conf" && grep -q '^lose_every = 1000' "$WORK/all.conf" || fail "sed did not uncomment"
srv_start -c "$WORK/all.conf" --set server.store_dir="$WORK/mail"
srv_stop
ok "conf/server-faults.conf with every fault on loads"

bad() { # want-regex config-text [args]
    local want=$1 text=$2
    shift 2
    printf '%s\n' "$text" >"$WORK/bad.conf"
    local rc=0
    "$MAILSOAK_SERVER" -c "$WORK/bad.conf" --listen-smtp 127.0.0.1:0 --listen-pop3 127.0.0.1:0 "$@" \
        >"$WORK/bad.out" 2>&1 </dev/null || rc=$?
    [[ $rc -eq 2 ]] || fail "exit $rc, want 2, for: $text"
    grep -qE "$want" "$WORK/bad.out" || fail "error for [$text] was: $(cat "$WORK/bad.out")"
}
bad "bad.conf:3: server.store: not one of memory\\|maildir\\|mbox\\|sqlite: 'floppy'" $'[server]\n\nstore = floppy'
bad 'bad.conf:2: server.nonsense: unknown key' $'[server]\nnonsense = 1'
bad 'bad.conf:3: fault.smtp.rcpt.kind: expected 4xx, 5xx' $'[fault.smtp.rcpt]\nodds = 0.1\nkind = sometimes'
bad 'bad.conf:2: \[fault.smtp.helo\]: unknown fault section' $'[fault.smtp.helo]\nodds = 0.1'
bad 'bad.conf:2: fault.store.lose: odds are a fraction' $'[fault.store]\nlose = 1.5'
bad '\[fault.pop3.retr\]: set odds or every' $'[fault.pop3.retr]\nkind = 5xx'
bad '\[fault.imap.fetch\]: kind = undone .*fault.imap.expunge only' $'[fault.imap.fetch]\nkind = undone\nodds = 0.1'
bad '\[fault.imap.fetch\]: kind = applied .*fault.imap.store only' $'[fault.imap.fetch]\nkind = applied\nodds = 0.1'
bad 'server.listen_imaps: needs server.tls_cert' '' --listen-imaps 127.0.0.1:0
bad 'fault.smtp.mail.delay: expected MIN-MAX|MIN is above MAX' '' --set 'fault.smtp.mail.delay=3s-1s'
bad "users.pattern: 'nobody' needs one %d" '' --set users.pattern=nobody
bad 'fault.rate.spool_dir: .*/none: No such file' $'[fault.rate]\nlimit = 5\nspool_dir = '"$WORK/none"
ok "bad settings: file:line: key: reason, exit 2"

"$MAILSOAK_SERVER" --help | grep -q 'listen_smtp (--listen-smtp)' || fail "--help does not list listen_smtp"
v=$("$MAILSOAK_SERVER" --version) && [[ $v == "mailsoak-server $(cat "$TOP/${BUILD:-build}/.version")" ]] ||
    fail "--version printed '$v'"
ok "--version: $v"

srv_start
kill -INT "$SRV_PID"
wait "$SRV_PID" || fail "exit status $? after SIGINT"
SRV_PID=
grep -q 'received signal 2: shutting down' "$WORK/server.log" || fail "no shutdown line"
[[ ! -e $WORK/server.pid ]] || fail "pid file left"
ok "SIGINT: clean exit 0, pid file removed"
# Relative paths in a file, the server started from elsewhere.
mkdir -p "$WORK/rel/spool" "$WORK/cwd"
printf 'a@test.local pw\nb@test.local pw\n' >"$WORK/rel/people"
printf '[server]\nstore = maildir\nstore_dir = mail\nlog = server.log\npidfile = server.pid\nready_file = ready\n[users]\nfile = people\n' \
    >"$WORK/rel/srv.conf"
# a fault's directory too (the server stops with exit 2 on one it cannot open)
printf '[fault.rate]\nlimit = 1000\nspool_dir = spool\n' >>"$WORK/rel/srv.conf"
(cd "$WORK/cwd" && exec "$MAILSOAK_SERVER" -c "$WORK/rel/srv.conf" --listen-smtp 127.0.0.1:0 --listen-pop3 127.0.0.1:0) \
    >"$WORK/rel/stdout" 2>"$WORK/rel/stderr" &
SRV_PID=$!
for _ in $(seq 100); do [[ -s $WORK/rel/ready ]] && break; alive "$SRV_PID" || break; sleep 0.05; done
[[ -s $WORK/rel/ready ]] || fail "relative paths: no ready file beside the config: $(cat "$WORK/rel/stderr")"
[[ -s $WORK/rel/server.pid && $(cat "$WORK/rel/server.pid") = "$SRV_PID" ]] || fail "relative paths: no pid file beside the config"
grep -q 'starting: store=maildir store_dir=.*/rel/mail users=2 ' "$WORK/rel/server.log" ||
    fail "relative paths: the log beside the config does not say store_dir .../rel/mail and the 2 users of 'people'"
read -r _ smtp _ <"$WORK/rel/ready"
SMTP_PORT=${smtp##*:}
printf 'Subject: t\r\n\r\nbody\r\n' >"$WORK/rel/msg"
curl_send "$WORK/rel/msg" a@test.local >/dev/null || fail "relative paths: delivery to a@test.local refused"
for _ in $(seq 100); do compgen -G "$WORK/rel/mail/a@test.local/new/*" >/dev/null && break; sleep 0.05; done
compgen -G "$WORK/rel/mail/a@test.local/new/*" >/dev/null || fail "relative paths: the message is not in the store beside the config"
srv_stop
[[ -z $(ls -A "$WORK/cwd") ]] || fail "relative paths: made in the working directory: $(ls -A "$WORK/cwd")"
ok "relative paths in a file: taken beside the file"
echo "all config tests passed"
