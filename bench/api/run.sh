#!/usr/bin/env bash
# bench/api/run.sh — /api throughput and latency of svc against a bare net/http handler, side by
# side on this machine in the same run (issue #3 targets: svc ≥ 80 % of the bare handler's
# requests/s and p99 ≤ 20 ms, with wrk -t2 -c64 on an authenticated operation).
#
#   bench/api/run.sh                    # one round: 15 s on svc, then 15 s on bare
#   DURATION=30s ROUNDS=3 bench/api/run.sh
#   CPUPROFILE=/tmp/svc.pprof bench/api/run.sh   # profile svcbench over the whole run
#   MEMPROFILE=/tmp/svc.alloc bench/api/run.sh   # its allocations (go tool pprof -sample_index=alloc_space)
#   METRICS=1 bench/api/run.sh          # svc with svc.metrics.enabled (issue #19: cost ≤ 3 %)
#
# Both servers run for the whole script; rounds alternate svc and bare so that a change in the
# machine's load hits both alike. Besides wrk's numbers each line gives the server's CPU time per
# request (user + system, from /proc), which moves much less than requests/s when the machine is
# shared, and the 1-minute load average at the end of the run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
DURATION="${DURATION:-15s}"
ROUNDS="${ROUNDS:-1}"
SVC_PORT=18081
BARE_PORT=18082
command -v wrk >/dev/null || { echo "wrk is missing: run scripts/services.sh (it installs Debian's wrk)" >&2; exit 1; }

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/svcbench" ./bench/api/svcbench
go build -o "$work/bare" ./bench/api/bare

secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
cat >"$work/application.toml" <<TOML
[svc.app]
name = "svc-bench"
port = $SVC_PORT
[svc.data_sources.primary]
type = "sqlite"
path = "$work/bench.db"
[svc.security]
secret = "$secret"
[svc.api.rate_limit]
max = 1000000000
TOML
ADMIN_PORT=18083
if [ -n "${METRICS:-}" ]; then
  printf '[svc.metrics]\nenabled = true\n[svc.admin]\naddress = "127.0.0.1:%s"\n' "$ADMIN_PORT" >>"$work/application.toml"
fi

"$work/svcbench" -config "$work/application.toml" -token-file "$work/token" \
  ${CPUPROFILE:+-cpuprofile "$CPUPROFILE"} ${MEMPROFILE:+-memprofile "$MEMPROFILE"} 2>"$work/svc.log" &
svc_pid=$!
pids+=("$svc_pid")
"$work/bare" -addr "127.0.0.1:$BARE_PORT" &
bare_pid=$!
pids+=("$bare_pid")

. "$ROOT/bench/lib.sh"
wait_http "$SVC_PORT" || { tail -n 20 "$work/svc.log" >&2; exit 1; }
wait_http "$BARE_PORT"
export TOKEN; TOKEN="$(cat "$work/token")"

# One request first: svc must answer code 0 with the int64 intact.
check="$(curl -sS -H 'Content-Type: application/json' -H "Authorization: Bearer $TOKEN" \
  -d '{"resource":"bench/echo","action":"echo","version":"v1","params":{"id":9007199254740993,"name":"svc"}}' \
  "http://127.0.0.1:$SVC_PORT/api")"
echo "svc answers: $check"
case "$check" in *'"code":0'*'9007199254740993'*) ;; *) echo "unexpected answer from svc" >&2; exit 1;; esac

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# run PORT PID: one wrk run; prints wrk's RESULT line plus the server's CPU µs per request.
run() {
  local t0 t1 line
  t0="$(ticks "$2")"
  line="$(wrk -t2 -c64 -d"$DURATION" --latency -s bench/api/post.lua "http://127.0.0.1:$1" | grep RESULT)"
  t1="$(ticks "$2")"
  awk -v line="$line" -v ticks="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v la="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
    n = split(line, f, /[ =]/); for (i = 1; i < n; i++) v[f[i]] = f[i + 1]
    printf "%s cpu_us_per_req=%.1f load1=%s\n", line, ticks * 1e6 / hz / (v["rps"] * v["secs"]), la }'
}
field() { sed -E "s/.*[ ]$2=([0-9.]+).*/\1/" <<<"$1"; }

echo "load before: $(uptime)"
echo "warm-up"
DURATION=3s run "$SVC_PORT" "$svc_pid" >/dev/null
DURATION=3s run "$BARE_PORT" "$bare_pid" >/dev/null
for round in $(seq "$ROUNDS"); do
  svc_line="$(run "$SVC_PORT" "$svc_pid")"; echo "svc  #$round: $svc_line"
  bare_line="$(run "$BARE_PORT" "$bare_pid")"; echo "bare #$round: $bare_line"
  ratio=$(awk -v a="$(field "$svc_line" rps)" -v b="$(field "$bare_line" rps)" 'BEGIN{printf "%.1f", 100*a/b}')
  echo "round $round: svc/bare throughput ${ratio} % (target ≥ 80 %); svc p99 $(field "$svc_line" p99_ms) ms (target ≤ 20 ms)"
done
echo "load after: $(uptime)"
echo "access log lines written by svc: $(grep -c '"msg":"request"' "$work/svc.log" || true)"
if [ -n "${METRICS:-}" ]; then
  echo "metrics on: $(curl -s "http://127.0.0.1:$ADMIN_PORT/metrics" | grep '^svc_api_requests_total{' | head -n 3)"
fi
