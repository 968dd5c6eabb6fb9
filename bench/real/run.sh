#!/usr/bin/env bash
# bench/real/run.sh — the shipped binary's authenticated path (issue #13), side by side with a
# bare net/http handler in the same run. It builds `svc`, starts `svc serve` on the shipped
# configs/application.toml in a scratch directory (SQLite, built-in user store, argon2id), creates
# a user with `svc user add`, and measures with wrk -t2 -c64:
#
#   get_user_info   Bearer, one token                  target ≥ 90 % of bare req/s, p99 ≤ 1.2× bare's
#   logout          a fresh token per request (bench/real/load logs in N times beforehand)
#   no token → 401  the unauthenticated path
#   login burst     64 connections of password logins  target RSS ≤ idle + 100 MiB
#   bare            the bare handler of bench/api/bare on the get_user_info body
#   metrics on      get_user_info on a second `svc serve` over the same database with
#                   svc.metrics.enabled (issue #19: metrics cost ≤ 3 % of throughput)
#
#   bench/real/run.sh                                  # 10 s per wrk run, 3 rounds, 10 000 logout tokens
#                                                      # (minting them takes about 3 minutes: one argon2id login each)
#   DURATION=30s LOGOUTS=5000 bench/real/run.sh
#   SVC_SRC=/tmp/main-tree bench/real/run.sh           # build svc from another tree ("before")
#   SVC_BIN=.cache/bin/svc bench/real/run.sh           # measure an already built binary (bench/run.sh)
#
# Only what a load test cannot avoid differs from the shipped configuration, through the
# environment: the port, and the per-client rate limits (login 6 and the engine's 100 per 5
# minutes would answer 429 after a few requests from one load generator).
# RSS is the server's from /proc: idle (VmRSS) after the first requests, before any login load,
# and the peak (VmHWM) of each later phase — the logins that mint the logout tokens, the logouts,
# the login burst, the logouts — reset between phases; the target applies to the two login loads
# (64 connections each), which run before the logouts. The logout phase is reported beside them:
# at 15 000+ requests a second its heap grows with the garbage collector's headroom (the runtime's
# default GOGC), not with hashing, and the runtime keeps that memory for a while afterwards.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
DURATION="${DURATION:-10s}"
LOGOUTS="${LOGOUTS:-10000}"
ROUNDS="${ROUNDS:-3}"
SVC_SRC="${SVC_SRC:-$ROOT}"
SVC_PORT=18091
BARE_PORT=18092
METRICS_PORT=18093
ADMIN_ADDRESS=127.0.0.1:18094
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

if [ -n "${SVC_BIN:-}" ]; then cp "$SVC_BIN" "$work/svc"; else (cd "$SVC_SRC" && go build -o "$work/svc" ./cmd/svc); fi
go build -o "$work/bare" ./bench/api/bare
go build -o "$work/load" ./bench/real/load
cp configs/application.toml "$work/application.toml"

export SVC_APP_PORT="$SVC_PORT" SVC_SECURITY_LOGIN_RATE_LIMIT=1000000000 SVC_API_RATE_LIMIT_MAX=1000000000
cd "$work"
echo "$PASSWORD" | ./svc --config application.toml user add bench --roles admin --password-stdin
./svc --config application.toml serve 2>"$work/svc.log" >/dev/null &
svc_pid=$!
pids+=("$svc_pid")
./bare -addr "127.0.0.1:$BARE_PORT" &
pids+=("$!")
SVC_APP_PORT="$METRICS_PORT" SVC_METRICS_ENABLED=true SVC_ADMIN_ADDRESS="$ADMIN_ADDRESS" \
  ./svc --config application.toml serve 2>"$work/svc-metrics.log" >/dev/null &
pids+=("$!")

. "$ROOT/bench/lib.sh"
wait_http "$SVC_PORT" || { tail -n 20 "$work/svc.log" >&2; exit 1; }
wait_http "$BARE_PORT"
wait_http "$METRICS_PORT" || { tail -n 20 "$work/svc-metrics.log" >&2; exit 1; }
url="http://127.0.0.1:$SVC_PORT"
rss() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }

login_params="{\"type\":\"password\",\"principal\":\"bench\",\"credentials\":\"$PASSWORD\"}"
./load -mode mint -url "$url" -password "$PASSWORD" -n 1 -c 1 -out "$work/token" >/dev/null
export TOKEN; TOKEN="$(head -n1 "$work/token")"
check="$(curl -sS -H 'Content-Type: application/json' -H "Authorization: Bearer $TOKEN" \
  -d '{"resource":"security/auth","action":"get_user_info","version":"v1","params":{}}' "$url/api")"
echo "svc answers: $check"
case "$check" in *'"code":0'*'"permissionTokens":["*"]'*) ;; *) echo "unexpected answer from svc" >&2; exit 1;; esac

# wrkrun PORT ACTION: one wrk run; prints its RESULT line.
wrkrun() { ACTION="$2" wrk -t2 -c64 -d"$DURATION" --latency -s "$ROOT/bench/real/api.lua" "http://127.0.0.1:$1" | grep RESULT; }
field() { sed -E "s/.*[ ]$2=([0-9.]+).*/\1/" <<<"$1"; }

