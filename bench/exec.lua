-- wrk script: POST /api/playground/exec with a SET.
-- LEARNERS (default 1) learners take turns, request by request; with one,
-- the learner cookie comes from the LEARNER environment variable.
wrk.method = "POST"
wrk.body = '{"line": "SET lock:invoice:7 3f9a1c PX 30000", "client": "A"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-CSRF-Token"] = "bench-token"

local learners = tonumber(os.getenv("LEARNERS") or "1")
local single = os.getenv("LEARNER") or "benchlearner0123456789"
local n = 0

request = function()
  local id = single
  if learners > 1 then
    n = (n + 1) % learners
    -- 22 characters from [A-Za-z0-9_-], as the server's ids are.
    id = string.format("benchlearner%010d", n)
  end
  wrk.headers["Cookie"] = "locklab_learner=" .. id .. "; _csrf=bench-token"
  return wrk.format()
end
