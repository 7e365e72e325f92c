#!/usr/bin/env bash
# The Debian packages: built from this tree with dpkg-buildpackage (scripts/build-deb,
# two jobs, the unit tests left to make check), lintian-clean of errors (build-deb's
# own lintian run, its report kept), installed with dpkg -i on this machine, the
# installed mailsoak runs its demo against the installed reference server, man finds
# the pages, and a purge leaves nothing of the packages behind: every path they
# shipped is gone unless it was there before, and dpkg has nothing left to do.
source "$(dirname "$0")/lib.sh"

if [[ $(id -u) -ne 0 ]]; then
    echo "skip: installs packages with dpkg, needs root" >&2
    exit 77
fi
for tool in dpkg-buildpackage dh lintian man; do
    command -v $tool >/dev/null || { echo "skip: $tool is not installed (scripts/deps)" >&2; exit 77; }
done
# Two runs of this test (two engineers) must not install and purge under each other.
# The lock is dpkg's database directory, which every machine here has: a lock file of
# our own would stay behind (deleting it would let two runs lock two files). flock(2)
# and dpkg's own fcntl locks do not meet on Linux.
exec 9</var/lib/dpkg
flock -w 600 9 || { echo "FAIL: another t_package.sh held the lock for 10 minutes" >&2; exit 1; }
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
for p in mailsoak mailsoak-server; do
    if installed $p; then
        echo "skip: the package $p is installed on this machine already; this test would remove it" >&2
        exit 77
    fi
done
ours=0
# The man-db trigger (its whatis index: 13 s a run at a load of 20) is left pending
# by the install and the purge, and run once at the end, so the machine ends as it began.
triggers() { dpkg --triggers-only -a >>"$WORK/purge.log" 2>&1; }
purge() {
    if ((ours)); then
        dpkg --no-triggers --purge mailsoak mailsoak-server >>"$WORK/purge.log" 2>&1
        ours=0
        triggers
    fi
}
trap 'purge; cleanup' EXIT

audit_before=$(dpkg --audit 2>&1)
start=$SECONDS
mkdir "$WORK/tmp"
DEB_BUILD_OPTIONS=nocheck TMPDIR=$WORK/tmp "$TOP/scripts/build-deb" "$WORK/deb" >"$WORK/build.log" 2>&1
rc=$?
check "build-deb leaves nothing in TMPDIR" eq "$(find "$WORK/tmp" -mindepth 1 | wc -l)" 0 ||
    find "$WORK/tmp" -mindepth 1 -maxdepth 1
check "dpkg-buildpackage builds the packages" test -s "$WORK/deb/lintian.txt" -o "$rc" -eq 0
if [[ ! -e $WORK/deb/lintian.txt ]]; then
    tail -n 30 "$WORK/build.log"
    finish
fi
echo "built in $((SECONDS - start)) s"
debs=("$WORK"/deb/mailsoak_*.deb "$WORK"/deb/mailsoak-server_*.deb)
check "two packages" eq "${#debs[@]}" 2
check "lintian: no errors (build-deb exits 0)" eq "$rc" 0
check "lintian: no error tag" eq "$(grep -c '^E:' "$WORK/deb/lintian.txt")" 0 || grep '^E:' "$WORK/deb/lintian.txt"
check "mailsoak's dependencies were computed" grep -q 'libjansson' \
    <(dpkg-deb -f "$WORK"/deb/mailsoak_*.deb Depends)
check "the server's dependencies were computed" grep -q 'libsqlite3' \
    <(dpkg-deb -f "$WORK"/deb/mailsoak-server_*.deb Depends)

# Every path the packages ship, and whether it existed before the install.
for d in "${debs[@]}"; do
    dpkg-deb -c "$d" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||' | grep -v '^/\?$'
done | sort -u >"$WORK/paths.txt"
check "the packages ship the pages" grep -qx /usr/share/man/man1/mailsoak.1.gz "$WORK/paths.txt"
while read -r p; do
    [[ -e $p ]] && echo "$p"
done <"$WORK/paths.txt" >"$WORK/before.txt"

ours=1
# A slim image's dpkg may exclude /usr/share/man (path-exclude in dpkg.cfg.d): what is
# tested is that the packages ship the pages, so they are let in here.
dpkg --no-triggers --path-include='/usr/share/man/*' -i "${debs[@]}" >"$WORK/install.log" 2>&1
check "dpkg -i installs them" eq "$?" 0
check "mailsoak is installed" installed mailsoak
check "mailsoak-server is installed" installed mailsoak-server

TMPDIR=$WORK /usr/bin/mailsoak run --duration 3s --drain 2s --json "$WORK/demo.json" >"$WORK/demo.txt" 2>&1
check "the installed mailsoak runs the demo" eq "$?" 0
check "the demo delivered mail" gt "$(jget "$WORK/demo.json" .summary.delivered)" 0
check "the demo lost nothing" eq "$(jget "$WORK/demo.json" .summary.lost)" 0
check "man -w finds mailsoak(1)" eq "$(man -w mailsoak)" /usr/share/man/man1/mailsoak.1.gz
check "man -w finds mailsoak.conf(5)" eq "$(man -w 5 mailsoak.conf)" /usr/share/man/man5/mailsoak.conf.5.gz
check "man -w finds mailsoak-server(8)" eq "$(man -w 8 mailsoak-server)" /usr/share/man/man8/mailsoak-server.8.gz
check "man renders mailsoak(1)" grep -q OUTCOMES <(MANWIDTH=80 man mailsoak 2>/dev/null)
check "the completion is where bash-completion looks" test -s /usr/share/bash-completion/completions/mailsoak

dpkg --no-triggers --purge mailsoak mailsoak-server >"$WORK/purge.log" 2>&1
check "dpkg --purge removes them" eq "$?" 0
ours=0
check "the pending triggers run" triggers
check "dpkg has no more left to do than before (--audit)" eq "$(dpkg --audit 2>&1)" "$audit_before"
check "mailsoak is gone from dpkg's database" eq "$(dpkg-query -W -f='${Status}' mailsoak 2>/dev/null | grep -c installed)" 0
while read -r p; do
    [[ -e $p ]] && echo "$p"
done <"$WORK/paths.txt" >"$WORK/after.txt"
check "the purge left nothing the packages brought" diff "$WORK/before.txt" "$WORK/after.txt"
check "no mailsoak file in dpkg's info" eq "$(find /var/lib/dpkg/info -name 'mailsoak*' | wc -l)" 0
echo "took $((SECONDS - start)) s in all"
finish
