#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2016 # check's conditions are eval'd later, quoted on purpose
# Debian package test (PKG-2, decision-024, docs/packaging.md): copy the source tree
# (what git tracks plus new untracked files) to a scratch directory, build it with
# `dpkg-buildpackage -us -uc -b`, lint the result with lintian (any E: fails), install
# the .deb with dpkg on this machine, and use the installed package as an administrator
# would: the state directory owned by www-data, --version, the manual pages, the example
# configuration and the lighttpd and Apache recipes where docs/packaging.md says, and
# `tiny-harness serve` run as www-data from the installed files serving the agent card,
# refusing a request without credentials (SEC-1: the package turns bearer on and makes
# the first API key), and a message sent with that key stored in /var/lib/tiny-harness. Then it stops what it started and
# purges the package, leaving the machine as it found it.
#
# Root only (it installs a package: CI's throwaway machine). TAP output; 77 (skip) when
# not root, in the sanitizer build, when dpkg-buildpackage, debhelper, lintian,
# lighttpd, curl or jq is missing, or when tiny-harness is already on this machine
# (installed, or /usr/bin/tiny-harness or /var/lib/tiny-harness present), since the
# purge at the end would take it away. TH_KEEP=1 keeps the scratch directory.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ "$(id -u)" = 0 ] || skip "not root (installs a package; runs as root in CI)"
# It builds its own package, so the sanitizer build's run of the suite adds nothing.
if [ -x "${TH_BUILDDIR:-}/config.status" ] &&
	"$TH_BUILDDIR/config.status" --config 2>/dev/null | grep -q enable-sanitizers; then
	skip "run once, in the plain build (this one is --enable-sanitizers)"
fi
[ -f "$TH_SRCDIR/debian/control" ] || skip "no debian/ in $TH_SRCDIR"
require_tools dpkg-buildpackage dpkg-deb dh lintian curl jq setpriv
LIGHTTPD=${LIGHTTPD:-$(command -v lighttpd 2>/dev/null || echo /usr/sbin/lighttpd)}
[ -x "$LIGHTTPD" ] || skip "lighttpd is not installed"
# dpkg knows the package in any state but not-installed (installed, config-files, …).
pkg_present() {
	local st
	st=$(dpkg-query -W -f='${Status}' tiny-harness 2>/dev/null) || return 1
	[ -n "$st" ] && [ "${st##* }" != not-installed ]
}
if pkg_present; then
	skip "dpkg already has a tiny-harness package here (the test would purge it)"
fi
[ ! -e /usr/bin/tiny-harness ] || skip "/usr/bin/tiny-harness exists (not from this test)"
[ ! -e /var/lib/tiny-harness ] || skip "/var/lib/tiny-harness exists (purge would remove it)"

scratch th-deb
# www-data runs the server below from a directory in here.
chmod 755 "$T"
tap_details() {
	echo "#   step: ${REQ_DESC:-}"
	awk -v n="${TAP_OUT_LINES:-25}" '{ l[NR] = $0 } END { s = NR - n + 1; if (s < 1) s = 1;
		for (i = s; i <= NR; i++) print "#   out: " l[i] }' "$T/out" 2>/dev/null
}

# The source tree as git knows it, plus new files not ignored (a change in progress),
# without build directories and npm modules.
REQ_DESC="copy $TH_SRCDIR to $T/src"
mkdir -p "$T/src"
if [ -d "$TH_SRCDIR/.git" ] || [ -f "$TH_SRCDIR/.git" ]; then
	(cd "$TH_SRCDIR" && { git ls-files && git ls-files --others --exclude-standard; } |
		sort -u | while IFS= read -r f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar -cf - --null -T - | tar -xf - -C "$T/src") >"$T/out" 2>&1
