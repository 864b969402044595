-- SPDX-License-Identifier: Apache-2.0
-- wrk script for bench/fcgid_control.sh: bench/compare.lua (BENCH_KIND and the rest as
-- there), plus one line about the tail that wrk's --latency table does not give:
--   control: p999=MS slow500=PERCENT
-- p999 is the 99.9th percentile in milliseconds; slow500 the share of requests (in %)
-- that took 500 ms or more, found by bisecting wrk's latency percentiles. A request
-- that slept in mod_fcgid's one-second wait counts there; a slow worker rarely does.
dofile((os.getenv("BENCH_LUA_DIR") or "bench") .. "/compare.lua")

local compare_done = done

function done(summary, latency, requests)
  compare_done(summary, latency, requests)
  local share = 0
  if latency.max >= 500000 then
    local lo, hi = 0, 100
    for _ = 1, 30 do
      local mid = (lo + hi) / 2
      if latency:percentile(mid) >= 500000 then hi = mid else lo = mid end
    end
    share = 100 - hi
  end
  io.write(string.format("control: p999=%.2f slow500=%.3f\n", latency:percentile(99.9) / 1000, share))
end
