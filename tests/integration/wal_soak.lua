-- SPDX-License-Identifier: Apache-2.0
-- wal_soak.lua — wrk script of tests/integration/wal_soak.sh (STORE-5): JSON-RPC
-- SendMessage (echo model), a new task per request, each with a fresh messageId.
--
-- Every answer is counted: 2xx with a task id, 2xx without one (a JSON-RPC error), and
-- non-2xx. The task ids go to $WAL_SOAK_OUT.<thread> (one a line) so the test can look
-- each one up in the database. done() prints one line the test reads:
--   WAL_SOAK requests=N ok=N noid=N non2xx=N connect=N read=N write=N status=N timeout=N
-- (requests and the socket errors from wrk's summary, the rest summed over the threads).

local threads = {}
local run = os.getenv("WAL_SOAK_RUN") or tostring(os.time())
local out_prefix = os.getenv("WAL_SOAK_OUT")

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
wrk.headers["X-Participant-Id"] = "soak"

function setup(thread)
  threads[#threads + 1] = thread
  thread:set("tid", #threads)
end

local counter = 0
local ids = nil

function init(args)
  ok = 0
  noid = 0
  non2xx = 0
  if out_prefix ~= nil then
    ids = io.open(out_prefix .. "." .. tostring(tid), "w")
    if ids ~= nil then
      ids:setvbuf("line")
    end
  end
end

function request()
  counter = counter + 1
  local body = string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":' ..
    '{"messageId":"soak-%s-%s-%d","role":"ROLE_USER","parts":[{"text":"soak message %d"}]}}}',
    counter, run, tostring(tid), counter, counter)
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
    return
  end
  local id = body and string.match(body, '"result":{"task":{"id":"([^"]+)"')
  if id == nil then
    noid = noid + 1
    return
  end
  ok = ok + 1
  if ids ~= nil then
    ids:write(id, "\n")
  end
end

function done(summary, latency, requests)
  local sum_ok, sum_noid, sum_non2xx = 0, 0, 0
  for _, t in ipairs(threads) do
    sum_ok = sum_ok + (t:get("ok") or 0)
    sum_noid = sum_noid + (t:get("noid") or 0)
    sum_non2xx = sum_non2xx + (t:get("non2xx") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    "WAL_SOAK requests=%d ok=%d noid=%d non2xx=%d connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, sum_ok, sum_noid, sum_non2xx, e.connect, e.read, e.write, e.status,
    e.timeout))
end