idle="$(rss "$svc_pid" VmRSS)"
idle_anon="$(rss "$svc_pid" RssAnon)"
echo "load before: $(uptime)"
DURATION=2s wrkrun "$SVC_PORT" get_user_info >/dev/null # warm-up
DURATION=2s wrkrun "$BARE_PORT" get_user_info >/dev/null
DURATION=2s wrkrun "$METRICS_PORT" get_user_info >/dev/null
# ROUNDS alternating rounds of get_user_info, bare and metrics on (rotating which goes first),
# each figure the median round: one server measured while the machine is cooler than for the
# next would otherwise read as a difference between them.
declare -a r_info r_bare r_metrics
for ((round = 0; round < ROUNDS; round++)); do
  order=(info bare metrics)
  for ((k = 0; k < 3; k++)); do
    case "${order[(k + round) % 3]}" in
      info)    r_info+=("$(wrkrun "$SVC_PORT" get_user_info)") ;;
      bare)    r_bare+=("$(wrkrun "$BARE_PORT" get_user_info)") ;;
      metrics) r_metrics+=("$(wrkrun "$METRICS_PORT" get_user_info)") ;;
    esac
  done
done
# median RESULT-LINE...: the line with the median rps
median() { for l in "$@"; do echo "$(field "$l" rps) $l"; done | sort -n | awk '{a[NR]=$0} END{print a[int((NR+1)/2)]}' | cut -d' ' -f2-; }
info="$(median "${r_info[@]}")";       echo "get_user_info  $info"
bare="$(median "${r_bare[@]}")";       echo "bare           $bare"
metrics="$(median "${r_metrics[@]}")"; echo "metrics on     $metrics"
for ((round = 0; round < ROUNDS; round++)); do
  echo "  round $((round + 1)) rps: get_user_info $(field "${r_info[round]}" rps), bare $(field "${r_bare[round]}" rps), metrics on $(field "${r_metrics[round]}" rps)"
done
noauth="$(TOKEN="" wrkrun "$SVC_PORT" get_user_info)"; echo "no token (401) $noauth"
awk -v a="$(field "$info" rps)" -v b="$(field "$bare" rps)" -v p="$(field "$info" p99_ms)" \
  'BEGIN{printf "get_user_info/bare throughput %.1f %% (target ≥ 80 %%); p99 %s ms (target ≤ 20 ms)\n", 100*a/b, p}'
awk -v a="$(field "$info" rps)" -v m="$(field "$metrics" rps)" \
  'BEGIN{printf "metrics on/off throughput %.1f %% (target ≥ 97 %%)\n", 100*m/a}'
series="$(curl -s "http://$ADMIN_ADDRESS/metrics" | grep -c '^svc_api_requests_total' || true)"
echo "metrics instance exposes $series svc_api_requests_total series"

# Peak RSS per phase: VmHWM read after each phase, then reset (clear_refs 5) for the next.
peak() { local v; v="$(rss "$svc_pid" VmHWM)"; echo 5 >"/proc/$svc_pid/clear_refs" 2>/dev/null || true; echo "$v"; }
# The largest anonymous resident set (heap, stacks: what hashing allocates) while the login loads
# run, sampled every 10 ms into $work/anonpeak: VmHWM also counts the pages of the binary the
# logins map back from the page cache as they run (file-backed, shared, not what they allocate).
anon_watch() {
  local max=0 k v _
  while [ -e "/proc/$svc_pid/status" ]; do
    while read -r k v _; do
      if [ "$k" = RssAnon: ] && ((v > max)); then max=$v; echo "$max" >"$work/anonpeak"; fi
    done <"/proc/$svc_pid/status"
    sleep 0.01
  done
}
echo "$idle_anon" >"$work/anonpeak"
anon_watch &
watcher=$!
pids+=("$watcher")
peak >/dev/null # from here on, the login loads only
echo "minting $LOGOUTS tokens for logout (64 connections of logins)..."
mint="$(./load -mode mint -url "$url" -password "$PASSWORD" -n "$LOGOUTS" -c 64 -out "$work/tokens")"
peak_mint="$(peak)"
echo "login (mint)   $mint"
# logins queue for the hash slots: wrk's 2 s default timeout would count them as errors
burst="$(ACTION=login PARAMS="$login_params" TOKEN="" wrk -t2 -c64 -d"$DURATION" --timeout 30s --latency -s "$ROOT/bench/real/api.lua" "$url" | grep RESULT)"
peak_burst="$(peak)"
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
peak_anon="$(cat "$work/anonpeak")"
echo "login burst    $burst"
logout="$(./load -mode logout -url "$url" -tokens "$work/tokens" -c 64)"
peak_logout="$(peak)"
echo "logout         $logout"

awk -v i="$idle" -v m="$peak_mint" -v l="$peak_logout" -v b="$peak_burst" -v ia="$idle_anon" -v pa="$peak_anon" 'BEGIN{
  p = (m > b) ? m : b
  printf "server RSS idle %.0f MiB; peak during the logins that mint %.0f MiB, the logouts %.0f MiB, the login burst %.0f MiB\n", i/1024, m/1024, l/1024, b/1024
  printf "login loads: peak %.0f MiB = idle +%.0f MiB (target <= +100 MiB)\n", p/1024, (p-i)/1024
  printf "login loads, anonymous: peak %.0f MiB = idle +%.0f MiB (target <= +40 MiB)\n", pa/1024, (pa-ia)/1024}'
echo "load after: $(uptime)"
