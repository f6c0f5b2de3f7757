-- The refresh grant under load. Refresh tokens rotate on every use, so each request must
-- present the token the previous answer returned: every connection draws a token from a pool
-- seeded with one grant per connection, plus one for the request wrk builds once and never sends
-- (BENCH_REFRESH_TOKENS, one per line) and puts the
-- rotated one back. A failed answer drops its token; the pool then runs dry and wrk reports
-- status errors, which bench/run.mjs counts. A dry pool never reuses a token already sent: the
-- server treats a second use of a rotated token as a replay (after its short retry window) and
-- revokes the whole grant (OAuth 2.1 §4.3.1), so a reused token would fail every request of that
-- chain after it; an empty pool sends a token that is plainly invalid instead.
local pool = {}
for line in string.gmatch(os.getenv("BENCH_REFRESH_TOKENS") or "", "[^\n]+") do pool[#pool + 1] = line end
local client = os.getenv("BENCH_CLIENT_ID") or ""

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Accept"] = "application/json"

local function encode(s)
  return (string.gsub(s, "[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function request()
  local token = table.remove(pool) or "pool-empty"
  local body = "grant_type=refresh_token&refresh_token=" .. encode(token) .. "&client_id=" .. encode(client)
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  local token = string.match(body, '"refresh_token"%s*:%s*"([^"]+)"')
  if status == 200 and token then pool[#pool + 1] = token end
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
