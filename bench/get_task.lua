-- SPDX-License-Identifier: Apache-2.0
-- wrk script: JSON-RPC GetTask of one task; its id comes from the environment
-- (bench/run.sh creates the task first and exports TH_BENCH_TASK).
local task = os.getenv("TH_BENCH_TASK") or "missing-task-id"
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
wrk.headers["X-Participant-Id"] = "bench"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"' .. task .. '"}}'
