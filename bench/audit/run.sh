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
#   INSTR=1 CONNS=8 SECONDS_=60 bench/audit/run.sh   # instructions per call on/off (callgrind)
#
# Output: one line per measurement (stderr), then per round the throughputs and the server's CPU
# per call on and off, and the median, min and max over the rounds of throughput on/off and of
# CPU per call off/on — what the throughput ratio would be on a machine where the server has the
# CPU to itself (target: ≥ 0.95). The CPU figure is the one to trust on a shared machine.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
ROUNDS="${ROUNDS:-5}"
CONNS="${CONNS:-32}"
SECONDS_="${SECONDS_:-8}"
PORT="${PORT:-$((20000 + RANDOM % 30000))}"
PASSWORD="bench-Password-1"

work="$(mktemp -d)"
cleanup() {
  # measure runs in a command substitution (a subshell): the server it started is in svc.pid.
  [ -s "$work/svc.pid" ] && kill "$(cat "$work/svc.pid")" 2>/dev/null
  sleep 0.5
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

# INSTR=1: instructions per audited call instead of throughput, counted by valgrind's callgrind
# (bench/instr explains the flags): on a shared machine the count does not move with the other
# jobs' load. Each side is one server start under callgrind; a warm-up run, then the counters
# are zeroed, SECONDS_ of load at CONNS connections counted, and IDLE (default 10) seconds of no
# requests counted to subtract the clock-driven background (the trail's own flush worker runs
# only when it is on, so its idle ticks stay in its figure). I/O is not an instruction: the
# trail's inserts cost more than this shows on a slow disk; the throughput run is the figure.
if [ -n "${INSTR:-}" ]; then
  command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
  # count PID NAME: dump the counters, print the newest dump's total instructions.
  count() {
    callgrind_control -d "$2" "$1" >/dev/null 2>&1
    awk '/^(summary|totals):/ {print $2; exit}' "$(ls -t "$work"/cg.* | grep -v '\.log$' | head -n 1)"
  }
  declare -A per_call
  for on in true false; do
    SVC_AUDIT_ENABLED="$on" GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off valgrind --tool=callgrind \
      --callgrind-out-file="$work/cg.$on" --dump-instr=no --collect-systime=no \
      ./svc --config application.toml serve 2>"$work/vg.$on.log" >/dev/null &
    svc_pid=$!
    echo "$svc_pid" >"$work/svc.pid"
    wait_http "$PORT" 3000 || { tail -n 20 "$work/vg.$on.log" >&2; exit 1; }
    ./load -url "http://127.0.0.1:$PORT" -user bench -password "$PASSWORD" -c "$CONNS" -d 10s -warm 0 >/dev/null
    callgrind_control -z "$svc_pid" >/dev/null 2>&1
    out="$(./load -url "http://127.0.0.1:$PORT" -user bench -password "$PASSWORD" -c "$CONNS" -d "${SECONDS_}s" -warm 0)"
    total="$(count "$svc_pid" "load$on")"
    callgrind_control -z "$svc_pid" >/dev/null 2>&1
    sleep "${IDLE:-10}"
    idle="$(count "$svc_pid" "idle$on")"
    kill "$svc_pid"
    wait "$svc_pid" 2>/dev/null || true
    : >"$work/svc.pid"
    calls="$(sed -E 's/.* calls=([0-9]+).*/\1/' <<<"$out")"
    grep -q ' errors=0' <<<"$out" || { echo "trail=$on: some calls failed: $out" >&2; exit 1; }
    per_call[$on]="$(awk -v t="$total" -v i="$idle" -v s="$SECONDS_" -v w="${IDLE:-10}" -v n="$calls" \
      'BEGIN { printf "%.0f", (t - i * s / w) / n }')"
    echo "RESULT trail=$on calls=$calls instr_per_call=${per_call[$on]} raw=$(awk -v t="$total" -v n="$calls" 'BEGIN { printf "%.0f", t / n }') idle_instr_per_s=$(awk -v i="$idle" -v w="${IDLE:-10}" 'BEGIN { printf "%.0f", i / w }')"
  done
  awk -v on="${per_call[true]}" -v off="${per_call[false]}" \
    'BEGIN { printf "RESULT instructions per call off/on %.3f (the throughput ratio when CPU-bound; target ≥ 0.95)\n", off / on }'
  exit 0
fi

# measure ON|OFF: one server start with the trail on or off, one load run; prints the rps.
measure() {
  SVC_AUDIT_ENABLED="$1" ./svc --config application.toml serve 2>>"$work/svc.log" >/dev/null &
  svc_pid=$!
  echo "$svc_pid" >"$work/svc.pid"
  wait_http "$PORT" || { tail -n 20 "$work/svc.log" >&2; exit 1; }
  local out
  out="$(./load -url "http://127.0.0.1:$PORT" -user bench -password "$PASSWORD" -c "$CONNS" -d "${SECONDS_}s" -pid "$svc_pid")"
  kill "$svc_pid"
  wait "$svc_pid" 2>/dev/null || true
  : >"$work/svc.pid"
  echo "  trail=$1 $out" >&2
  sed -E 's/.*rps=([0-9.]+).* cpu_us=([0-9.]+).*/\1 \2/' <<<"$out"
}

echo "load before: $(uptime)" >&2
ratios=()
cpus=()
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2)); then on="$(measure true)"; off="$(measure false)"; else off="$(measure false)"; on="$(measure true)"; fi
  read -r on_rps on_cpu <<<"$on"
  read -r off_rps off_cpu <<<"$off"
  ratio="$(awk -v a="$on_rps" -v b="$off_rps" 'BEGIN { printf "%.3f", a / b }')"
  cpu="$(awk -v a="$on_cpu" -v b="$off_cpu" 'BEGIN { printf "%.3f", b / a }')"
  ratios+=("$ratio")
  cpus+=("$cpu")
  printf 'round %d: on %s req/s %s us CPU/call, off %s req/s %s us CPU/call; throughput on/off %s, CPU off/on %s\n' \
    "$r" "$on_rps" "$on_cpu" "$off_rps" "$off_cpu" "$ratio" "$cpu"
done
echo "load after: $(uptime)" >&2
# summary NAME VALUES...: median, min and max of the values.
summary() {
  local name="$1"
  shift
  printf '%s\n' "$@" | sort -n | awk -v n="$name" '{ v[NR] = $1 } END {
    printf "%s over %d rounds: median %.3f, min %.3f, max %.3f (target ≥ 0.95)\n", n, NR, (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'
}
summary "throughput on/off" "${ratios[@]}"
summary "CPU per call off/on (throughput when CPU-bound)" "${cpus[@]}"
rows="$(sqlite3 data/svc.db 'SELECT COUNT(*) FROM sys_audit_record' 2>/dev/null || echo '?')"
echo "sys_audit_record rows after the run: $rows; dropped: $(grep -c 'records dropped' "$work/svc.log" || true) log lines"
