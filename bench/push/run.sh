#!/usr/bin/env bash
# bench/push/run.sh — the push targets of issue #17 on this machine, server and load generator
# side by side: N (default 10 000) concurrent WebSocket connections on one node, the server's
# memory per idle connection (target ≤ 16 KiB), broadcasts to all of them (target p99 ≤ 250 ms)
# and pushes to single users at RATE a second (target 50 000/s sustained, no connection
# dropped).
#
#   bench/push/run.sh
#   N=2000 RATE=20000 DURATION=5 bench/push/run.sh
#   CPUPROFILE=/tmp/push.pprof bench/push/run.sh    # profile the server over the whole run
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
N="${N:-10000}"
RATE="${RATE:-50000}"
DURATION="${DURATION:-10}" # seconds of the single-user run (not SECONDS: bash owns it)
BROADCASTS="${BROADCASTS:-20}"
PORT="${PORT:-18091}" # a free port when another run holds the default
ulimit -n "$(ulimit -Hn)" 2>/dev/null || ulimit -n 65536
echo "open files limit: $(ulimit -n)"

work="$(mktemp -d)"
pid=""
cleanup() {
  [ -n "$pid" ] && kill -INT "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/server" ./bench/push/server
go build -o "$work/load" ./bench/push/load

secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
cat >"$work/application.toml" <<TOML
[svc.app]
name = "svc-push-bench"
port = $PORT
[svc.data_sources.primary]
type = "sqlite"
path = "$work/bench.db"
[svc.security]
secret = "$secret"
[svc.log]
level = "warn"
[svc.push]
enabled = true
TOML

"$work/server" -config "$work/application.toml" ${CPUPROFILE:+-cpuprofile "$CPUPROFILE"} >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$PORT/bench/stats" >/dev/null 2>&1 && break
  sleep 0.1
done
"$work/load" -config "$work/application.toml" -n "$N" -rate "$RATE" -seconds "$DURATION" -broadcasts "$BROADCASTS"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
