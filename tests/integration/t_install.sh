#!/usr/bin/env bash
# make install and make uninstall into a DESTDIR: the binaries, the man pages (man
# finds them), the completion and the examples land where Debian puts them under
# PREFIX, and uninstall removes all of it, leaving only directories that are not
# mailsoak's. The programs of this build are used as they are: the build directory
# make is given holds links to them, and -o keeps make from rebuilding them (nor
# does it touch this build's own settings stamp).
source "$(dirname "$0")/lib.sh"

command -v man >/dev/null || { echo "skip: man is not installed (scripts/deps)" >&2; exit 77; }
cd "$TOP" || exit 1
b=$WORK/build
mkdir -p "$b"
ln -s "$MAILSOAK" "$b/mailsoak"
ln -s "$MAILSOAK_SERVER" "$b/mailsoak-server"
root=$WORK/root
mk() { make -s --no-print-directory BUILD="$b" -o "$b/mailsoak" -o "$b/mailsoak-server" DESTDIR="$root" PREFIX=/usr "$@"; }

mk install >"$WORK/install.log" 2>&1
check "make install exits 0" eq "$?" 0
for f in usr/bin/mailsoak usr/bin/mailsoak-server \
         usr/share/man/man1/mailsoak.1 usr/share/man/man5/mailsoak.conf.5 usr/share/man/man8/mailsoak-server.8 \
         usr/share/bash-completion/completions/mailsoak usr/share/bash-completion/completions/mailsoak-server \
         usr/share/doc/mailsoak/examples/mailsoak.conf usr/share/doc/mailsoak/examples/james-393.conf \
         usr/share/doc/mailsoak-server/examples/server-faults.conf usr/share/mailsoak/scripts/testbed \
         usr/share/mailsoak/scripts/testbed-files; do
    check "installed $f" test -s "$root/$f"
done
check "the binary runs" eq "$("$root/usr/bin/mailsoak" --help >/dev/null; echo $?)" 0
check "the binary is executable by all" eq "$(stat -c %a "$root/usr/bin/mailsoak")" 755
check "a page is not executable" eq "$(stat -c %a "$root/usr/share/man/man1/mailsoak.1")" 644
check "the page names the installed examples" grep -q '^\.I /usr/share/doc/mailsoak/examples/mailsoak.conf' \
    "$root/usr/share/man/man1/mailsoak.1"
check "man -w finds mailsoak(1)" eq "$(MANPATH=$root/usr/share/man man -w mailsoak)" \
    "$root/usr/share/man/man1/mailsoak.1"
check "man -w finds mailsoak.conf(5)" eq "$(MANPATH=$root/usr/share/man man -w 5 mailsoak.conf)" \
    "$root/usr/share/man/man5/mailsoak.conf.5"
check "man renders mailsoak(1)" grep -q OUTCOMES <(MANPATH=$root/usr/share/man MANWIDTH=80 man mailsoak 2>&1)

find "$root" -type f | sort >"$WORK/files.txt"
check "install put files" gt "$(wc -l <"$WORK/files.txt")" 10

mk uninstall >"$WORK/uninstall.log" 2>&1
check "make uninstall exits 0" eq "$?" 0
check "no file is left" eq "$(find "$root" ! -type d | wc -l)" 0
check "no directory of mailsoak is left" eq "$(find "$root" -name '*mailsoak*' | wc -l)" 0
mk uninstall >"$WORK/uninstall.log" 2>&1
check "uninstalling again is harmless" eq "$?" 0
finish
