#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# memory.sh — a FastCGI worker's peak memory under the SEC-3 attacks of issue 27, through
# lighttpd with conf/lighttpd.conf and one worker on loopback (not run in CI):
#
#   ids      50 JSON-RPC requests carrying a 900 KB string id (refused: max_id)
#   streams  STREAMS (default 300) SubscribeToTask streams from one participant, each
#            with a max_id-long (256 B) JSON-RPC id, opened at once (capped at
#            stream_max_per_participant; the rest get 429)
#   history  8 concurrent GetTask of a task whose history is ~73 MB (1,100 messages of
#            64 KiB written with sqlite3) with historyLength 5000
#
# Prints the worker's VmHWM (peak RSS, /proc/PID/status) after start and after each
# attack, in MiB. BUILD=dir (default build/), STREAMS=n.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$SRC/build}
STREAMS=${STREAMS:-300}
export TH_SRCDIR=$SRC TH_BUILDDIR=$BUILD TH_BIN=$BUILD/src/tiny-harness
T=$(mktemp -d "${TMPDIR:-/tmp}/th-memory.XXXXXX")
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	sh "$SRC/tests/lib/server.sh" stop "$T/srv" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
BASE=$(sh "$SRC/tests/lib/server.sh" start "$T/srv" 1)
DB=$(cat "$T/srv/db")
hdr=(-H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice')
worker() { pgrep -P "$(cat "$T/srv/lighttpd.pid")" -f tiny-harness | head -n1; }
# The worker is started by lighttpd at its first request.
curl -s -o /dev/null "${BASE}.well-known/agent-card.json"
hwm() { awk '/VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$(worker)/status"; }
echo "worker $(worker): after start VmHWM $(hwm) MiB"

head -c 921600 /dev/zero | tr '\0' i >"$T/id"
printf '{"jsonrpc":"2.0","id":"%s","method":"ListTasks","params":{}}' "$(cat "$T/id")" >"$T/big.json"
for _ in $(seq 50); do
	curl -s -o /dev/null "${hdr[@]}" -H 'Content-Type: application/json' --data-binary @"$T/big.json" "$BASE"
done
echo "ids: 50 requests with a 900 KB id: VmHWM $(hwm) MiB"

TASK=$(curl -s "${hdr[@]}" -H 'Content-Type: application/json' \
	--data-binary '{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}' \
	"${BASE}message:send" | jq -r .task.id)
id=$(head -c 256 /dev/zero | tr '\0' s)
for i in $(seq "$STREAMS"); do
	curl -s -N --max-time 120 -o /dev/null "${hdr[@]}" -H 'Content-Type: application/json' \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":\"$id\",\"method\":\"SubscribeToTask\",\"params\":{\"id\":\"$TASK\"}}" \
		"$BASE" &
	PIDS+=($!)
done
sleep 3
echo "streams: $STREAMS streams from one participant: $(ss -x | grep -c "$T/srv/tiny-harness.sock") worker connections, VmHWM $(hwm) MiB"
for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
PIDS=()

pad=$(head -c 65536 /dev/zero | tr '\0' p)
sqlite3 "$DB" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1100)
	INSERT INTO message_rows (task_num, pos, message_id, role, sender, json, created_ms)
	SELECT (SELECT num FROM tasks WHERE id = '$TASK'), 1000 + i, 'bulk-' || i, 'ROLE_USER', 'alice',
	       '{\"messageId\":\"bulk-' || i || '\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"$pad\"}]}', 0
	FROM n"
echo "history: $(sqlite3 "$DB" "SELECT sum(length(json)) / 1048576 FROM messages WHERE task_id = '$TASK'") MiB stored"
for _ in $(seq 8); do
	curl -s -o /dev/null -w '%{http_code} %{size_download}\n' "${hdr[@]}" \
		"${BASE}tasks/$TASK?historyLength=5000" >>"$T/gets" &
	PIDS+=($!)
done
wait "${PIDS[@]}" || true
PIDS=()
echo "history: 8 concurrent GetTask, historyLength 5000: answers (status bytes) $(sort "$T/gets" | uniq -c | tr -s ' \n' ' '), VmHWM $(hwm) MiB"
