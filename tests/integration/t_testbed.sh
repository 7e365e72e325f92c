#!/usr/bin/env bash
# tests/integration/t_testbed.sh: proves scripts/testbed gives, for every mail store backend, a real
# Postfix + Dovecot on loopback that accepts, delivers, counts, serves POP3 and IMAP and stops without leftovers.
# Exit 0 pass, 1 fail, 77 skip (not root, or the packages cannot be installed).
# shellcheck disable=SC2317 # the check helpers are only called through check()
set -euo pipefail

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
TESTBED=$TOP/scripts/testbed
BACKENDS=(maildir mbox sdbox mdbox)
# The whole test must stay bounded even if a server hangs: a watchdog ends it (cleanup included),
# under tests/run's own 600 s. It is a bound, not a measure: the test takes 36 s on a quiet
# machine and took over 240 s beside two other tests at a load of 20-29.
LIMIT=${T_TESTBED_LIMIT:-540}

skip() {
	echo "SKIP: t_testbed: $*" >&2
	exit 77
}

[[ $(id -u) -eq 0 ]] || skip "needs root (it runs Postfix and Dovecot masters)"
[[ -x $TESTBED ]] || {
	echo "t_testbed: $TESTBED missing or not executable" >&2
	exit 1
}
# Run without scripts/test: install the tests' packages from the one list (swaks alone
# would lack the Perl modules of its TLS and IPv6).
if ! command -v curl >/dev/null || ! command -v swaks >/dev/null; then
	"$TOP/scripts/deps" install test >&2 || skip "scripts/deps could not install curl and swaks"
fi

# Set by sourcing each testbed.env.
SMTP_PORT='' SUBMISSION_PORT='' SMTPS_PORT='' SMTP6_PORT='' POP3_PORT='' POP3S_PORT='' POP36_PORT=''
LMTP_PORT='' USER_DOMAIN='' CA_CERT='' IMAP_PORT='' IMAPS_PORT='' IMAP_MAX_CLIENTS=''

WORK=$(mktemp -d "${TMPDIR:-/tmp}/t_testbed.XXXXXX")
chmod 755 "$WORK"
DIRS=()
failures=0
checks=0

