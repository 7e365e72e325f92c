#!/usr/bin/env bash
# t_testbed_sql.sh: `scripts/testbed up --sql sqlite|pgsql|mysql` puts the mail system's hot
# path in the database, as the database's own client sees it: a user that exists only as a row
# gets mail (Postfix's map and Dovecot's userdb read the table), a delivery writes the quota
# dict, a login writes last-login, a POP3 DELE + QUIT writes the quota down again; `down` stops
# the database's master by its PID, and no process of the testbed is left.
# shellcheck disable=SC2317 # the check helpers are called through check and wait_for
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/sql_lib.sh
source "$(dirname "$0")/sql_lib.sh"
need_root
"$TOP/scripts/deps" install test >/dev/null || { echo "skip: scripts/deps install test failed" >&2; exit 77; }

for kind in sqlite pgsql mysql; do
    echo "# --sql $kind"
    testbed_up maildir 2 --sql "$kind"
    check "$kind: testbed.env says SQL=$kind" eq "$SQL" "$kind"
    check "$kind: Postfix's virtual_mailbox_maps is the $kind table, through proxymap" \
        eq "$(postconf -c "$POSTFIX_CONF" -h virtual_mailbox_maps)" "proxy:$kind:$POSTFIX_CONF/vmailbox-$kind.cf"
    check "$kind: the database holds the users" eq "$(db_query 'SELECT count(*) FROM users')" 2

    # A user of the table alone: no file of the testbed names it.
    db_query "INSERT INTO users VALUES ('sqlonly@test.local', 'pwsql', '$MAIL_DIR/test.local/sqlonly',
              'test.local/sqlonly/', $(id -u mailsoak-vmail), $(id -g mailsoak-vmail))" >/dev/null
    install -d -o mailsoak-vmail -g mailsoak-vmail "$MAIL_DIR/test.local/sqlonly"
    check "$kind: no file names the table's own user" \
        eq "$(grep -rl sqlonly "$TB/etc" "$TB/users" 2>/dev/null | paste -sd,)" ""
    timeout 30 swaks --server "127.0.0.1:$SMTP_PORT" --from a@example.org --to sqlonly@test.local \
        --body 'sql testbed' >"$WORK/swaks-$kind.log" 2>&1
    check "$kind: SMTP accepts mail for the table's user" eq "$?" 0
    quota() { db_query "SELECT messages FROM quota WHERE username = 'sqlonly@test.local'"; }
    quota_is() { [[ $(quota) == "$1" ]]; }
    check "$kind: the delivery wrote the quota dict (1 message)" wait_for 30 quota_is 1
    check "$kind: ... with its bytes" \
        gt "$(db_query "SELECT bytes FROM quota WHERE username = 'sqlonly@test.local'")" 100
    check "$kind: no login yet" \
        eq "$(db_query "SELECT count(*) FROM last_login WHERE username = 'sqlonly@test.local'")" 0
    before=$(date +%s)
    # -I: DELE answers one line, not a listing. Then QUIT commits the expunge.
    timeout 20 curl -sS -I -X 'DELE 1' "pop3://127.0.0.1:$POP3_PORT/" -u sqlonly@test.local:pwsql \
        >"$WORK/curl-$kind.log" 2>&1
    check "$kind: POP3 logs the table's user in and deletes" eq "$?" 0
    check "$kind: the expunge wrote the quota dict down (0 messages)" wait_for 20 quota_is 0
    login=$(db_query "SELECT last_login FROM last_login WHERE username = 'sqlonly@test.local'")
    check "$kind: the login wrote last-login (at the login's second)" \
        test "${login:-0}" -ge "$before" -a "${login:-0}" -le "$(date +%s)"
    # IMAP over the same passdb and userdb, its login writing last-login too (the
    # POP3 login's row removed first, so only IMAP's can be there).
    db_query "DELETE FROM last_login WHERE username = 'sqlonly@test.local'" >/dev/null
    before=$(date +%s)
    out=$(timeout 20 curl -sS "imap://127.0.0.1:$IMAP_PORT/INBOX" -u sqlonly@test.local:pwsql -X 'UID SEARCH ALL' 2>&1)
    check "$kind: IMAP logs the table's user in, its INBOX empty" eq "$(tr -d '\r' <<<"$out")" "* SEARCH"
    login=$(db_query "SELECT last_login FROM last_login WHERE username = 'sqlonly@test.local'")
    check "$kind: the IMAP login wrote last-login" \
        test "${login:-0}" -ge "$before" -a "${login:-0}" -le "$(date +%s)"
    if [[ $kind != sqlite ]]; then
        dbpid=$(head -n1 "$DB_PIDFILE")
        check "$kind: the database's master runs from the testbed's directory" \
            eq "$(tr '\0' ' ' </proc/"$dbpid"/cmdline | grep -c "$TB")" 1
    fi
    # The testbed's processes, by PID, before stopping it.
    masters=$(for f in "$POSTFIX_PIDFILE" "$DOVECOT_PIDFILE" ${DB_PIDFILE:+"$DB_PIDFILE"}; do
                  head -n1 "$f" | tr -d ' '; done)
    pids=$(ps -e -o pid=,ppid= | awk -v m="$masters" '
        BEGIN { n = split(m, a, "\n"); for (i = 1; i <= n; i++) keep[a[i]] = 1 }
        { kids[$2] = kids[$2] " " $1 }
        END { for (p in keep) walk(p) }
        function walk(p,   k, i, n) { print p; n = split(kids[p], k, " "); for (i = 1; i <= n; i++) walk(k[i]) }')
    "$TOP/scripts/testbed" down --dir "$TB" >"$WORK/down-$kind.log" 2>&1
    check "$kind: testbed down" eq "$?" 0
    left=$(for p in $pids; do alive "$p" && ps -o pid=,comm= -p "$p"; done | paste -sd,)
    check "$kind: no process of the testbed is left" eq "$left" ""
    TB=''
done
finish
