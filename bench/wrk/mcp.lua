-- One fixed request, sent over and over (wrk's closed loop): method, body and headers come
-- from the environment so that bench/run.mjs drives every scenario with this one script.
-- BENCH_AUTHS (several "Bearer …" values, one per line) rotates the Authorization header, to
-- spread calls over several workspaces. done() writes the figures as JSON to BENCH_OUT.
local function lines(s)
  local t = {}
  for line in string.gmatch(s or "", "[^\n]+") do t[#t + 1] = line end
  return t
end

wrk.method = os.getenv("BENCH_METHOD") or "POST"
wrk.body = os.getenv("BENCH_BODY")
for _, h in ipairs(lines(os.getenv("BENCH_HEADERS"))) do
  local name, value = string.match(h, "^([^:]+):%s*(.*)$")
  if name then wrk.headers[name] = value end
end

local auths = lines(os.getenv("BENCH_AUTHS"))
if #auths == 1 then
  wrk.headers["Authorization"] = auths[1]
elseif #auths > 1 then
  local i = 0
  function request()
    i = i % #auths + 1
    wrk.headers["Authorization"] = auths[i]
    return wrk.format()
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  local f = assert(io.open(os.getenv("BENCH_OUT"), "w"))
  f:write(string.format(
    '{"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"mean":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.max, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9)))
  f:close()
end
