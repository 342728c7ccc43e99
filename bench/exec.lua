-- wrk script: POST /api/playground/exec with a SET.
-- With LEARNERS > 1, that many learners take turns, request by request;
-- otherwise one learner, whose cookie comes from the LEARNER environment
-- variable, sends a request that wrk builds once (a request() function
-- costs the load generator Lua work on every request, and it shares the
-- machine's cores with the server).
wrk.method = "POST"
wrk.body = '{"line": "SET lock:invoice:7 3f9a1c PX 30000", "client": "A"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-CSRF-Token"] = "BenchTokenAbcdefghijklmnopqrstuv"

local learners = tonumber(os.getenv("LEARNERS") or "1")
wrk.headers["Cookie"] = "locklab_learner=" .. (os.getenv("LEARNER") or "benchlearner0123456789") .. "; _csrf=BenchTokenAbcdefghijklmnopqrstuv"

if learners > 1 then
  local n = 0
  request = function()
    n = (n + 1) % learners
    -- 22 characters from [A-Za-z0-9_-], as the server's ids are.
    wrk.headers["Cookie"] = string.format("locklab_learner=benchlearner%010d; _csrf=BenchTokenAbcdefghijklmnopqrstuv", n)
    return wrk.format()
  end
end