else
	(cd "$TH_SRCDIR" && tar -cf - --exclude='./build*' --exclude=node_modules \
		--exclude=./.git --exclude=./debian/tiny-harness --exclude=./debian/.debhelper \
		--exclude=./autom4te.cache --exclude=./var --exclude=./config.status \
		--exclude=./config.log --exclude=./libtool --exclude=./Makefile . |
		tar -xf - -C "$T/src") >"$T/out" 2>&1
fi
if [ ! -f "$T/src/debian/rules" ] || [ ! -f "$T/src/configure.ac" ]; then
	bail "copying the source tree failed"
fi

# The package build: dh_autoreconf, configure for /usr, make, make install, dh_*.
REQ_DESC="DEB_BUILD_OPTIONS='nocheck parallel=2' dpkg-buildpackage -us -uc -b (in $T/src)"
(cd "$T/src" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) >"$T/out" 2>&1
rc=$?
deb=
changes=
for f in "$T"/tiny-harness_*.deb; do [ -f "$f" ] && deb=$f && break; done
for f in "$T"/tiny-harness_*.changes; do [ -f "$f" ] && changes=$f && break; done
check "PKG-2 dpkg-buildpackage built a .deb" '[ "$rc" = 0 ]' '[ -n "$deb" ]' '[ -n "$changes" ]'
[ -n "$deb" ] || bail "no package built"
cp "$T/out" "$T/build.log"

dpkg-deb -c "$deb" >"$T/out" 2>&1
REQ_DESC="dpkg-deb -c $deb"
check "PKG-2 the .deb holds the program, the manual pages, the example configuration and the lighttpd and Apache recipes" \
	'grep -q " \./usr/bin/tiny-harness$" "$T/out"' \
	'grep -q " \./usr/share/man/man1/tiny-harness\.1\.gz$" "$T/out"' \
	'grep -q " \./usr/share/man/man5/tiny-harness\.conf\.5\.gz$" "$T/out"' \
	'grep -q " \./etc/tiny-harness/tiny-harness\.conf$" "$T/out"' \
	'grep -q " \./usr/share/tiny-harness/lighttpd\.conf$" "$T/out"' \
	'grep -q " \./usr/share/tiny-harness/apache-fcgid\.conf$" "$T/out"' \
	'grep -q " \./usr/share/tiny-harness/apache-proxy-fcgi\.conf$" "$T/out"' \
	'grep -q " \./usr/share/doc/tiny-harness/copyright$" "$T/out"' \
	'! grep -q " \./var/" "$T/out"'

# lintian on the .changes (the .deb and the .buildinfo); every line as a TAP comment.
lintian --info "$changes" >"$T/lintian.out" 2>&1
lrc=$?
grep -v '^running with root privileges' "$T/lintian.out" | sed 's/^/# lintian: /'
cp "$T/lintian.out" "$T/out"
REQ_DESC="lintian --info $changes (exit $lrc)"
check "PKG-2 lintian reports no errors" '! grep -q "^E: " "$T/lintian.out"' '[ "$lrc" = 0 ]'

# Install on this machine; from here on, whatever happens, the package is purged at exit.
serve_pid=
run=$T/run
stop_serve() {
	local p
	p=$(cat "$run/var/serve-${port:-0}/lighttpd.pid" 2>/dev/null) # decision-043
	[ -n "$p" ] && term_wait lighttpd "$p"
	[ -n "$serve_pid" ] && term_wait serve "$serve_pid"
	serve_pid=
}
purge_pkg() {
	pkg_present || return 0
	DEBIAN_FRONTEND=noninteractive dpkg --purge tiny-harness >"$T/purge.out" 2>&1
}
on_exit 'stop_serve; purge_pkg'
DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" >"$T/out" 2>&1
rc=$?
REQ_DESC="dpkg -i $deb"
check "PKG-2 the .deb installs cleanly (dpkg -i)" '[ "$rc" = 0 ]' \
	'dpkg-query -W -f="\${Status}" tiny-harness | grep -qx "install ok installed"'
[ "$rc" = 0 ] || bail "dpkg -i failed"

