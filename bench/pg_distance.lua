-- SPDX-License-Identifier: Apache-2.0
-- wrk script for bench/pg_distance.sh: bench/compare.lua with BENCH_KIND=send (SendMessage,
-- a new task per request, a messageId unique to BENCH_RUN; answers that are not a success
-- counted), plus, when BENCH_QUANTILES names a file, this run's latency written to it so
-- that the runs against several hosts at once can be merged into one p50 and p99:
--   count N
--   1000 lines: the latency in microseconds at the quantiles 0.05 %, 0.15 %, … 99.95 %
-- (wrk 4.1 gives no raw samples to a script, only percentiles.)
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "compare.lua")

local compare_done = done
function done(summary, latency, requests)
  compare_done(summary, latency, requests)
  local out = os.getenv("BENCH_QUANTILES") or ""
  if out == "" then
    return
  end
  local f = assert(io.open(out, "w"))
  f:write(string.format("count %d\n", summary.requests))
  for i = 0, 999 do
    f:write(string.format("%d\n", latency:percentile((i + 0.5) / 10)))
  end
  f:close()
end
