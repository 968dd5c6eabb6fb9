-- wrk script for bench/real/run.sh: POST one security/auth envelope to /api.
--   ACTION  the action (get_user_info, login, ...)
--   TOKEN   Bearer token; empty sends no Authorization header (the 401 path)
--   PARAMS  the params JSON (default {})
local action = os.getenv("ACTION") or "get_user_info"
local token = os.getenv("TOKEN") or ""
local params = os.getenv("PARAMS") or "{}"
wrk.method = "POST"
wrk.path = "/api"
wrk.headers["Content-Type"] = "application/json"
if token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end
wrk.body = '{"resource":"security/auth","action":"' .. action .. '","version":"v1","params":' .. params .. '}'

done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.0f p50_ms=%.2f p99_ms=%.2f secs=%.2f errors=%d non2xx=%d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.duration / 1e6,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
