#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: Apache httpd with conf/apache-proxy-fcgi.conf (STORE-4) — mod_proxy_fcgi
# with flushpackets=on in front of three tiny-harness workers started by spawn-fcgi -F 3 on
# a UNIX socket — on loopback, run as an unprivileged user. The scenario is the one of
# tests/integration/apache_fcgid.sh (conversation over both bindings, body limits, SSE,
# completion "completed by alice", every concurrent write's turn in the worker that writes
# for the others (HOST-2; on PostgreSQL COUNT(DISTINCT worker_pid) >= 2), clean shutdown,
# the login, and the recipe's bearer variant -D TH_BEARER with an API key: SEC-1),
# run here in proxy mode. TAP output; 77 (skip) when apache2, mod_proxy_fcgi,
# spawn-fcgi, curl, jq or sqlite3 is missing.
: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
export TH_SRCDIR
exec bash "$TH_SRCDIR/tests/integration/apache_fcgid.sh" proxy
