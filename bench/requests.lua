-- wrk script of the load run: cycles through a file of prepared requests
-- (one per line: METHOD <tab> PATH <tab> API KEY, "session:" and a web
-- session's login token, or empty <tab> JSON body or empty), picked at
-- random, and prints the figures as one JSON line.
-- Usage: wrk -t 1 -c CONNECTIONS -d LIMIT ... -s bench/requests.lua URL -- \
--            REQUEST_FILE SECONDS CONNECTIONS
--
-- A round ends when SECONDS have passed and every connection's last request
-- has been answered, so it counts every request it started (as bench.driver
-- does): each connection sends its first request whenever it connects, and
-- after SECONDS a connection whose answer arrives sends no more; once all
-- are idle the script stops its thread and wakes wrk's main thread (SIGINT,
-- which wrk takes as "stop now"), which prints the summary. wrk's own -d
-- is only the limit for a request that never answers (counted as a
-- timeout). One wrk thread (-t 1) holds all the connections. The clock comes
-- through LuaJIT's ffi (wrk's Lua is LuaJIT).

local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock, bench_timespec *now);
int getpid(void);
int kill(int pid, int sig);
]]
local CLOCK_MONOTONIC = 1
local SIGINT = 2
local IDLE_MS = 3600 * 1000       -- a connection done with the round waits this long
local now_value = ffi.new("bench_timespec")

local function now()
   ffi.C.clock_gettime(CLOCK_MONOTONIC, now_value)
   return tonumber(now_value.tv_sec) + tonumber(now_value.tv_nsec) / 1e9
end

local threads = {}
local counter = 0

function setup(thread)
   counter = counter + 1
   thread:set("thread_number", counter)
   table.insert(threads, thread)
end

local prepared = {}
local deadline
local first_requests = 0          -- delay() calls before each connection's first request
-- Globals, which done() reads from the thread: the connections, and those
-- done with the round (the others had a request unanswered at wrk's limit).
connections = 0
idle = 0

function init(args)
   math.randomseed(os.time() * 1000 + (thread_number or 0))
   for line in io.lines(args[1]) do
      local method, path, key, body = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
      if method then
         local headers = {}
         if key:sub(1, 8) == "session:" then
            headers["Cookie"] = "bugsvc_session=" .. key:sub(9)
         elseif key ~= "" then
            headers["X-BUGZILLA-API-KEY"] = key
         end
         if body == "" then
            body = nil
         else
            headers["Content-Type"] = "application/json"
         end
         prepared[#prepared + 1] = wrk.format(method, path, headers, body)
      end
   end
   deadline = now() + tonumber(args[2])
   connections = tonumber(args[3])
end

-- wrk asks before every request of a connection how long to wait first.
function delay()
   if first_requests < connections then
      first_requests = first_requests + 1
      return 0
   end
   if now() < deadline then
      return 0
   end
   idle = idle + 1
   if idle == connections then
      wrk.thread:stop()
      ffi.C.kill(ffi.C.getpid(), SIGINT)
   end
   return IDLE_MS
end

function request()
   return prepared[math.random(#prepared)]
end

function done(summary, latency, requests)
   local e = summary.errors
   local unanswered = 0
   for _, thread in ipairs(threads) do
      unanswered = unanswered + math.max(0, thread:get("connections") - thread:get("idle"))
   end
   io.write(string.format(
      '{"requests": %d, "duration_us": %d, "connect_errors": %d, "read_errors": %d, ' ..
      '"write_errors": %d, "status_errors": %d, "timeouts": %d, "p50_us": %d, "p90_us": %d, ' ..
      '"p99_us": %d, "max_us": %d, "mean_us": %.1f}\n',
      summary.requests, summary.duration, e.connect, e.read, e.write, e.status,
      e.timeout + unanswered,
      latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
      latency.mean))
end