stat -c '%U:%G %a' /var/lib/tiny-harness >"$T/out" 2>&1
REQ_DESC="stat /var/lib/tiny-harness"
check "PKG-2 postinst created the state directory /var/lib/tiny-harness owned by www-data" \
	'[ -d /var/lib/tiny-harness ]' 'grep -qx "www-data:www-data 750" "$T/out"'

/usr/bin/tiny-harness --version >"$T/out" 2>&1
rc=$?
REQ_DESC="/usr/bin/tiny-harness --version"
check "PKG-2 the installed /usr/bin/tiny-harness has --version" '[ "$rc" = 0 ]' \
	'grep -q "^tiny-harness [0-9]" "$T/out"'
REQ_DESC="ldd /usr/bin/tiny-harness: $(ldd /usr/bin/tiny-harness 2>&1 | tr '\n' ' ')"
check "PKG-2 the package's program uses the distribution's shared libfcgi, json-c and SQLite (decision-094)" \
	'ldd /usr/bin/tiny-harness | grep -q libsqlite3' 'ldd /usr/bin/tiny-harness | grep -q libjson-c' \
	'ldd /usr/bin/tiny-harness | grep -q libfcgi' '[ -n "$(dpkg -s tiny-harness | grep "^Depends:.*libsqlite3")" ]'

(cd / && env -i PATH=/usr/bin:/bin /usr/bin/tiny-harness --help) >"$T/out" 2>&1
REQ_DESC="/usr/bin/tiny-harness --help (from /)"
check "PKG-2 the installed program reads /etc/tiny-harness and keeps its database in /var/lib/tiny-harness" \
	'grep -qF "Configuration file: /etc/tiny-harness/tiny-harness.conf (installed layout)" "$T/out"' \
	'grep -qF "  db = /var/lib/tiny-harness/tiny-harness.db" "$T/out"'

ls -l /usr/share/man/man1/tiny-harness.1.gz /usr/share/man/man5/tiny-harness.conf.5.gz >"$T/out" 2>&1
REQ_DESC="the manual pages"
check "PKG-2 the manual pages tiny-harness(1) and tiny-harness.conf(5) are installed" \
	'gzip -dc /usr/share/man/man1/tiny-harness.1.gz | grep -q "^\.TH"' \
	'gzip -dc /usr/share/man/man5/tiny-harness.conf.5.gz | grep -q "^\.TH"'

ls -l /etc/tiny-harness /usr/share/tiny-harness >"$T/out" 2>&1
REQ_DESC="ls /etc/tiny-harness /usr/share/tiny-harness; conffiles"
check "PKG-2 the example configuration (a conffile) and the lighttpd and Apache recipes are where docs/packaging.md says" \
	'grep -qx /etc/tiny-harness/tiny-harness.conf /var/lib/dpkg/info/tiny-harness.conffiles' \
	'[ -f /usr/share/tiny-harness/lighttpd.conf ]' '[ -f /usr/share/tiny-harness/apache-fcgid.conf ]' \
	'[ -f /usr/share/tiny-harness/apache-proxy-fcgi.conf ]' \
	'grep -qF "/usr/share/tiny-harness/lighttpd.conf" "$TH_SRCDIR/docs/packaging.md"' \
	'grep -qF "/usr/share/tiny-harness/apache-fcgid.conf" "$TH_SRCDIR/docs/packaging.md"'

# Serve from the installed files as www-data, the user the web server runs workers as:
# lighttpd from /usr/share/tiny-harness/lighttpd.conf, the database in the state
# directory (serve's own default is ./var/tiny-harness.db, its state ./var/serve-PORT;
# a deployment names the installed database).
mkdir -p "$run"
chown www-data:www-data "$run"
port=$(random_port)
(cd "$run" && exec setpriv --reuid=www-data --regid=www-data --init-groups \
	env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME="$run" \
	TINY_HARNESS_DB=/var/lib/tiny-harness/tiny-harness.db \
	/usr/bin/tiny-harness serve --port "$port" --procs 1) >"$T/serve.out" 2>&1 &
