-- SPDX-License-Identifier: Apache-2.0
-- wrk script: JSON-RPC SendMessage (echo model), a new task per request.
-- Each request carries a fresh messageId so no request is a duplicate (TASK-7).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
wrk.headers["X-Participant-Id"] = "bench"

local counter = 0
local thread_id = 0

function setup(thread)
  thread_id = thread_id + 1
  thread:set("tid", thread_id)
end

function request()
  counter = counter + 1
  local body = string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":' ..
    '{"messageId":"b%s-%d","role":"ROLE_USER","parts":[{"text":"benchmark message %d"}]}}}',
    counter, tostring(tid), counter, counter)
  return wrk.format(nil, nil, nil, body)
end