cleanup() {
	local rc=$? d
	trap - EXIT
	[[ -n ${WATCHDOG:-} ]] && kill "$WATCHDOG" 2>/dev/null
	for d in "${DIRS[@]}"; do
		timeout 40 "$TESTBED" down --dir "$d" >/dev/null 2>&1 || echo "t_testbed: down failed for $d" >&2
	done
	rm -rf -- "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "t_testbed: interrupted" >&2; exit 1' TERM INT HUP
(
	# Its sleep must die with it, or a caller's pipe would stay open until the limit.
	trap 'kill "$nap" 2>/dev/null; exit 0' TERM
	sleep "$LIMIT" >/dev/null &
	nap=$!
	wait "$nap"
	echo "t_testbed: still running after ${LIMIT}s; giving up" >&2
	kill -TERM $$
) &
WATCHDOG=$!

ok() {
	checks=$((checks + 1))
	printf 'ok %d - %s\n' "$checks" "$*"
}

not_ok() {
	checks=$((checks + 1))
	failures=$((failures + 1))
	printf 'not ok %d - %s\n' "$checks" "$*"
}

# check DESCRIPTION COMMAND...: one line per check; output of a failing command is shown.
check() {
	local what=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$what"
	else
		not_ok "$what"
		printf '%s\n' "$out" | tail -n 15 | sed 's/^/#   /'
	fi
}

show_logs() {
	local f
	for f in "$1"/log/postfix.log "$1"/log/dovecot.log; do
		[[ -s $f ]] || continue
		echo "# --- tail of $f"
		tail -n 20 "$f" | sed 's/^/#   /'
	done
}

# ---------------------------------------------------------------------------------------------
# Helpers run through check().

count_is() {
	local dir=$1 want_q=$2 want_s=$3 got
	got=$(timeout 30 "$TESTBED" count --dir "$dir")
	[[ $got == "queue $want_q"$'\n'"store $want_s" ]] || {
		echo "count said: $got (wanted queue $want_q, store $want_s)"
		return 1
	}
}

send_plain() {
	local i
	for i in 1 2 3; do
		# The body's "From " line must not be taken for an mbox separator.
		timeout 20 swaks --server "127.0.0.1:$SMTP_PORT" --from "tester@example.com" \
			--to "user0000@$USER_DOMAIN" --header "Subject: t_testbed message $i" \
			--body $'From the testbed, message body\nt_testbed-marker\n' >/dev/null || return 1
	done
}

pop3_retr_and_dele() {
	local url="pop3://127.0.0.1:$POP3_PORT/" auth="user0000@$USER_DOMAIN:pw0000" msg
	msg=$(timeout 20 curl -sS "${url}1" -u "$auth")
	grep -q 't_testbed-marker' <<<"$msg" || {
		echo "message 1 lacks the marker: $msg"
		return 1
	}
	timeout 20 curl -sS "$url" -u "$auth" -X 'DELE 1' -I
}

# After pop3_retr_and_dele: two messages left, UIDs 2 and 3 (Dovecot gave 1 2 3); a
# UID FETCH of 3 has the marker; UID STORE + UID EXPUNGE of 2 leaves one.
imap_search_fetch_expunge() {
	local url="imap://127.0.0.1:$IMAP_PORT/INBOX" auth="user0000@$USER_DOMAIN:pw0000" out
	out=$(timeout 20 curl -sS "$url" -u "$auth" -X 'UID SEARCH ALL' | tr -d '\r')
	[[ $out == '* SEARCH 2 3' ]] || {
		echo "UID SEARCH ALL said: $out"
		return 1
	}
	out=$(timeout 20 curl -sS "$url;UID=3" -u "$auth")
	grep -q 't_testbed-marker' <<<"$out" || {
		echo "UID 3 lacks the marker: $out"
		return 1
	}
	timeout 20 curl -sS "$url" -u "$auth" -X 'UID STORE 2 +FLAGS.SILENT (\Deleted)' >/dev/null || return 1
	out=$(timeout 20 curl -sS "$url" -u "$auth" -X 'UID EXPUNGE 2' | tr -d '\r')
	[[ $out == '* 1 EXPUNGE' ]] || {
		echo "UID EXPUNGE 2 said: $out"
		return 1
	}
}

# IMAPS and STARTTLS, the certificate checked against the testbed's CA.
imap_tls() {
	local auth="user0002@$USER_DOMAIN:pw0002"
	timeout 20 curl -sS --cacert "$CA_CERT" "imaps://127.0.0.1:$IMAPS_PORT/INBOX" -u "$auth" \
		-X 'UID SEARCH ALL' | grep -q '^\* SEARCH' || return 1
	timeout 20 curl -sS --ssl-reqd --cacert "$CA_CERT" "imap://127.0.0.1:$IMAP_PORT/INBOX" -u "$auth" \
		-X 'UID SEARCH ALL' | grep -q '^\* SEARCH'
}

# Dovecot holds IMAP_MAX_CLIENTS sessions: its settings as doveconf reads them.
imap_limits() {
	local conf=$1 out
	out=$({ doveconf -c "$conf" -h service/imap/process_limit service/imap-login/client_limit \
		service/imap-login/service_count && doveconf -c "$conf" -f protocol=imap -h mail_max_userip_connections; } 2>&1) || {
		echo "$out"
		return 1
	}
	[[ $(tr '\n' ' ' <<<"$out") == "$IMAP_MAX_CLIENTS $IMAP_MAX_CLIENTS 0 $IMAP_MAX_CLIENTS " ]] || {
		echo "doveconf said: $out (IMAP_MAX_CLIENTS=$IMAP_MAX_CLIENTS)"
		return 1
	}
}

files_ok() {
	local dir=$1 backend=$2 n
	[[ -r $dir/testbed.env && -r $dir/users && -r $dir/mailsoak.conf ]] || return 1
	n=$(wc -l <"$dir/users")
	[[ $n -eq 5 ]] || {
		echo "users has $n lines"
		return 1
	}
	grep -qx "user0004@test.local pw0004" "$dir/users" || return 1
	grep -qx "target = 127.0.0.1:$SMTP_PORT" "$dir/mailsoak.conf" || return 1
	grep -qx "target = 127.0.0.1:$POP3_PORT" "$dir/mailsoak.conf" || return 1
	grep -qx "target = 127.0.0.1:$IMAP_PORT" "$dir/mailsoak.conf" || return 1
	grep -qx "store_format = $backend" "$dir/mailsoak.conf" || return 1
	grep -qx "spool_dir = $dir/spool/postfix" "$dir/mailsoak.conf" || return 1
	[[ $(grep -c '^pidfile = ' "$dir/mailsoak.conf") -eq 2 ]] || return 1
	local v
	for v in SMTP_PORT SUBMISSION_PORT SMTPS_PORT POP3_PORT POP3S_PORT LMTP_PORT IMAP_PORT IMAPS_PORT \
		IMAP_MAX_CLIENTS; do
		[[ ${!v} =~ ^[0-9]+$ ]] || {
			echo "$v='${!v}'"
			return 1
		}
	done
}

# The masters and all their workers, for checking that `down` leaves none behind.
instance_pids() {
	local dir=$1 pid f
	local -A kids=()
	local p ppid queue=()
	for f in "$dir/spool/postfix/pid/master.pid" "$dir/run/dovecot/master.pid"; do
		[[ -r $f ]] && read -r pid <"$f" && queue+=("${pid//[[:space:]]/}")
	done
	while read -r p ppid; do kids[$ppid]+="$p "; done < <(ps -e -o pid=,ppid=)
	while ((${#queue[@]})); do
		p=${queue[0]}
		queue=("${queue[@]:1}")
		echo "$p"
		for pid in ${kids[$p]:-}; do queue+=("$pid"); done
	done
}

none_alive() {
	local p st left=()
	for p in "$@"; do
		read -r st 2>/dev/null <"/proc/$p/stat" || continue
		st=${st##*) }
		[[ ${st:0:1} == Z ]] || left+=("$p")
	done
	((${#left[@]} == 0)) || {
		echo "still alive: ${left[*]}"
		ps -o pid,user,args -p "${left[@]}" || true
		return 1
	}
}

not_listening() {
	local p
	for p in "$@"; do
		[[ -z $p ]] && continue
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "port $p still accepts connections"
			return 1
		fi
	done
}

tls_submission() {
	timeout 20 swaks --server "127.0.0.1:$SUBMISSION_PORT" --tls --tls-verify --tls-ca-path "$CA_CERT" \
		--auth PLAIN --auth-user "user0001@$USER_DOMAIN" --auth-password pw0001 \
		--from "user0001@$USER_DOMAIN" --to "user0002@$USER_DOMAIN" >/dev/null
}

# Verification really is on: without our CA the same session must fail.
tls_verify_rejects_unknown_ca() {
	! timeout 20 swaks --server "127.0.0.1:$SUBMISSION_PORT" --tls --tls-verify \
		--auth PLAIN --auth-user "user0001@$USER_DOMAIN" --auth-password pw0001 \
		--from "user0001@$USER_DOMAIN" --to "user0002@$USER_DOMAIN" >/dev/null 2>&1
}

submission_needs_auth() {
	! timeout 20 swaks --server "127.0.0.1:$SUBMISSION_PORT" --tls --tls-ca-path "$CA_CERT" \
		--from "x@example.com" --to "user0002@$USER_DOMAIN" >/dev/null 2>&1
}

smtps_cram_md5() {
	timeout 20 swaks --server "127.0.0.1:$SMTPS_PORT" --tlsc --tls-verify --tls-ca-path "$CA_CERT" \
		--auth CRAM-MD5 --auth-user "user0001@$USER_DOMAIN" --auth-password pw0001 \
		--from "user0001@$USER_DOMAIN" --to "user0002@$USER_DOMAIN" >/dev/null
}

smtp_ipv6() {
	timeout 20 swaks --server "[::1]:$SMTP6_PORT" --from "tester@example.com" \
		--to "user0002@$USER_DOMAIN" >/dev/null
}

relay_denied() {
	local out
	out=$(timeout 20 swaks --server "127.0.0.1:$SMTP_PORT" --to "someone@example.com" 2>&1 || true)
	grep -q 'Relay access denied' <<<"$out" || {
		echo "$out" | tail -n 5
		return 1
	}
}

# user0002 has the submission, smtps and IPv6 messages by now.
pop3s_list() {
	local out
	out=$(timeout 20 curl -sS --cacert "$CA_CERT" "pop3s://127.0.0.1:$POP3S_PORT/" \
		-u "user0002@$USER_DOMAIN:pw0002")
	[[ $(grep -c . <<<"$out") -eq 3 ]] || {
		echo "LIST said: $out"
		return 1
	}
}

pop3_stls() {
	timeout 20 curl -sS --ssl-reqd --cacert "$CA_CERT" "pop3://127.0.0.1:$POP3_PORT/" \
		-u "user0002@$USER_DOMAIN:pw0002" >/dev/null
}

pop3_ipv6_apop() {
	timeout 20 curl -sS --login-options 'AUTH=+APOP' "pop3://[::1]:$POP36_PORT/" \
		-u "user0002@$USER_DOMAIN:pw0002" >/dev/null
}

lmtp_tcp() {
	timeout 20 swaks --protocol LMTP --server "127.0.0.1:$LMTP_PORT" --from "tester@example.com" \
		--to "user0003@$USER_DOMAIN" >/dev/null
}

status_down() {
	! timeout 20 "$TESTBED" status --dir "$1"
}

on_both() {
	timeout 60 "$TESTBED" "$1" --dir "$2" && timeout 60 "$TESTBED" "$1" --dir "$3"
}

ports_of() {
	(
		# shellcheck disable=SC1091
		source "$1/testbed.env"
		printf '%s\n' "$SMTP_PORT" "$SUBMISSION_PORT" "$SMTPS_PORT" "$POP3_PORT" "$POP3S_PORT" \
			"$SMTP6_PORT" "$POP36_PORT" "$LMTP_PORT" "$IMAP_PORT" "$IMAPS_PORT"
	) | grep .
}

distinct_ports() {
	local dup
	dup=$({ ports_of "$1" && ports_of "$2"; } | sort | uniq -d)
	[[ -z $dup ]] || {
		echo "ports used by both: $dup"
		return 1
	}
}

# ---------------------------------------------------------------------------------------------

run_backend() {
	local backend=$1
	local dir=$WORK/$backend t0 pids=()
	DIRS+=("$dir")
	echo "# --- $backend"
	t0=$SECONDS
	if ! timeout 60 "$TESTBED" up "$backend" 5 --dir "$dir" >/dev/null; then
		not_ok "$backend: up"
		show_logs "$dir"
		return 0
	fi
	ok "$backend: up ($((SECONDS - t0))s)"
	# shellcheck disable=SC1091
	source "$dir/testbed.env"
	check "$backend: status says both up" timeout 20 "$TESTBED" status --dir "$dir"
	check "$backend: testbed.env, users and mailsoak.conf" files_ok "$dir" "$backend"
	check "$backend: empty at start" count_is "$dir" 0 0
	check "$backend: 3 messages accepted over SMTP" send_plain
	check "$backend: flush empties the queue" timeout 60 "$TESTBED" flush --dir "$dir" --timeout 45
	check "$backend: count says queue 0 store 3" count_is "$dir" 0 3
	check "$backend: POP3 RETR and DELE of message 1" pop3_retr_and_dele
	check "$backend: count says store 2 after DELE" count_is "$dir" 0 2
	check "$backend: IMAP UID SEARCH, UID FETCH, UID STORE + UID EXPUNGE" imap_search_fetch_expunge
	check "$backend: count says store 1 after UID EXPUNGE" count_is "$dir" 0 1

	if [[ $backend == "${BACKENDS[0]}" ]]; then
		check "$backend: relaying off this machine is denied" relay_denied
		check "$backend: submission STARTTLS + AUTH PLAIN, certificate verified" tls_submission
		check "$backend: certificate verification fails without the testbed CA" \
			tls_verify_rejects_unknown_ca
		check "$backend: submission refuses unauthenticated mail" submission_needs_auth
		check "$backend: smtps (implicit TLS) + AUTH CRAM-MD5" smtps_cram_md5
		if [[ -n $SMTP6_PORT ]]; then
			check "$backend: SMTP over [::1]" smtp_ipv6
		else
			ok "$backend: SMTP over [::1] # SKIP no IPv6 loopback"
		fi
		check "$backend: LMTP over TCP" lmtp_tcp
		check "$backend: flush after TLS mail" timeout 60 "$TESTBED" flush --dir "$dir" --timeout 45
		local want=4
		[[ -n $SMTP6_PORT ]] && want=5
		check "$backend: count says store $want" count_is "$dir" 0 "$want"
		if [[ -n $SMTP6_PORT ]]; then
			check "$backend: pop3s LIST with --cacert" pop3s_list
		fi
		check "$backend: POP3 STLS with --cacert" pop3_stls
		check "$backend: IMAPS and IMAP STARTTLS with --cacert" imap_tls
		check "$backend: Dovecot's IMAP limits for many idle clients" imap_limits "$dir/etc/dovecot/dovecot.conf"
		if [[ -n $POP36_PORT ]]; then
			check "$backend: POP3 over [::1] with APOP" pop3_ipv6_apop
		fi
	fi

	mapfile -t pids < <(instance_pids "$dir")
	t0=$SECONDS
	check "$backend: down" timeout 60 "$TESTBED" down --dir "$dir"
	echo "# $backend: down took $((SECONDS - t0))s, ${#pids[@]} server processes before"
	check "$backend: no server process left" none_alive "${pids[@]}"
	check "$backend: no port left open" not_listening "$SMTP_PORT" "$SUBMISSION_PORT" "$SMTPS_PORT" \
		"$POP3_PORT" "$POP3S_PORT" "$LMTP_PORT" "$IMAP_PORT" "$IMAPS_PORT"
	check "$backend: status exits non-zero when down" status_down "$dir"
	check "$backend: down again is a no-op" timeout 30 "$TESTBED" down --dir "$dir"
	((failures == 0)) || show_logs "$dir"
}

# Two testbeds started at the same moment must both come up, on different ports.
run_parallel() {
	local a=$WORK/par-a b=$WORK/par-b ra=0 rb=0
	DIRS+=("$a" "$b")
	echo "# --- two testbeds at once"
	timeout 60 "$TESTBED" up maildir 3 --dir "$a" >/dev/null 2>"$WORK/par-a.err" &
	local pa=$!
	timeout 60 "$TESTBED" up mdbox 3 --dir "$b" >/dev/null 2>"$WORK/par-b.err" &
	local pb=$!
	wait "$pa" || ra=$?
	wait "$pb" || rb=$?
	if ((ra == 0 && rb == 0)); then
		ok "parallel: both up"
	else
		not_ok "parallel: both up (exit $ra and $rb)"
		sed 's/^/#   /' "$WORK/par-a.err" "$WORK/par-b.err"
	fi
	check "parallel: both report up" on_both status "$a" "$b"
	check "parallel: no port shared" distinct_ports "$a" "$b"
	check "parallel: down both" on_both down "$a" "$b"
}

start=$SECONDS
for backend in "${BACKENDS[@]}"; do
	run_backend "$backend"
done
run_parallel
echo "# $checks checks, $failures failed, $((SECONDS - start))s"
((failures == 0)) || exit 1
exit 0
