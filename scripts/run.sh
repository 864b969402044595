#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — build tiny-harness and serve it: lighttpd on http://127.0.0.1:8080/ in the
# foreground with one FastCGI worker of 16 request threads, the echo model and the database
# var/tiny-harness.db under the repository. Ctrl-C stops it.
#
#   PORT=8081 ./scripts/run.sh     another port
#   PROCS=2 ./scripts/run.sh       more worker processes (each with worker_threads threads)
# Any TINY_HARNESS_* variable (README, "Configuration") reaches the workers.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
PORT=${PORT:-8080}
PROCS=${PROCS:-1}

./scripts/deps.sh

# The generated Makefiles re-run automake/autoconf themselves when a source of theirs
# changes; autoreconf is needed only for a fresh checkout.
[ -x configure ] || autoreconf -fi

mkdir -p build
if [ ! -f build/Makefile ]; then
	echo "run.sh: configuring build/"
	(cd build && ../configure >configure.out 2>&1) || { tail -n 30 build/configure.out; exit 1; }
fi
echo "run.sh: building build/src/tiny-harness"
if ! make -C build -j2 >build/build.out 2>&1; then
	grep -E 'error' build/build.out | head -n 30
	tail -n 20 build/build.out
	exit 1
fi

if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$PORT/"; then
	echo "run.sh: something already answers on 127.0.0.1:$PORT; try PORT=$((PORT + 1)) ./scripts/run.sh" >&2
	exit 1
fi

url=http://127.0.0.1:$PORT/
cat <<MSG

tiny-harness: $url  (lighttpd, $PROCS worker process(es), echo model, database var/tiny-harness.db)
  agent card:  curl -s ${url}.well-known/agent-card.json
  send:        curl -s -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' \\
                 -d '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}' \\
                 $url
  database:    sqlite3 var/tiny-harness.db 'SELECT id, state, sub_state, name FROM tasks'
  log:         var/serve-$PORT/error.log
  stop:        Ctrl-C

MSG
# serve sets TH_PORT/TH_BIN/TH_STATE_DIR (=./var/serve-$PORT: sockets, error.log,
# lighttpd.pid)/TH_PROCS and the database and base URL defaults, then becomes
# lighttpd -D -f conf/lighttpd.conf. A port already served from here is refused with its pid.
export TH_SRCDIR=$root
exec build/src/tiny-harness serve --port "$PORT" --procs "$PROCS"