serve_pid=$!
wait_card "$serve_pid" "http://127.0.0.1:$port/"
code=$(curl -s -o "$T/out" -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/.well-known/agent-card.json")
REQ_DESC="/usr/bin/tiny-harness serve --port $port --procs 1 as www-data (in $run); $(head -c 300 "$T/serve.out")"
check "PKG-2 the installed program, run as www-data, serves the agent card through lighttpd" \
	'[ "$code" = 200 ]' 'jq -e .name "$T/out" >/dev/null' \
	'grep -qF "/usr/share/tiny-harness/lighttpd.conf" "$T/serve.out"'

# SEC-1 (decision-040): the package comes up authenticating. Its configuration says
# identity = bearer, postinst made the first API key (admin) in a root-only file, and a
# request without it is 401, whatever X-Participant-Id says.
key_file=/etc/tiny-harness/admin-api-key
REQ_DESC="stat $key_file; grep identity /etc/tiny-harness/tiny-harness.conf"
stat -c '%a %U:%G %s %n' "$key_file" >"$T/out" 2>&1
check "SEC-1 PKG-2 the package turns bearer on and postinst leaves the first API key in $key_file, 0600 root" \
	'grep -qx "identity = bearer" /etc/tiny-harness/tiny-harness.conf' \
	'[ "$(stat -c "%a %U" "$key_file")" = "600 root" ]' \
	'grep -Eqx "th_[A-Za-z0-9_-]{43}" "$key_file"'
send_hello() { # CURL-ARGS… — SendMessage; the body in $T/out, the status in code
	code=$(curl -s -o "$T/out" -D "$T/headers" -w '%{http_code}' --max-time 30 -H 'Content-Type: application/json' \
		-H 'A2A-Version: 1.0' "$@" \
		-d '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}' \
		"http://127.0.0.1:$port/")
}
send_hello -H 'X-Participant-Id: alice'
REQ_DESC="SendMessage with X-Participant-Id: alice and no key (HTTP $code)"
check "SEC-1 PKG-2 the installed server refuses a request without credentials (X-Participant-Id alone): 401 with a Bearer challenge, nothing stored" \
	'[ "$code" = 401 ]' 'tr -d "\r" <"$T/headers" | grep -qi "^WWW-Authenticate: Bearer"' \
	'[ "$(setpriv --reuid=www-data --regid=www-data --init-groups /usr/bin/tiny-harness tasks list 2>/dev/null | grep -c .)" = 0 ]'
send_hello -H "Authorization: Bearer $(cat "$key_file" 2>/dev/null)" -H 'X-Participant-Id: alice'
REQ_DESC="SendMessage with the first API key to http://127.0.0.1:$port/ (HTTP $code); $(stat -c '%U:%G %a %n' /var/lib/tiny-harness/* 2>&1 | tr '\n' ' ')"
check "PKG-2 SEC-1 with the first API key a message is stored in /var/lib/tiny-harness/tiny-harness.db (owned by www-data, 0600), sent by admin" \
	'[ "$code" = 200 ]' 'jq -e ".result.task.id | strings" "$T/out" >/dev/null' \
	'[ "$(jq -r ".result.task.history[0].metadata.participant_id" "$T/out")" = admin ]' \
	'[ "$(stat -c %U /var/lib/tiny-harness/tiny-harness.db)" = www-data ]' \
	'[ "$(stat -c %a /var/lib/tiny-harness/tiny-harness.db)" = 600 ]'

stop_serve
purge_pkg
rc=$?
cp "$T/purge.out" "$T/out" 2>/dev/null
REQ_DESC="dpkg --purge tiny-harness"
check "PKG-2 dpkg --purge removes the package and the state directory" '[ "$rc" = 0 ]' \
	'! pkg_present' \
	'[ ! -e /usr/bin/tiny-harness ]' '[ ! -e /var/lib/tiny-harness ]' '[ ! -e /etc/tiny-harness ]'

tap_done
