-- POST a batch of BENCH_POINTS points, each with a capturedAt never sent before (the server
-- deduplicates by capturedAt, so a repeated stamp would be skipped rather than stored).
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local counter = 0
local thread_no = 0
local threads = 0
local points = tonumber(os.getenv("BENCH_POINTS") or "50")
local path = os.getenv("BENCH_PATH")
local base = tonumber(os.getenv("BENCH_BASE_SECONDS"))

function setup(thread)
  thread:set("thread_no", threads)
  threads = threads + 1
end

function init(args)
  thread_no = tonumber(wrk.thread:get("thread_no")) or 0
end

local function stamp(ms)
  -- thread t owns the millisecond stamps t, t + 16, t + 32, … from the base time on
  local seconds = base + math.floor(ms / 1000)
  return os.date("!%Y-%m-%dT%H:%M:%S", seconds) .. string.format(".%03dZ", ms % 1000)
end

function request()
  local items = {}
  for i = 1, points do
    counter = counter + 1
    local ms = counter * 16 + thread_no
    items[i] = string.format('{"lat":40.18%04d,"lon":44.51%04d,"capturedAt":"%s"}', counter % 9999, i, stamp(ms))
  end
  local body = '{"points":[' .. table.concat(items, ",") .. ']}'
  -- a headers table replaces wrk.headers (from -H) rather than adding to them
  local headers = {["Content-Type"] = "application/json"}
  for name, value in pairs(wrk.headers) do
    headers[name] = value
  end
  return wrk.format("POST", path, headers, body)
end
