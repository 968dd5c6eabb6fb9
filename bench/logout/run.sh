#!/usr/bin/env bash
# bench/logout/run.sh — logout with revocation, the memory of revocations and the login burst
# (issue #34 item 1) on the shipped binary: `svc serve` on configs/application.toml in a scratch
# directory (SQLite, built-in user store, argon2id, default logging), side by side with the bare
# net/http handler of bench/api/bare in the same run, both driven by bench/real/load.
#
#   bench/logout/run.sh                    # ROUNDS=3 alternating rounds of LOGOUTS=15000 logouts
#   FLOW=fresh bench/logout/run.sh         # tokens never used before their logout (default
#                                          # FLOW=used: each token calls get_user_info once first)
#   LOGOUTS=50000 ROUNDS=5 bench/logout/run.sh
#   MEMORY=1000000 bench/logout/run.sh     # also: RSS after 1 000 000 logouts on a fresh server
#   BURST=2000 bench/logout/run.sh         # logins of the burst phase, run first from idle
#                                          # (default 1000, 0 skips it)
#   SVC_SRC=/tmp/main-tree bench/logout/run.sh   # build svc from another tree ("before")
#   PROFILE=1 bench/logout/run.sh          # also save a CPU profile of the first round's logouts
#                                          # (not their tokens' first use) and a heap profile after
#                                          # it to $PROFILE_DIR (default /tmp; PROFILE_SECONDS long,
#                                          # default 3: keep it under the logouts' own duration)
#
# The flow users run (FLOW=used, issue #43): a token is used, then logged out. Before each
# round's logouts every token of the round calls get_user_info once (not counted), then the
# logouts are measured; LOGOUTS stays under the verified-token cache's 16 384 entries so that a
# used token is still known when its logout comes, as it is for a user. In the same round the
# server's CPU per get_user_info (one token, LOGOUTS calls, the same load tool) is measured as
# the reference of the logout's CPU (target ≤ 1.6×).
#
# Tokens: each logout needs a fresh token of its own family. bench/logout/mint issues them
# through the token service before the server starts (one family row each, as a login stores),
# since N argon2id logins would take N/50 seconds. Every answer is checked (code 0); a failed
# logout is counted in the errors column.
#
# Output: one table, then each round (logout figures are the median round's):
#
#   measure                            svc                  reference            ratio
#   login burst req/s (c=64, n=300)    8                    -                    -
#   login burst peak RSS MiB           96 (+46)             idle 49              target +32
#   logout req/s (c=64)                2371                 8550 (bare)          27.7 %
#   logout p50 / p99 ms                19.10 / 137.75       6.09 / 31.35         -
#   logout server CPU µs/req           197.3                46.7 (bare)          -
#   logout errors (all rounds)         0                    -                    -
#   RSS before the logouts MiB         61                   -                    -
#   RSS after 45000 logouts MiB        77 (+15)             peak 78              -
#     round 1: svc rps 2839 cpu 177.3 µs; bare rps 8815 cpu 40.7 µs
#
# CPU is the process's utime + stime over the round divided by its logouts. RSS: VmRSS of the
# server idle after warm-up, and its peak (VmHWM) during each phase, reset between phases
# (clear_refs 5).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
LOGOUTS="${LOGOUTS:-15000}"
FLOW="${FLOW:-used}"
ROUNDS="${ROUNDS:-3}"
MEMORY="${MEMORY:-0}"
BURST="${BURST:-1000}"
CONNS="${CONNS:-64}"
PROFILE="${PROFILE:-0}"
PROFILE_DIR="${PROFILE_DIR:-/tmp}"
SVC_SRC="${SVC_SRC:-$ROOT}"
SVC_PORT=18191
BARE_PORT=18192
ADMIN=127.0.0.1:18194
PASSWORD="bench-Password-1"

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$SVC_SRC" && go build -o "$work/svc" ./cmd/svc)
(cd "$SVC_SRC" && if [ -d bench/logout/mint ]; then go build -o "$work/mint" ./bench/logout/mint; fi)
[ -x "$work/mint" ] || go build -o "$work/mint" ./bench/logout/mint
go build -o "$work/bare" ./bench/api/bare
go build -o "$work/load" ./bench/real/load
cp configs/application.toml "$work/application.toml"
. "$ROOT/bench/lib.sh"

