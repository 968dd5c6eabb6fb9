#!/usr/bin/env bash
# bench/api/run.sh — /api throughput and latency of svc against a bare net/http handler, side by
# side on this machine in the same run (issue #3 targets: svc ≥ 80 % of the bare handler's
# requests/s and p99 ≤ 20 ms, with wrk -t2 -c64 on an authenticated operation).
#
#   bench/api/run.sh            # 15 s per server
#   DURATION=30s bench/api/run.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
DURATION="${DURATION:-15s}"
command -v wrk >/dev/null || { echo "wrk is missing: run scripts/services.sh (it installs Debian's wrk)" >&2; exit 1; }

work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

go build -o "$work/svcbench" ./bench/api/svcbench
go build -o "$work/bare" ./bench/api/bare

secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
cat >"$work/application.toml" <<TOML
[svc.app]
name = "svc-bench"
port = 18081
[svc.data_sources.primary]
type = "sqlite"
path = "$work/bench.db"
[svc.security]
secret = "$secret"
[svc.api.rate_limit]
max = 1000000000
TOML

"$work/svcbench" -config "$work/application.toml" -token-file "$work/token" 2>"$work/svc.log" &
pids+=($!)
"$work/bare" -addr 127.0.0.1:18082 &
pids+=($!)

for port in 18081 18082; do
  for _ in $(seq 100); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    [ "$port" = 18082 ] && curl -s -o /dev/null "http://127.0.0.1:$port/" && break
    sleep 0.1
  done
done
export TOKEN; TOKEN="$(cat "$work/token")"

# One request each first: both must answer code 0.
check="$(curl -fsS -H 'Content-Type: application/json' -H "Authorization: Bearer $TOKEN" \
  -d '{"resource":"bench/echo","action":"echo","version":"v1","params":{"id":9007199254740993,"name":"svc"}}' \
  http://127.0.0.1:18081/api)"
echo "svc answers: $check"
case "$check" in *'"code":0'*'9007199254740993'*) ;; *) echo "unexpected answer from svc" >&2; exit 1;; esac

run() { wrk -t2 -c64 -d"$DURATION" --latency -s bench/api/post.lua "http://127.0.0.1:$1" | grep RESULT; }
echo "warm-up"; run 18081 >/dev/null; run 18082 >/dev/null
svc_line="$(run 18081)"; echo "svc:  $svc_line"
bare_line="$(run 18082)"; echo "bare: $bare_line"

rps() { sed -E 's/.*rps=([0-9]+).*/\1/' <<<"$1"; }
p99() { sed -E 's/.*p99_ms=([0-9.]+).*/\1/' <<<"$1"; }
ratio=$(awk -v a="$(rps "$svc_line")" -v b="$(rps "$bare_line")" 'BEGIN{printf "%.1f", 100*a/b}')
echo "svc/bare throughput: ${ratio} %  (target ≥ 80 %);  svc p99: $(p99 "$svc_line") ms (target ≤ 20 ms)"
echo "access log lines written by svc: $(wc -l <"$work/svc.log")"
