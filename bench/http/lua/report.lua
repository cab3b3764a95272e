-- Shared by every script: print wrk's figures as one JSON line the runner reads.
function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '\nWRK_JSON {"requests":%d,"seconds":%.3f,"p50_us":%d,"p99_us":%d,"max_us":%d,"non2xx":%d,"socket_errors":%d}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99),
    latency.max, errors.status, errors.connect + errors.read + errors.write + errors.timeout))
end
