-- SPDX-License-Identifier: Apache-2.0
-- wrk script for bench/compare.sh: one request kind, the same bytes for tiny-harness and
-- the peer, and a count of the responses that were not a success.
--
--   BENCH_KIND=send   JSON-RPC SendMessage, a new task per request: a fresh messageId
--                     each, as bench/send_message.lua does, prefixed with BENCH_RUN so
--                     that no two runs send the same one (a resent first message is the
--                     same task in tiny-harness, decision-002)
--   BENCH_KIND=get    JSON-RPC GetTask of the task BENCH_TASK names (as bench/get_task.lua)
--   BENCH_KIND=card   GET /.well-known/agent-card.json (give wrk that URL)
--   BENCH_AUTH=...    also send this Authorization header (bench/recipes.sh)
--
-- A response counts as bad when its HTTP status is not 200 or, for the JSON-RPC kinds,
-- when its body has no "result" (JSON-RPC errors come back as HTTP 200). done() prints
--   compare: responses=N bad-status=N rpc-errors=N
-- which bench/compare.sh reads; wrk's own socket-error line is printed as usual.
local kind = os.getenv("BENCH_KIND") or "card"
local task = os.getenv("BENCH_TASK") or "missing-task-id"
local run = os.getenv("BENCH_RUN") or tostring(os.time())

if kind ~= "card" then
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end
wrk.headers["A2A-Version"] = "1.0"
wrk.headers["X-Participant-Id"] = "bench"
-- BENCH_AUTH: an Authorization header value (bench/recipes.sh logs in to the recipes as
-- "bench" with HTTP Basic, decision-040).
local auth = os.getenv("BENCH_AUTH") or ""
if auth ~= "" then
  wrk.headers["Authorization"] = auth
end
if kind == "get" then
  wrk.body = '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"' .. task .. '"}}'
end

-- Per-thread state; each thread has its own Lua state, read back in done().
local threads = {}
local next_id = 0
counter = 0
responses = 0
bad_status = 0
rpc_errors = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("tid", next_id)
  table.insert(threads, thread)
end

if kind == "send" then
  function request()
    counter = counter + 1
    local body = string.format(
      '{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":' ..
      '{"messageId":"%s-%s-%d","role":"ROLE_USER","parts":[{"text":"benchmark message %d"}]}}}',
      counter, run, tostring(tid), counter, counter)
    return wrk.format(nil, nil, nil, body)
  end
end

function response(status, headers, body)
  responses = responses + 1
  if status ~= 200 then
    bad_status = bad_status + 1
  elseif kind ~= "card" and not string.find(body, '"result"', 1, true) then
    rpc_errors = rpc_errors + 1
  end
end

function done(summary, latency, requests)
  local n, s, r = 0, 0, 0
  for _, thread in ipairs(threads) do
    n = n + thread:get("responses")
    s = s + thread:get("bad_status")
    r = r + thread:get("rpc_errors")
  end
  io.write(string.format("compare: responses=%d bad-status=%d rpc-errors=%d\n", n, s, r))
end
