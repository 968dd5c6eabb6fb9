#!/usr/bin/env bash
# bench/api/ab.sh — end-to-end CPU cost per request of several svcbench builds, side by side
# (issue #12: keep a custom piece only where it saves ≥ 5 % of the cost of an authenticated
# operation). Throughput is too noisy on a shared machine; the server's own CPU time (user +
# system from /proc/PID/stat) over a fixed-duration wrk run, divided by the requests served,
# moves much less. Rounds alternate the builds so a change in the machine's load hits all alike.
#
#   go build -o /tmp/a ./bench/api/svcbench   # baseline
#   ... change something ...
#   go build -o /tmp/b ./bench/api/svcbench
#   bench/api/ab.sh base=/tmp/a variant=/tmp/b
#   DURATION=10s ROUNDS=5 bench/api/ab.sh base=/tmp/a variant=/tmp/b
#
# Each line is one run: name, requests/s, CPU µs per request. The summary gives each build's
# median CPU µs per request and its difference from the first build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
DURATION="${DURATION:-8s}"
ROUNDS="${ROUNDS:-3}"
BASE_PORT="${BASE_PORT:-18180}"
[ $# -ge 2 ] || { echo "usage: $0 name=binary name=binary ..." >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk is missing: run scripts/services.sh (it installs Debian's wrk)" >&2; exit 1; }

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
names=()
declare -A port pid
i=0
for arg in "$@"; do
  name="${arg%%=*}" bin="${arg#*=}"
  names+=("$name")
  port[$name]=$((BASE_PORT + i))
  mkdir -p "$work/$name"
  cat >"$work/$name/application.toml" <<TOML
[svc.app]
name = "svc-bench"
port = ${port[$name]}
[svc.data_sources.primary]
type = "sqlite"
path = "$work/$name/bench.db"
[svc.security]
secret = "$secret"
[svc.api.rate_limit]
max = 1000000000
TOML
  "$bin" -config "$work/$name/application.toml" -token-file "$work/token" 2>"$work/$name/svc.log" >/dev/null &
  pid[$name]=$!
  pids+=("${pid[$name]}")
  i=$((i + 1))
done

for name in "${names[@]}"; do
  for _ in $(seq 200); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${port[$name]}/healthz" || true)" != 000 ] && break
    sleep 0.1
  done
done
export TOKEN; TOKEN="$(cat "$work/token")"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# run NAME: one wrk run against NAME; prints "NAME rps cpu_us_per_req".
run() {
  local t0 t1 line
  t0="$(ticks "${pid[$1]}")"
  line="$(wrk -t2 -c64 -d"$DURATION" -s bench/api/post.lua "http://127.0.0.1:${port[$1]}" | grep RESULT)"
  t1="$(ticks "${pid[$1]}")"
  awk -v name="$1" -v line="$line" -v ticks="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" 'BEGIN {
    n = split(line, f, /[ =]/); for (i = 1; i < n; i++) v[f[i]] = f[i + 1]
    printf "%s %.0f %.2f\n", name, v["rps"], ticks * 1e6 / hz / (v["rps"] * v["secs"]) }'
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for name in "${names[@]}"; do DURATION=2s run "$name" >/dev/null; done # warm-up
for round in $(seq "$ROUNDS"); do
  for name in "${names[@]}"; do run "$name" | tee -a "$work/results"; done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v first="${names[0]}" '
  { cpu[$1] = cpu[$1] " " $3; order[$1] = order[$1] ? order[$1] : NR }
  END {
    for (n in cpu) {
      k = split(substr(cpu[n], 2), a, " "); asort(a)
      med[n] = (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    }
    for (n in cpu) printf "%-10s median cpu_us_per_req=%.2f (%+.1f %% vs %s)\n", n, med[n], 100 * (med[n] - med[first]) / med[first], first
  }' "$work/results"
