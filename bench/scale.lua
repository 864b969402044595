-- SPDX-License-Identifier: Apache-2.0
-- wrk script for bench/scale.sh: one request kind against a database of many tasks, and a
-- count of the answers that were not what the script expects.
--
--   BENCH_KIND=get    JSON-RPC GetTask of the task BENCH_TASK names
--   BENCH_KIND=spread JSON-RPC GetTask cycling through the task ids in the file
--                     BENCH_IDS (one a line): tasks all over the database, not one hot task
--   BENCH_KIND=list   JSON-RPC ListTasks, pageSize BENCH_PAGE_SIZE (default 50), with
--                     "pageToken": BENCH_TOKEN when that is set and not empty
--   BENCH_KIND=card   GET /.well-known/agent-card.json (give wrk that URL)
--
-- An answer counts as bad when its HTTP status is not 200 or, for the JSON-RPC kinds,
-- when its body has no "result" (JSON-RPC errors come back as HTTP 200). For list, an
-- answer whose body does not carry "totalSize":BENCH_TOTAL (when set) counts as wrong.
-- done() prints
--   scale: responses=N bad-status=N rpc-errors=N wrong=N
-- which bench/scale.sh reads; wrk's own socket-error line is printed as usual.
local kind = os.getenv("BENCH_KIND") or "card"
local task = os.getenv("BENCH_TASK") or "missing-task-id"
local token = os.getenv("BENCH_TOKEN") or ""
local page_size = tonumber(os.getenv("BENCH_PAGE_SIZE") or "50") or 50
local total = os.getenv("BENCH_TOTAL") or ""
local want_total = nil
if kind == "list" and total ~= "" then
  -- A pattern: the number must end there (1000 must not match 10000).
  want_total = '"totalSize":' .. total .. '[,}%s]'
end

if kind ~= "card" then
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end
wrk.headers["A2A-Version"] = "1.0"
wrk.headers["X-Participant-Id"] = "bench"
if kind == "get" then
  wrk.body = '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"' .. task .. '"}}'
elseif kind == "list" then
  local params = '{"pageSize":' .. page_size
  if token ~= "" then
    params = params .. ',"pageToken":"' .. token .. '"'
  end
  wrk.body = '{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":' .. params .. '}}'
end

-- Per-thread state; each thread has its own Lua state, read back in done().
local threads = {}
local next_tid = 0
responses = 0
bad_status = 0
rpc_errors = 0
wrong = 0

function setup(thread)
  next_tid = next_tid + 1
  thread:set("tid", next_tid)
  table.insert(threads, thread)
end

if kind == "spread" then
  local ids = {}
  local path = os.getenv("BENCH_IDS")
  if path ~= nil and path ~= "" then
    local f = io.open(path, "r")
    if f ~= nil then
      for line in f:lines() do
        if line ~= "" then
          table.insert(ids, line)
        end
      end
      f:close()
    end
  end
  if #ids == 0 then
    ids = { "missing-task-id" }
  end
  local bodies = {}
  for i, id in ipairs(ids) do
    bodies[i] = '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"' .. id .. '"}}'
  end
  local at = nil

  function request()
    if at == nil then
      -- Threads start at different places in the list, so they read different tasks.
      at = ((tonumber(tid) or 1) - 1) * 7919 % #bodies
    end
    at = at % #bodies + 1
    return wrk.format(nil, nil, nil, bodies[at])
  end
end

function response(status, headers, body)
  responses = responses + 1
  if status ~= 200 then
    bad_status = bad_status + 1
  elseif kind ~= "card" and not string.find(body, '"result"', 1, true) then
    rpc_errors = rpc_errors + 1
  elseif want_total ~= nil and not string.find(body, want_total) then
    wrong = wrong + 1
  end
end

function done(summary, latency, requests)
  local n, s, r, w = 0, 0, 0, 0
  for _, thread in ipairs(threads) do
    n = n + thread:get("responses")
    s = s + thread:get("bad_status")
    r = r + thread:get("rpc_errors")
    w = w + thread:get("wrong")
  end
  io.write(string.format("scale: responses=%d bad-status=%d rpc-errors=%d wrong=%d\n", n, s, r, w))
end