export SVC_APP_PORT="$SVC_PORT" SVC_SECURITY_LOGIN_RATE_LIMIT=1000000000 SVC_API_RATE_LIMIT_MAX=1000000000
if [ "$PROFILE" = 1 ]; then export SVC_PPROF_ENABLED=true SVC_ADMIN_ADDRESS="$ADMIN"; fi
cd "$work"
echo "$PASSWORD" | ./svc --config application.toml user add bench --roles admin --password-stdin >/dev/null
mint() { ./mint -config application.toml -password "$PASSWORD" -n "$1" -c 8 -out "$2" 2>>"$work/mint.log"; }
echo "minting $ROUNDS x $LOGOUTS tokens..." >&2
for ((r = 0; r < ROUNDS; r++)); do mint "$LOGOUTS" "$work/tokens.$r"; done
mint 200 "$work/tokens.warm"
mint 1 "$work/tokens.info"

rss() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # utime + stime, clock ticks
tck="$(getconf CLK_TCK)"
field() { sed -E "s/.*[ ]$2=([0-9.]+).*/\1/" <<<"$1"; }
peak() { local v; v="$(rss "$1" VmHWM)"; echo 5 >"/proc/$1/clear_refs" 2>/dev/null || true; echo "$v"; }

start_svc() {
  ./svc --config application.toml serve 2>"$work/svc.log" >/dev/null &
  svc_pid=$!
  pids+=("$svc_pid")
  wait_http "$SVC_PORT" || { tail -n 20 "$work/svc.log" >&2; exit 1; }
}
start_svc
./bare -addr "127.0.0.1:$BARE_PORT" &
bare_pid=$!
pids+=("$bare_pid")
wait_http "$BARE_PORT"
url="http://127.0.0.1:$SVC_PORT"
burl="http://127.0.0.1:$BARE_PORT"

./load -mode logout -url "$url" -tokens "$work/tokens.warm" -c "$CONNS" >/dev/null
./load -mode logout -url "$burl" -tokens "$work/tokens.warm" -c "$CONNS" >/dev/null
idle="$(rss "$svc_pid" VmRSS)"
peak "$svc_pid" >/dev/null
echo "load before: $(uptime)" >&2
echo "flow: $FLOW"

row() { printf '%-34s %-20s %-20s %s\n' "$@"; }
rows=()
# The login burst runs first, from idle: its figure is the peak over idle (target +40 MiB, issue #43).
if ((BURST > 0)); then
  burst="$(./load -mode mint -url "$url" -password "$PASSWORD" -n "$BURST" -c 64 -out "$work/burst")"
  pb="$(peak "$svc_pid")"
  rows+=("$(row "login burst req/s (c=64, n=$BURST)" "$(field "$burst" rps)" - -)")
  rows+=("$(row "login burst peak RSS MiB" "$((pb / 1024)) (+$(((pb - idle) / 1024)))" "idle $((idle / 1024))" "target +40")")
  sleep 2
  idle="$(rss "$svc_pid" VmRSS)"
  peak "$svc_pid" >/dev/null
fi

# the steady get_user_info of the reference: one used token, LOGOUTS times
head -n1 "$work/tokens.info" | awk -v n="$LOGOUTS" '{for (i = 0; i < n; i++) print}' >"$work/steady"
# measured PID MODE URL FILE: one load run, "RESULT ... cpu_us=X" (server CPU per request)
measured() {
  local c0 c1 res
  c0="$(cpu "$1")"
  res="$(./load -mode "$2" -url "$3" -tokens "$4" -c "$CONNS")"
  c1="$(cpu "$1")"
  awk -v r="$res" -v d="$((c1 - c0))" -v t="$tck" -v n="$(wc -l <"$4")" 'BEGIN{printf "%s cpu_us=%.1f\n", r, d / t * 1e6 / n}'
}
# one logout round against PID at URL with token file FILE: the logouts' RESULT line with
# cpu_us=, then info_cpu_us= (the steady get_user_info's CPU in the same round)
logout_round() {
  local res info prof=""
  if [ "$FLOW" = used ]; then ./load -mode use -url "$2" -tokens "$3" -c "$CONNS" >/dev/null; fi
  # the profile covers the logouts only (not the tokens' first use before them)
  if [ "${4:-}" = profile ]; then
    curl -s -o "$PROFILE_DIR/logout-cpu.pprof" "http://$ADMIN/debug/pprof/profile?seconds=${PROFILE_SECONDS:-3}" &
    prof=$!
  fi
  res="$(measured "$1" logout "$2" "$3")"
  if [ -n "$prof" ]; then wait "$prof"; fi
  info="$(measured "$1" use "$2" "$work/steady")"
  echo "$res info_cpu_us=$(field "$info" cpu_us) info_rps=$(field "$info" rps)"
}
declare -a r_svc r_bare
for ((r = 0; r < ROUNDS; r++)); do
  if ((r % 2 == 0)); then
    r_svc+=("$(logout_round "$svc_pid" "$url" "$work/tokens.$r" "$( ((r == 0)) && [ "$PROFILE" = 1 ] && echo profile)")")
    r_bare+=("$(logout_round "$bare_pid" "$burl" "$work/tokens.$r")")
  else
    r_bare+=("$(logout_round "$bare_pid" "$burl" "$work/tokens.$r")")
    r_svc+=("$(logout_round "$svc_pid" "$url" "$work/tokens.$r")")
  fi
