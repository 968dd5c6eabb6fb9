-- wrk script: POST an /api envelope with a Bearer token read from the TOKEN environment variable.
-- Used by bench/api/run.sh against both svc and the bare net/http baseline.
local token = os.getenv("TOKEN") or ""
wrk.method = "POST"
wrk.path = "/api"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. token
wrk.body = '{"resource":"bench/echo","action":"echo","version":"v1","params":{"id":9007199254740993,"name":"svc"}}'

done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.0f p50_ms=%.2f p99_ms=%.2f secs=%.2f errors=%d non2xx=%d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.duration / 1e6,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
