-- Replay a file of pre-signed, never-sent requests: one line each, tab-separated
-- METHOD, PATH, then header lines "Name: value" separated by tabs, the last field the body.
-- Thread t sends lines t, t + threads, … so no request is ever sent twice.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local lines = {}
local index = 0
local thread_no = 0
local threads_total = 0
local created = 0

function setup(thread)
  thread:set("thread_no", created)
  created = created + 1
end

function init(args)
  thread_no = tonumber(wrk.thread:get("thread_no")) or 0
  threads_total = tonumber(os.getenv("BENCH_THREADS") or "2")
  local n = 0
  for line in io.lines(os.getenv("BENCH_SIGNED_FILE")) do
    if n % threads_total == thread_no then
      lines[#lines + 1] = line
    end
    n = n + 1
  end
end

function request()
  index = index + 1
  local line = lines[index]
  if line == nil then
    return wrk.format("GET", "/exhausted")
  end
  local fields = {}
  for field in string.gmatch(line, "[^\t]+") do
    fields[#fields + 1] = field
  end
  local headers = {}
  for i = 3, #fields - 1 do
    local name, value = string.match(fields[i], "^([^:]+): (.*)$")
    headers[name] = value
  end
  return wrk.format(fields[1], fields[2], headers, fields[#fields])
end