done
peak_logout="$(peak "$svc_pid")"
after_logout="$(rss "$svc_pid" VmRSS)"
if [ "$PROFILE" = 1 ]; then curl -s -o "$PROFILE_DIR/logout-heap.pprof" "http://$ADMIN/debug/pprof/heap"; fi
median() { for l in "$@"; do echo "$(field "$l" rps) $l"; done | sort -n | awk '{a[NR]=$0} END{print a[int((NR+1)/2)]}' | cut -d' ' -f2-; }
svc="$(median "${r_svc[@]}")"
bare="$(median "${r_bare[@]}")"
errs=0
for l in "${r_svc[@]}"; do errs=$((errs + $(field "$l" errors))); done

row measure svc reference ratio
for l in "${rows[@]}"; do echo "$l"; done
row "logout req/s (c=$CONNS)" "$(field "$svc" rps)" "$(field "$bare" rps) (bare)" \
  "$(awk -v a="$(field "$svc" rps)" -v b="$(field "$bare" rps)" 'BEGIN{printf "%.1f %%", 100*a/b}')"
row "logout p50 / p99 ms" "$(field "$svc" p50_ms) / $(field "$svc" p99_ms)" "$(field "$bare" p50_ms) / $(field "$bare" p99_ms)" -
row "logout server CPU µs/req" "$(field "$svc" cpu_us)" "$(field "$bare" cpu_us) (bare)" -
row "get_user_info server CPU µs/req" "$(field "$svc" info_cpu_us)" "$(field "$bare" info_cpu_us) (bare)" \
  "$(awk -v a="$(field "$svc" cpu_us)" -v b="$(field "$svc" info_cpu_us)" 'BEGIN{printf "logout %.2fx", a/b}')"
row "logout errors (all rounds)" "$errs" - -
row "RSS before the logouts MiB" "$((idle / 1024))" - -
row "RSS after $((ROUNDS * LOGOUTS)) logouts MiB" "$((after_logout / 1024)) (+$(((after_logout - idle) / 1024)))" "peak $((peak_logout / 1024))" -
for ((r = 0; r < ROUNDS; r++)); do
  echo "  round $((r + 1)): svc rps $(field "${r_svc[r]}" rps) cpu $(field "${r_svc[r]}" cpu_us) µs (get_user_info $(field "${r_svc[r]}" info_cpu_us) µs); bare rps $(field "${r_bare[r]}" rps) cpu $(field "${r_bare[r]}" cpu_us) µs"
done

if ((MEMORY > 0)); then
  echo "minting $MEMORY tokens for the memory phase..." >&2
  kill "$svc_pid"; wait "$svc_pid" 2>/dev/null || true
  mint "$MEMORY" "$work/tokens.mem"
  start_svc
  ./load -mode logout -url "$url" -tokens "$work/tokens.warm" -c "$CONNS" >/dev/null 2>&1 || true
  sleep 1
  idle2="$(rss "$svc_pid" VmRSS)"
  peak "$svc_pid" >/dev/null
  c0="$(cpu "$svc_pid")"
  mres="$(./load -mode logout -url "$url" -tokens "$work/tokens.mem" -c "$CONNS")"
  pm="$(peak "$svc_pid")"
  sleep 2
  am="$(rss "$svc_pid" VmRSS)"
  if [ "$PROFILE" = 1 ]; then curl -s -o "$PROFILE_DIR/memory-heap.pprof" "http://$ADMIN/debug/pprof/heap"; fi
  row "$MEMORY logouts req/s" "$(field "$mres" rps) (errors $(field "$mres" errors))" - -
  row "RSS idle -> after MiB" "$((idle2 / 1024)) -> $((am / 1024)) (+$(((am - idle2) / 1024)))" "peak $((pm / 1024)) (+$(((pm - idle2) / 1024)))" "target +100"
fi
echo "load after: $(uptime)" >&2
