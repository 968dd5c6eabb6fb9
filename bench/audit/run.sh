#!/usr/bin/env bash
# bench/audit/run.sh — the audit trail's cost (issue #47): an audited operation's throughput on
# the shipped binary with svc.audit.enabled on and off. `svc serve` runs on
# configs/application.toml in a scratch directory (SQLite, built-in user store, default
# logging; the shipped file turns the trail on, SVC_AUDIT_ENABLED=false turns it off), restarted
# for each measurement on the same database; bench/audit (main.go) signs in with a real
# password login and calls security/user update (a committed write, audited) from CONNS
# connections for SECONDS seconds after a warm-up. Rounds alternate the order (on/off, then
# off/on, …) so that a drift of the shared machine's load hits both sides alike.
#
#   bench/audit/run.sh                       # ROUNDS=5, CONNS=32, SECONDS_=8
#   ROUNDS=9 CONNS=64 SECONDS_=15 bench/audit/run.sh
#
# Output: one line per measurement, then per round the on/off ratio and the median, min and
# max of the ratios (target: median ≥ 0.95).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
ROUNDS="${ROUNDS:-5}"
CONNS="${CONNS:-32}"
SECONDS_="${SECONDS_:-8}"
PORT="${PORT:-$((20000 + RANDOM % 30000))}"
PASSWORD="bench-Password-1"

work="$(mktemp -d)"
svc_pid=""
cleanup() {
  [ -n "$svc_pid" ] && kill "$svc_pid" 2>/dev/null && wait "$svc_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/svc" ./cmd/svc
go build -o "$work/load" ./bench/audit
cp configs/application.toml "$work/application.toml"
. "$ROOT/bench/lib.sh"
export SVC_APP_PORT="$PORT" SVC_SECURITY_LOGIN_RATE_LIMIT=1000000000 SVC_API_RATE_LIMIT_MAX=1000000000
cd "$work"
echo "$PASSWORD" | ./svc --config application.toml user add bench --roles admin --password-stdin >/dev/null

# measure ON|OFF: one server start with the trail on or off, one load run; prints the rps.
measure() {
  SVC_AUDIT_ENABLED="$1" ./svc --config application.toml serve 2>>"$work/svc.log" >/dev/null &
  svc_pid=$!
  wait_http "$PORT" || { tail -n 20 "$work/svc.log" >&2; exit 1; }
  local out
  out="$(./load -url "http://127.0.0.1:$PORT" -user bench -password "$PASSWORD" -c "$CONNS" -d "${SECONDS_}s")"
  kill "$svc_pid"
  wait "$svc_pid" 2>/dev/null || true
  svc_pid=""
  echo "  trail=$1 $out" >&2
  sed -E 's/.*rps=([0-9.]+).*/\1/' <<<"$out"
}

echo "load before: $(uptime)" >&2
ratios=()
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2)); then on="$(measure true)"; off="$(measure false)"; else off="$(measure false)"; on="$(measure true)"; fi
  ratio="$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.3f", a / b }')"
  ratios+=("$ratio")
  printf 'round %d: on %s req/s, off %s req/s, on/off %s\n' "$r" "$on" "$off" "$ratio"
done
echo "load after: $(uptime)" >&2
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END {
  printf "on/off over %d rounds: median %.3f, min %.3f, max %.3f (target ≥ 0.95)\n", NR, (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'
rows="$(sqlite3 data/svc.db 'SELECT COUNT(*) FROM sys_audit_record' 2>/dev/null || echo '?')"
echo "sys_audit_record rows after the run: $rows; dropped: $(grep -c 'records dropped' "$work/svc.log" || true) log lines"
