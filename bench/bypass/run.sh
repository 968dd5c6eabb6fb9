#!/usr/bin/env bash
# bench/bypass/run.sh — one performance bypass on and off in the same run (issue #43): two
# `svc serve` processes of the same binary over one database, the second with
# SVC_BYPASS_OFF=NAME, driven in alternating rounds (which goes first swaps every round) by wrk
# with get_user_info and a token already used (the state users run in), beside the bare handler
# of bench/api/bare.
#
#   bench/bypass/run.sh rpc.envelope                      # 5 rounds of 5 s
#   ROUNDS=7 DURATION=10s bench/bypass/run.sh mcp.fastcall
#   SVC_BIN=/tmp/old/svc bench/bypass/run.sh app.accessline   # a binary that still has the bypass
#   OFF_BIN=/tmp/old/svc bench/bypass/run.sh none     # "off" is another binary, every bypass as
#                                                     # it ships: before/after a change, same run
#
# Output: per round and as medians, for on, off and bare: req/s, p99 ms and server CPU µs per
# request (utime + stime of the process over the round / its requests), then the gain of the
# bypass: off/on CPU per request and on/off req/s.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
NAME="${1:?usage: bench/bypass/run.sh BYPASS-NAME}"
DURATION="${DURATION:-5s}"
ROUNDS="${ROUNDS:-5}"
ON_PORT=18291
OFF_PORT=18292
BARE_PORT=18293
PASSWORD="bench-Password-1"
command -v wrk >/dev/null || { echo "wrk is missing: run scripts/services.sh (it installs Debian's wrk)" >&2; exit 1; }

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${SVC_BIN:-}" ]; then cp "$SVC_BIN" "$work/svc"; else go build -o "$work/svc" ./cmd/svc; fi
if [ -n "${OFF_BIN:-}" ]; then cp "$OFF_BIN" "$work/svc-off"; else cp "$work/svc" "$work/svc-off"; fi
go build -o "$work/bare" ./bench/api/bare
go build -o "$work/load" ./bench/real/load
cp configs/application.toml "$work/application.toml"
. "$ROOT/bench/lib.sh"

export SVC_SECURITY_LOGIN_RATE_LIMIT=1000000000 SVC_API_RATE_LIMIT_MAX=1000000000
cd "$work"
echo "$PASSWORD" | ./svc --config application.toml user add bench --roles admin --password-stdin >/dev/null
SVC_APP_PORT="$ON_PORT" ./svc --config application.toml serve 2>"$work/on.log" >/dev/null &
on_pid=$!
pids+=("$on_pid")
off_env=(SVC_BYPASS_OFF="$NAME")
[ -z "${OFF_BIN:-}" ] || off_env=()
env "${off_env[@]}" SVC_APP_PORT="$OFF_PORT" ./svc-off --config application.toml serve 2>"$work/off.log" >/dev/null &
off_pid=$!
pids+=("$off_pid")
./bare -addr "127.0.0.1:$BARE_PORT" &
bare_pid=$!
pids+=("$bare_pid")
wait_http "$ON_PORT" && wait_http "$OFF_PORT" && wait_http "$BARE_PORT"
./load -mode mint -url "http://127.0.0.1:$ON_PORT" -password "$PASSWORD" -n 1 -c 1 -out "$work/token" >/dev/null
export TOKEN; TOKEN="$(head -n1 "$work/token")"

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tck="$(getconf CLK_TCK)"
field() { sed -E "s/.*[ ]$2=([0-9.]+).*/\1/" <<<"$1"; }
# round PID PORT: one wrk run of get_user_info; its RESULT line plus cpu_us=.
round() {
  local c0 c1 res
  c0="$(cpu "$1")"
  res="$(ACTION=get_user_info wrk -t2 -c64 -d"$DURATION" --latency -s "$ROOT/bench/real/api.lua" "http://127.0.0.1:$2" | grep RESULT)"
  c1="$(cpu "$1")"
  awk -v r="$res" -v d="$((c1 - c0))" -v t="$tck" -v s="$(field "$res" secs)" -v q="$(field "$res" rps)" \
    'BEGIN{printf "%s cpu_us=%.2f\n", r, d / t * 1e6 / (q * s)}'
}
for p in "$ON_PORT:$on_pid" "$OFF_PORT:$off_pid" "$BARE_PORT:$bare_pid"; do
  DURATION=2s round "${p#*:}" "${p%:*}" >/dev/null # warm-up: the token is verified and cached
done
echo "load before: $(uptime)"
declare -a r_on r_off r_bare
for ((r = 0; r < ROUNDS; r++)); do
  order=(on off bare)
  for ((k = 0; k < 3; k++)); do
    case "${order[(k + r) % 3]}" in
      on) r_on+=("$(round "$on_pid" "$ON_PORT")") ;;
      off) r_off+=("$(round "$off_pid" "$OFF_PORT")") ;;
      bare) r_bare+=("$(round "$bare_pid" "$BARE_PORT")") ;;
    esac
  done
  echo "round $((r + 1)): on rps $(field "${r_on[r]}" rps) cpu $(field "${r_on[r]}" cpu_us) µs p99 $(field "${r_on[r]}" p99_ms);" \
    "off rps $(field "${r_off[r]}" rps) cpu $(field "${r_off[r]}" cpu_us) µs p99 $(field "${r_off[r]}" p99_ms);" \
    "bare rps $(field "${r_bare[r]}" rps) cpu $(field "${r_bare[r]}" cpu_us) µs"
done
echo "load after: $(uptime)"
# med KEY LINE...: the median of field KEY over the lines
med() { local k="$1"; shift; for l in "$@"; do field "$l" "$k"; done | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
on_rps="$(med rps "${r_on[@]}")"; off_rps="$(med rps "${r_off[@]}")"; bare_rps="$(med rps "${r_bare[@]}")"
on_cpu="$(med cpu_us "${r_on[@]}")"; off_cpu="$(med cpu_us "${r_off[@]}")"; bare_cpu="$(med cpu_us "${r_bare[@]}")"
printf 'median       %-10s %-10s %-10s\n' on off bare
printf 'req/s        %-10s %-10s %-10s\n' "$on_rps" "$off_rps" "$bare_rps"
printf 'CPU µs/req   %-10s %-10s %-10s\n' "$on_cpu" "$off_cpu" "$bare_cpu"
printf 'p99 ms       %-10s %-10s %-10s\n' "$(med p99_ms "${r_on[@]}")" "$(med p99_ms "${r_off[@]}")" "$(med p99_ms "${r_bare[@]}")"
awk -v n="$NAME" -v a="$on_cpu" -v b="$off_cpu" -v x="$on_rps" -v y="$off_rps" \
  'BEGIN{printf "RESULT bypass=%s cpu_off_over_on=%.3f rps_on_over_off=%.3f\n", n, b / a, x / y}'
