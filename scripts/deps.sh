#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# deps.sh — installs what tiny-harness needs to build, test and run on Debian 12, and
# nothing that is already there. Safe to run again; prints nothing when all is present.
#
#   scripts/deps.sh          Debian packages, then `npm ci` for the interop tests
#   TH_DEPS_NO_NPM=1 …       skip the npm step
#
# Needs root or sudo for apt-get. .ci/run installs the same list (TH_DEPS_PACKAGES below
# is the single list: `scripts/deps.sh --list` prints it).
set -eu

# Build: compiler, autotools, the four libraries and Check. Run: lighttpd (the
# development server and the lighttpd integration test), sqlite3 (operators and tests).
# Tests and benchmarks: curl, jq, wrk, valgrind, procps, openssl (test logins: htpasswd
# hashes, signed JWTs); Apache with mod_fcgid and
# spawn-fcgi for the Apache recipes; nginx-light for the nginx recipe. libcurl: the
# `complete` client, model and pushes; libssl-dev (libcrypto): push secrets encrypted
# at rest. Debian package (tests/package/deb.sh, PKG-2): debhelper (dh, dh_autoreconf),
# dpkg-dev (dpkg-buildpackage), lintian. systemd: systemd-analyze verifies the units in
# conf/systemd (tests/integration/systemd.sh); nothing here starts it.
# The PostgreSQL backend: libpq-dev to build against libpq, postgresql for the server
# programs of the tests' throwaway cluster (tests/lib/pg.sh; its own service is not used),
# pgbouncer for the transaction pooler in front of it (tests/lib/pgbouncer.sh,
# tests/integration/pgbouncer.sh; its own service is not used either).
TH_DEPS_PACKAGES="build-essential autoconf automake libtool pkg-config
libfcgi-dev libfcgi-bin libjson-c-dev libsqlite3-dev libcurl4-openssl-dev libssl-dev sqlite3 check
lighttpd curl wrk jq valgrind procps chromium clang-format openssl
apache2 libapache2-mod-fcgid spawn-fcgi nginx-light
debhelper dpkg-dev lintian systemd
postgresql libpq-dev pgbouncer"

if [ "${1:-}" = --list ]; then
	echo $TH_DEPS_PACKAGES
	exit 0
fi

root=$(cd "$(dirname "$0")/.." && pwd)

as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		echo "deps.sh: need root or sudo to run: $*" >&2
		return 1
	fi
}

want=$TH_DEPS_PACKAGES
# Node.js only when there is none: a newer one installed another way is kept.
command -v node >/dev/null 2>&1 || want="$want nodejs npm"
# python3 runs the card contract test (tests/contract/test_agent_card.py).
command -v python3 >/dev/null 2>&1 || want="$want python3"

missing=
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done

if [ -n "$missing" ]; then
	echo "deps.sh: installing$missing"
	# Keep package scripts from starting lighttpd/apache2 on port 80 as services; the
	# tests start their own servers on loopback ports.
	made_policy=
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		as_root sh -c 'printf "#!/bin/sh\nexit 101\n" >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d'
		made_policy=1
	fi
	status=0
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq || status=$?
	if [ $status = 0 ]; then
		# shellcheck disable=SC2086
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends --no-upgrade $missing \
			>/tmp/th-deps-apt.log 2>&1 || status=$?
		[ $status = 0 ] || tail -n 30 /tmp/th-deps-apt.log >&2
	fi
	[ -z "$made_policy" ] || as_root rm -f /usr/sbin/policy-rc.d
	[ $status = 0 ] || { echo "deps.sh: apt-get failed ($status)" >&2; exit $status; }
fi

# The interop tests' npm packages (@a2a-js/sdk, pinned in package-lock.json).
if [ "${TH_DEPS_NO_NPM:-0}" != 1 ] && [ -f "$root/package.json" ]; then
	stamp=$root/node_modules/.package-lock.json
	need=
	if [ ! -d "$root/node_modules" ] || [ ! -f "$stamp" ]; then
		need=1
	elif [ -f "$root/package-lock.json" ] && [ "$root/package-lock.json" -nt "$stamp" ]; then
		need=1
	elif [ "$root/package.json" -nt "$stamp" ]; then
		need=1
	fi
	if [ -n "$need" ]; then
		echo "deps.sh: installing npm packages"
		if [ -f "$root/package-lock.json" ]; then
			(cd "$root" && npm ci --no-audit --no-fund --loglevel=error)
		else
			(cd "$root" && npm install --no-audit --no-fund --loglevel=error)
		fi
	fi
fi
exit 0
