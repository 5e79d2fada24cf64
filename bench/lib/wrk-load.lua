-- Load script of bench/lib/load-run.js for wrk (https://github.com/wg/wrk): every request is the next
-- pre-signed delivery of a file of fixed-size records (raw HTTP/1.1 requests, all the same length),
-- so a run never signs anything and never repeats an id until the file is used up. Arguments (after
-- `--`): file, record size in bytes, first record of this run, records available from there, threads.
-- Each thread takes every Nth record (N = threads) of that range; `done` prints one JSON line.
local threads = {}
local counter = 0

function setup(thread)
  thread:set('index', counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  local file, size, first, count = args[1], tonumber(args[2]), tonumber(args[3]), tonumber(args[4])
  local step = tonumber(args[5])
  requests_list = {}
  local f = assert(io.open(file, 'rb'))
  f:seek('set', first * size)
  local data = f:read(count * size) or ''
  f:close()
  local available = math.floor(#data / size)
  local n = 0
  for i = index, available - 1, step do
    n = n + 1
    requests_list[n] = data:sub(i * size + 1, (i + 1) * size)
  end
  cursor = 0
  wrapped = 0
end

function request()
  cursor = cursor + 1
  if cursor > #requests_list then
    cursor = 1
    wrapped = wrapped + 1
  end
  return requests_list[cursor]
end

function done(summary, latency, requests)
  -- Threads advance at their own pace: the next run starts past the furthest thread (sent, or in flight).
  local wraps, furthest = 0, 0
  for _, thread in ipairs(threads) do
    wraps = wraps + (thread:get('wrapped') or 0)
    furthest = math.max(furthest, thread:get('cursor') or 0)
  end
  io.write(string.format(
    '{"requests":%d,"durationUs":%d,"non2xx":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"timeouts":%d,"p50Us":%d,"p99Us":%d,"wrapped":%d,"furthest":%d}\n',
    summary.requests, summary.duration, summary.errors.status, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.timeout, latency:percentile(50), latency:percentile(99), wraps, furthest))
end
