-- Shared by tools_call.lua and tools_list.lua (loaded with dofile): sends the request the
-- script set up, counts every answer that is not a 2xx or carries a JSON-RPC or tool error,
-- keeps each thread's first body, and prints one JSON line at the end:
--   WRK_JSON {"requests":..,"duration_us":..,"p50_us":..,"p99_us":..,"non2xx":..,
--             "errors":{..},"first_status":..,"first_body":".."}

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0
  first_status = 0
  first_body = ""
end

function response(status, headers, body)
  if first_status == 0 then
    first_status = status
    first_body = body or ""
  end
  if status < 200 or status > 299 then
    bad = bad + 1
  elseif body and (body:find('"isError":true', 1, true) or body:find('"error":{"code":', 1, true)) then
    bad = bad + 1
  end
end

local function json_string(s)
  s = s:gsub('\\', '\\\\'):gsub('"', '\\"'):gsub('\n', '\\n'):gsub('\r', '\\r'):gsub('\t', '\\t')
  s = s:gsub('[%z\1-\31]', function(c) return string.format('\\u%04x', c:byte()) end)
  return '"' .. s .. '"'
end

function done(summary, latency, requests)
  local non2xx, status, body = 0, 0, ""
  for _, t in ipairs(threads) do
    non2xx = non2xx + t:get("bad")
    if status == 0 then
      status = t:get("first_status")
      body = t:get("first_body")
    end
  end
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,' ..
    '"max_us":%d,"non2xx":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,' ..
    '"timeout":%d},"first_status":%d,"first_body":%s}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, non2xx, e.connect, e.read, e.write, e.status,
    e.timeout, status, json_string(body)))
end
