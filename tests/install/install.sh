#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Install test (PKG-1, STORE-2, decision-021): configure the source tree with a
# --prefix in a scratch directory, `make install`, and use the installed program as an
# administrator would, from another working directory: --version, --help naming the
# installed configuration file and database, the manual pages (every configuration key
# in tiny-harness.conf(5)), the example configuration and every web-server recipe where
# the autoconf directories say, the installed configuration file read, `migrate`
# creating the database under localstatedir, and `serve` running lighttpd from the
# installed recipe. A build of its own (-O0, about a minute). TAP output; 77 (skip)
# when configure has not been generated, or lighttpd, curl or jq is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_SRCDIR/configure" ] || skip "no configure in $TH_SRCDIR (autoreconf -fi first)"
# It builds its own program, so the sanitizer build's run of the suite adds nothing.
if [ -x "${TH_BUILDDIR:-}/config.status" ] &&
	"$TH_BUILDDIR/config.status" --config 2>/dev/null | grep -q enable-sanitizers; then
	skip "run once, in the plain build (this one is --enable-sanitizers)"
fi
require_tools curl jq make
LIGHTTPD=${LIGHTTPD:-$(command -v lighttpd 2>/dev/null || echo /usr/sbin/lighttpd)}
[ -x "$LIGHTTPD" ] || skip "lighttpd is not installed"

scratch th-install
P=$T/prefix
tap_details() {
	echo "#   step: $REQ_DESC"
	awk 'NR <= 20 { print "#   out: " $0 }' "$T/out" 2>/dev/null
}

REQ_DESC="configure --prefix=$P && make install (in $T/build)"
mkdir -p "$T/build"
(cd "$T/build" && "$TH_SRCDIR/configure" -q --prefix="$P" CFLAGS="-O0" >"$T/out" 2>&1 &&
	make -s -j2 install >>"$T/out" 2>&1)
rc=$?
check "PKG-1 make install into a fresh prefix succeeds" '[ "$rc" = 0 ]' '[ -x "$P/bin/tiny-harness" ]'
[ "$rc" = 0 ] || bail "make install failed"
BIN=$P/bin/tiny-harness

# Everything below runs from a directory that has no conf/ and no var/.
mkdir -p "$T/elsewhere"
cd "$T/elsewhere" || bail "no $T/elsewhere"
run_bin() { env -i PATH="$PATH" "$BIN" "$@" >"$T/out" 2>&1; }

run_bin --version
rc=$?
REQ_DESC="$BIN --version"
check "PKG-1 the installed program has --version" '[ "$rc" = 0 ]' 'grep -q "^tiny-harness [0-9]" "$T/out"'

run_bin --help
REQ_DESC="$BIN --help"
check "PKG-1 --help names the installed configuration file and database" \
	'grep -qF "Configuration file: $P/etc/tiny-harness/tiny-harness.conf (installed layout)" "$T/out"' \
	'grep -qF "  db = $P/var/lib/tiny-harness/tiny-harness.db" "$T/out"' \
	'grep -qF "  commands_dir = $P/etc/tiny-harness/commands" "$T/out"' \
	'grep -qF "  web_dir = $P/share/tiny-harness/web" "$T/out"'
keys=$(sed -n 's/^  \([a-z_][a-z0-9_]*\) = .*/\1/p' "$T/out")
man5=$P/share/man/man5/tiny-harness.conf.5
missing=
for k in $keys; do
	grep -qx ".B $(printf '%s' "$k" | sed 's/-/\\\\-/g')" "$man5" 2>/dev/null || missing="$missing $k"
done
REQ_DESC="keys of --help not in $man5:$missing"
check "PKG-1 man pages installed: tiny-harness(1), and tiny-harness.conf(5) names all $(echo $keys | wc -w) keys" \
	'[ -s "$P/share/man/man1/tiny-harness.1" ]' '[ -s "$man5" ]' '[ -n "$keys" ]' '[ -z "$missing" ]'

REQ_DESC="ls $P/etc/tiny-harness $P/share/tiny-harness $P/var/lib"
check "PKG-1 the example configuration, every recipe and the licence are installed" \
	'[ -f "$P/etc/tiny-harness/tiny-harness.conf" ]' \
	'[ -f "$P/share/tiny-harness/lighttpd.conf" ]' '[ -f "$P/share/tiny-harness/apache-fcgid.conf" ]' \
	'[ -f "$P/share/tiny-harness/apache-proxy-fcgi.conf" ]' '[ -f "$P/share/tiny-harness/nginx.conf" ]' \
	'[ -f "$P/share/tiny-harness/htaccess.example" ]' '[ -f "$P/share/doc/tiny-harness/LICENSE" ]' \
	'[ -d "$P/var/lib/tiny-harness" ]'

run_bin migrate
REQ_DESC="$BIN migrate (from $T/elsewhere)"
check "PKG-1 migrate creates the database under localstatedir, nothing in the working directory" \
	'[ -f "$P/var/lib/tiny-harness/tiny-harness.db" ]' '[ ! -e "$T/elsewhere/var" ]'

printf 'base_url = http://installed.example.test:9/agent/\n' >>"$P/etc/tiny-harness/tiny-harness.conf"
run_bin card
REQ_DESC="$BIN card with base_url added to $P/etc/tiny-harness/tiny-harness.conf"
check "PKG-1 the installed program reads the installed configuration file" \
	'jq -e ".supportedInterfaces[0].url | startswith(\"http://installed.example.test:9/agent\")" "$T/out" >/dev/null'
sed -i '/installed.example.test/d' "$P/etc/tiny-harness/tiny-harness.conf"

# serve from the installed layout: lighttpd with the installed recipe.
port=$(random_port)
env -i PATH="$PATH:/usr/sbin" "$BIN" serve --port "$port" --procs 1 >"$T/serve.out" 2>&1 &
serve_pid=$!
on_exit 'p=$(cat "$T/elsewhere/var/serve-$port/lighttpd.pid" 2>/dev/null); [ -n "$p" ] && term_wait lighttpd "$p"; term_wait serve "$serve_pid"'
wait_card "$serve_pid" "http://127.0.0.1:$port/"
code=$(curl -s -o "$T/out" -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/.well-known/agent-card.json")
REQ_DESC="$BIN serve --port $port (from $T/elsewhere); $(head -c 300 "$T/serve.out")"
check "PKG-1 serve runs lighttpd from the installed recipe and serves the card" \
	'[ "$code" = 200 ]' 'jq -e .name "$T/out" >/dev/null'

# The web app (WEB-1): installed in $(pkgdatadir)/web, the installed default of web_dir.
code=$(curl -s -o "$T/ui.html" -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/ui/")
REQ_DESC="GET http://127.0.0.1:$port/ui/ gave $code; ls $P/share/tiny-harness/web"
check "WEB-1 PKG-1 the web app is installed in \$(pkgdatadir)/web and the installed program serves it at /ui/" \
	'[ -f "$P/share/tiny-harness/web/app.js" ]' '[ -f "$P/share/tiny-harness/web/style.css" ]' \
	'[ "$code" = 200 ]' 'cmp -s "$T/ui.html" "$P/share/tiny-harness/web/index.html"'

tap_done
