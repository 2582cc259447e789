-- wrk script of the load run: cycles through a file of prepared requests
-- (one per line: METHOD <tab> PATH <tab> API KEY, "session:" and a web
-- session's login token, or empty <tab> JSON body or empty), picked at
-- random, and prints the figures as one JSON line.
-- Usage: wrk ... -s bench/requests.lua URL -- REQUEST_FILE

local threads = {}
local counter = 0

function setup(thread)
   counter = counter + 1
   thread:set("thread_number", counter)
   table.insert(threads, thread)
end

local prepared = {}

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
end

function request()
   return prepared[math.random(#prepared)]
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      '{"requests": %d, "duration_us": %d, "connect_errors": %d, "read_errors": %d, ' ..
      '"write_errors": %d, "status_errors": %d, "timeouts": %d, "p50_us": %d, "p90_us": %d, ' ..
      '"p99_us": %d, "max_us": %d, "mean_us": %.1f}\n',
      summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
      latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
      latency.mean))
end
