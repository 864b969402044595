#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: nginx with conf/nginx.conf (STORE-4) — fastcgi_pass to three
# tiny-harness workers started by spawn-fcgi -F 3 on a UNIX socket, FastCGI buffering off
# for SSE — on loopback, run as an unprivileged user. The scenario is the one of
# tests/integration/apache_fcgid.sh (conversation over both bindings, body limits, SSE,
# completion "completed by alice", every concurrent write's turn in the worker that writes
# for the others (HOST-2; on PostgreSQL COUNT(DISTINCT worker_pid) >= 2), clean shutdown),
# run here in nginx mode. TAP output; 77 (skip) when nginx, spawn-fcgi, curl, jq or
# sqlite3 is missing.
: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
export TH_SRCDIR
exec bash "$TH_SRCDIR/tests/integration/apache_fcgid.sh" nginx
