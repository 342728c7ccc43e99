-- wrk script: POST /api/playground/exec with a SET, as one learner.
-- The learner cookie comes from the LEARNER environment variable.
wrk.method = "POST"
wrk.body = '{"line": "SET lock:invoice:7 3f9a1c PX 30000", "client": "A"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Cookie"] = "locklab_learner=" .. (os.getenv("LEARNER") or "benchlearner0123456789") .. "; _csrf=bench-token"
wrk.headers["X-CSRF-Token"] = "bench-token"
