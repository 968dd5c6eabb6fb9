#!/usr/bin/env bash
# bench/run.sh — every figure the docs claim, in one run, on the shipped binary, each beside its
# reference measured in the same run, written as one table into docs/performance.md.
#
#   bench/run.sh                 # quick mode: short windows, SQLite (about 5 minutes on 2 idle cores,
#                                # half of it the cold build of the coldbuild measure)
#   bench/run.sh full            # every script at its own defaults, PostgreSQL and MariaDB too
#   bench/run.sh quick real mcp  # some measures only: the table is printed, docs are not touched
#   eval "$(scripts/services.sh)"; bench/run.sh full    # the database and S3 servers for full
#
# It builds the shipped binary once (go build -o .cache/bin/svc ./cmd/svc) and the bare net/http
# handler of bench/api/bare, then runs the measures of MEASURES below in order; each one runs an
# existing script or benchmark of bench/ (those scripts stay the way to run one figure alone),
# keeps its output in .cache/bench/<measure>.log and adds rows to the table. The table (date,
# machine, each figure, its reference, their ratio and the target) replaces the part of
# docs/performance.md between the bench-table markers when every measure ran.
#
# A measure is a shell function measure_<name> that runs something and calls
#   row "<figure>" "<svc value>" "<reference and its value>" "<ratio>" "<target>"
# for each table row; add its name to MEASURES (see bench/README.md).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
MODE="${1:-quick}"
case "$MODE" in quick | full) shift || true ;; *) echo "usage: $0 [quick|full] [measure...]" >&2; exit 2 ;; esac

# The measures, in the order they run.
MEASURES=(startup binsize coldbuild real memory logout approval upload event cron integration push mcp mcpquery)
selected=("$@")
[ ${#selected[@]} -gt 0 ] || selected=("${MEASURES[@]}")

LOGS="$ROOT/.cache/bench"
BIN="$ROOT/.cache/bin"
mkdir -p "$LOGS" "$BIN"
rows="$LOGS/rows.md"
: >"$rows"
export SVC_BIN="$BIN/svc"

quick() { [ "$MODE" = quick ]; }
# row FIGURE VALUE REFERENCE RATIO TARGET
row() { printf '| %s | %s | %s | %s | %s |\n' "$@" | tee -a "$rows"; }
# field LINE KEY: the number after KEY= in a RESULT line.
field() { sed -E "s/.*(^|[ ])$2=(-?[0-9.]+).*/\2/" <<<"$1"; }
# ratio A B [DIGITS]: A/B.
ratio() { awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN{ if (b > 0) printf "%.*f", d, a / b; else printf "—" }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.0f %%", 100 * a / b; else printf "—" }'; }
# log NAME CMD...: runs CMD, its output to the terminal and .cache/bench/NAME.log.
log() { local n="$1"; shift; "$@" 2>&1 | tee "$LOGS/$n.log"; }

measure_startup() {
  go build -o "$BIN/startup" ./bench/startup
  log startup "$BIN/startup" -bin "$SVC_BIN" -bare "$BIN/bare" -rounds "$(quick && echo 5 || echo 9)"
  local s m e
  s="$(grep 'RESULT startup_fresh' "$LOGS/startup.log")"
  m="$(grep 'RESULT rss_' "$LOGS/startup.log")"
  row "start-up, existing database → first get_user_info (code 0)" "$(field "$s" startup_existing_ms) ms" \
    "bare net/http process → first answer $(field "$s" startup_bare_ms) ms" "$(ratio "$(field "$s" startup_existing_ms)" "$(field "$s" startup_bare_ms)" 1)×" "≤ 50 ms"
  row "start-up, fresh database (secret, every module's migrations) → /readyz 200" "$(field "$s" startup_fresh_ms) ms" \
    "bare $(field "$s" startup_bare_ms) ms" "$(ratio "$(field "$s" startup_fresh_ms)" "$(field "$s" startup_bare_ms)" 1)×" "≤ 250 ms"
  e="$(grep 'RESULT startup_login_ms' "$LOGS/startup.log")"
  row "information: what the start costs — svc process at its first answer (minor page faults, CPU)" \
    "$(field "$e" startup_faults) faults, $(field "$e" startup_cpu_ms) ms CPU" \
    "bare $(field "$e" bare_faults) faults, $(field "$e" bare_cpu_ms) ms CPU" "—" "— (slow page faults slow every start)"
  row "information: start-up with a cold page cache / polled every 10 ms" \
    "$(field "$e" startup_cold_ms) / $(field "$e" startup_coarse_ms) ms" \
    "bare $(field "$e" bare_cold_ms) / $(field "$e" bare_coarse_ms) ms" "—" "—"
  row "information: start-up for a client without a token (password login, then get_user_info)" \
    "$(field "$e" startup_login_ms) ms" "the same login on a running server $(field "$e" login_running_ms) ms" "—" "—"
  row "information: idle RSS with file-backed pages (anonymous + file-backed)" \
    "$(field "$m" rss_mib) MiB ($(field "$m" anon_mib) + $(field "$m" file_mib)); after 5 000 get_user_info $(field "$m" load_rss_mib) MiB (file-backed $(field "$m" load_file_mib))" \
    "binary on disk $(field "$m" binary_mib) MiB" "—" "— (page cache, shared)"
}

# measure_memory: bench/memory (issue #43): the memory the process holds — anonymous resident
# memory and PSS from /proc/PID/smaps_rollup — idle, after 5 000 calls, at the peak of a
# 64-connection login burst, after the revoked families, and over the mixed load.
measure_memory() {
  go build -o "$BIN/mint" ./bench/logout/mint
  go build -o "$BIN/memory" ./bench/memory
  if quick; then
    log memory "$BIN/memory" -bin "$SVC_BIN" -bare "$BIN/bare" -mint "$BIN/mint" -families 20000 -mixed 1m -every 10s
  else
    log memory "$BIN/memory" -bin "$SVC_BIN" -bare "$BIN/bare" -mint "$BIN/mint" -families 100000 -mixed 10m -every 30s
  fi
  local f="$LOGS/memory.log" i c r x
  i="$(grep 'RESULT idle_' "$f")"
  c="$(grep 'RESULT calls_' "$f")"
  r="$(grep 'RESULT families=' "$f")"
  x="$(grep 'RESULT mixed_' "$f")"
  row "memory idle: anonymous, PSS" "$(field "$i" idle_anon_mib) MiB, PSS $(field "$i" idle_pss_mib) MiB" \
    "bare net/http $(field "$i" bare_anon_mib) MiB, PSS $(field "$i" bare_pss_mib) MiB" "—" "—"
  row "memory after 5 000 get_user_info: anonymous, PSS" "$(field "$c" calls_anon_mib) MiB, PSS $(field "$c" calls_pss_mib) MiB" \
    "the original 17.8 MiB" "$(ratio "$(field "$c" calls_anon_mib)" 17.8)×" "≤ 16 MiB anonymous"
  row "memory at the peak of a 64-connection login burst: anonymous, PSS" \
    "$(field "$c" burst_anon_mib) MiB (idle +$(awk -v a="$(field "$c" burst_anon_mib)" -v b="$(field "$i" idle_anon_mib)" 'BEGIN{printf "%.1f", a-b}')), PSS $(field "$c" burst_pss_mib) MiB" \
    "idle $(field "$i" idle_anon_mib) MiB" "—" "≤ idle + 40 MiB"
  row "memory after $(field "$r" families) revoked families: anonymous, PSS" \
    "$(field "$r" revoked_anon_mib) MiB, PSS $(field "$r" revoked_pss_mib) MiB ($(field "$r" anon_b_per_family) B per family of process growth, the collector's headroom included)" \
    "before the logouts" "—" "≤ 64 B per family at 10⁶ (TestRevokedSetBytesPerFamily)"
  row "memory over $(field "$x" mixed_s) s of mixed load ($(field "$x" mixed_iterations) sessions: login, 40 calls, refresh, logout; an upload every 10th; a cron fire a second)" \
    "anonymous $(field "$x" mixed_first_anon_mib) → $(field "$x" mixed_last_anon_mib) MiB (max $(field "$x" mixed_max_anon_mib)), PSS $(field "$x" mixed_first_pss_mib) → $(field "$x" mixed_last_pss_mib) MiB" \
    "first sample" "$(field "$x" mixed_drift_pct) %" "flat, ± 10 %"
}

measure_binsize() {
  log binsize go run ./bench/binsize -top 25 "$SVC_BIN"
}

# coldbuild: the first `go run ./cmd/svc serve` on a fresh machine compiles every package; its CPU
# (not wall: the machine is shared) must not grow; its ratio to the bare handler's cold build in
# the same run moves least with the load. 220-270 s of CPU in either mode.
measure_coldbuild() {
  log coldbuild go run ./bench/coldbuild -top 12
  local r
  r="$(grep '^RESULT ' "$LOGS/coldbuild.log")"
  row "cold build of ./cmd/svc, empty GOCACHE (CPU, user + system; packages compiled)" \
    "$(field "$r" cpu_s) s CPU, $(field "$r" packages) packages ($(field "$r" wall_s) s wall)" \
    "bench/api/bare (standard library only) $(field "$r" ref_cpu_s) s, $(field "$r" ref_packages) packages" \
    "$(ratio "$(field "$r" cpu_s)" "$(field "$r" ref_cpu_s)" 1)×" "does not grow: ≤ 9× the bare build (8.1× on 2026-12-06)"
}

measure_real() {
  if quick; then
    log real env DURATION=2s ROUNDS=3 LOGOUTS=300 bench/real/run.sh
  else
    log real bench/real/run.sh
  fi
  local f="$LOGS/real.log" info bare metrics burst anon
  info="$(grep '^get_user_info ' "$f")"
  bare="$(grep '^bare ' "$f")"
  metrics="$(grep '^metrics on ' "$f")"
  burst="$(grep '^login loads:' "$f")"
  BARE_RPS="$(field "$bare" rps)"
  row "/api get_user_info, real token, wrk -c64 (req/s, p99)" "$(field "$info" rps) req/s, p99 $(field "$info" p99_ms) ms" \
    "bare net/http $BARE_RPS req/s, p99 $(field "$bare" p99_ms) ms" \
    "$(pct "$(field "$info" rps)" "$BARE_RPS"), p99 $(ratio "$(field "$info" p99_ms)" "$(field "$bare" p99_ms)")×" "≥ 90 %, p99 ≤ 1.2× bare's"
  row "/api get_user_info with metrics on" "$(field "$metrics" rps) req/s" "metrics off $(field "$info" rps) req/s" \
    "$(pct "$(field "$metrics" rps)" "$(field "$info" rps)")" "≥ 97 %"
  anon="$(grep '^login loads, anonymous:' "$f")"
  row "login burst, 64 connections: peak anonymous RSS over idle (heap and stacks)" \
    "$(sed -E 's/.*= idle \+([0-9]+) MiB.*/+\1 MiB/' <<<"$anon") (whole RSS $(sed -E 's/.*= idle \+([0-9]+) MiB.*/+\1 MiB/' <<<"$burst"), file pages included)" \
    "idle" "—" "≤ +40 MiB"
}

# measure_logout: bench/logout (issues #34, #43): logouts of tokens each used once before
# (revoked and group-committed), the flow users run, beside get_user_info's CPU in the same
# round and the bare handler, driven by the same load tool in alternating rounds, the median
# round; then what revocations cost in memory.
measure_logout() {
  if quick; then
    log logout env LOGOUTS=15000 ROUNDS=3 BURST=0 bench/logout/run.sh
  else
    log logout env ROUNDS=5 MEMORY=1000000 bench/logout/run.sh
  fi
  local f="$LOGS/logout.log" line n rps bare cpu bcpu p99 icpu
  # "logout req/s (c=64)  SVC  BARE (bare)  R %", "logout p50 / p99 ms  P50 / P99  ...",
  # "logout server CPU µs/req  SVC  BARE (bare)  -"
  line="$(grep -m1 '^logout req/s' "$f")"
  rps="$(awk '{print $4}' <<<"$line")"
  bare="$(awk '{print $5}' <<<"$line")"
  line="$(grep -m1 '^logout server CPU' "$f")"
  cpu="$(awk '{print $5}' <<<"$line")"
  bcpu="$(awk '{print $6}' <<<"$line")"
  p99="$(grep -m1 '^logout p50 / p99' "$f" | awk '{print $8}')"
  line="$(grep -m1 '^get_user_info server CPU' "$f")"
  icpu="$(awk '{print $5}' <<<"$line")"
  row "logout of a token used once (revoked, group commit), c=64" "$rps req/s, p99 $p99 ms, $cpu µs CPU each" \
    "get_user_info $icpu µs CPU (same run, same load tool); bare net/http $bare req/s, $bcpu µs CPU" "$(ratio "$cpu" "$icpu")× get_user_info's CPU" \
    "≤ 1.6× get_user_info's CPU"
  # "RSS after N logouts MiB  AFTER (+GROWTH)  peak P" and, with MEMORY,
  # "RSS idle -> after MiB  IDLE -> AFTER (+GROWTH)  peak P (+G)".
  line="$(grep -m1 '^RSS after ' "$f")"
  n="$(sed -E 's/^RSS after ([0-9]+) logouts.*/\1/' <<<"$line")"
  row "revocations: RSS growth after $n logouts" "$(sed -E 's/^[^(]*\(\+([0-9]+)\).*/+\1 MiB/' <<<"$line")" \
    "RSS before the logouts" "—" "≤ 64 B per revoked family (TestRevokedSetBytesPerFamily)"
  if ! quick; then
    line="$(grep -m1 '^RSS idle -> after' "$f")"
    row "revocations: RSS growth after 1 000 000 logouts" "$(sed -E 's/^[^(]*\(\+([0-9]+)\).*/+\1 MiB/' <<<"$line")" \
      "idle" "—" "≤ idle + 100 MiB"
  fi
}

measure_approval() {
  if quick; then
    log approval env DBS=sqlite C=8 D=5s bench/approval/run.sh
  else
    log approval bench/approval/run.sh
  fi
  local db line bare target
  for db in sqlite postgres mariadb; do
    line="$(grep "^$db: approval" "$LOGS/approval.log" || true)"
    [ -n "$line" ] || continue
    bare="$(grep "^$db: bare" "$LOGS/approval.log")"
    case $db in sqlite) target="≥ 150/s" ;; postgres) target="≥ 300/s" ;; *) target="—" ;; esac
    row "approval start → approve → end, $db (instances/s, 3 /api calls each)" \
      "$(field "$line" instances_per_s)/s, p99 $(field "$line" p99_ms) ms" "bare net/http $(field "$bare" rps) req/s" \
      "—" "$target"
  done
}

measure_upload() {
  if quick; then
    log upload env RUNS=1 SIZE=64 bench/upload/run.sh filesystem
  else
    log upload bench/upload/run.sh
  fi
  local up cp rss
  up="$(grep -m1 '^upload  ' "$LOGS/upload.log" | sed -E 's/.*\(([0-9]+) MiB\/s\).*/\1/')"
  cp="$(grep -m1 '^cp  ' "$LOGS/upload.log" | sed -E 's/.*\(([0-9]+) MiB\/s\).*/\1/')"
  rss="$(grep -m1 '^server RSS' "$LOGS/upload.log" | sed -E 's/.*peak - idle ([0-9.]+) MiB.*/\1/')"
  row "upload to the filesystem provider, $(quick && echo 64 || echo 256) MiB" "$up MiB/s, RSS peak − idle $rss MiB" "cp on the same disk $cp MiB/s" \
    "$(pct "$up" "$cp")" "≥ 40 % of cp, ≤ +64 MiB"
}

measure_event() {
  log event-memory bash -c 'cd bench/event/watermill && go run . -n '"$(quick && echo 300000 || echo 1000000)"
  local svc wm
  svc="$(grep '^svc memory' "$LOGS/event-memory.log" | awk '{print $(NF-1)}')"
  wm="$(grep '^watermill' "$LOGS/event-memory.log" | awk '{print $(NF-1)}')"
  row "event bus, memory transport (publish → handler)" "$svc events/s" "Watermill gochannel $wm events/s" "$(ratio "$svc" "$wm")×" "≥ 1×"
  if quick; then
    log event-outbox env DB=SQLite ROUNDS=1 BENCHTIME=3000x sh bench/event/ratio.sh
  else
    log event-outbox env DB=SQLite ROUNDS=3 sh bench/event/ratio.sh
  fi
  outbox_row SQLite
  if ! quick && [ -n "${SVC_TEST_POSTGRES_DSN:-}" ]; then
    log event-outbox sh bench/event/ratio.sh
    outbox_row PostgreSQL
  fi
}

# outbox_row DB: the row of the last bench/event/ratio.sh run.
outbox_row() {
  local m
  m="$(grep '^median:' "$LOGS/event-outbox.log")"
  local ev ce p99
  ev="$(sed -E 's/.*outbox ([0-9]+) events.*/\1/' <<<"$m")"
  ce="$(sed -E 's/.*ceiling ([0-9]+) commits.*/\1/' <<<"$m")"
  p99="$(sed -E 's/.*p99 ([0-9.]+) ms.*/\1/' <<<"$m")"
  row "outbox on $1, one event per transaction, 16 publishers" "$ev events/s, p99 $p99 ms" "$1's single-row commit ceiling $ce commits/s" \
    "$(pct "$ev" "$ce")" "delivery at commit (no poll wait)"
}

measure_cron() {
  if quick; then
    log cron env RUNS="sqlite:1:300" WARMUP=2s MEASURE=6s bench/cron/run.sh
  else
    log cron bench/cron/run.sh
  fi
  local line db nodes
  while read -r line; do
    db="$(sed -E 's/^db=([a-z]+) .*/\1/' <<<"$line")"
    nodes="$(sed -E 's/.* nodes=([0-9]+) .*/\1/' <<<"$line")"
    read -r res
    row "cron fires, $db, $nodes node(s)" "$(sed -E 's/^fires\/s=([0-9]+).* p99=([^ ]+) .*/\1 fires\/s, lag p99 \2/' <<<"$res")" \
      "offered $(sed -E 's/.*\(offered ([0-9]+) fires\/s\).*/\1/' <<<"$line") fires/s" "—" \
      "$([ "$db" = sqlite ] && echo "≥ 200/s" || echo "≥ 1 000/s"), lag p99 ≤ 1 s"
  done < <(grep -A1 '^db=' "$LOGS/cron.log" | grep -v '^--$')
}

measure_integration() {
  if quick; then
    log integration env CONC=16 D=3s WARMUP=2s DBS=sqlite bench/integration/run.sh
  else
    log integration bench/integration/run.sh
  fi
  local line mode target
  while read -r line; do
    mode="${line%% *}"
    [ "$mode" = inbound ] && target="≥ 2 000/s, p99 ≤ 50 ms" || target="≥ 1 500/s"
    row "integration $(sed -E 's/^([a-z]+) db=([a-z]+) c=([0-9]+).*/\1, \2, c=\3/' <<<"$line")" \
      "$(sed -E 's/.*ok \(([0-9]+)\/s\).* p99=([^ ]+) .*/\1\/s, p99 \2/' <<<"$line")" \
      "bare net/http ${BARE_RPS:-—} req/s" "$(pct "$(sed -E 's/.*ok \(([0-9]+)\/s\).*/\1/' <<<"$line")" "${BARE_RPS:-0}")" "$target"
  done < <(grep -E '^(inbound|outbound) db=' "$LOGS/integration.log")
}

measure_push() {
  local n rate secs bcasts
  if quick; then n=2000 rate=20000 secs=3 bcasts=5; else n=10000 rate=50000 secs=10 bcasts=20; fi
  log push env N=$n RATE=$rate DURATION=$secs BROADCASTS=$bcasts bench/push/run.sh
  # The peer: centrifugal/centrifuge with the same connections and rates (its own go.mod).
  (cd bench/peers/centrifuge && go build -o "$BIN/centrifuge-peer" .)
  log push-centrifuge "$BIN/centrifuge-peer" -n $n -rate $rate -seconds $secs -broadcasts $bcasts
  local f="$LOGS/push.log" p="$LOGS/push-centrifuge.log"
  mem() { grep '^memory per idle connection' "$1" | sed -E 's/.*heap\+stack ([0-9.]+) KiB.*RSS ([0-9.]+) KiB/\1 KiB (RSS \2 KiB)/'; }
  p99() { grep '^broadcast to' "$1" | sed -E 's/.* p99 ([^,]+),.*µs per delivery\)/p99 \1/; s/.* p99 ([^,]+),.*/p99 \1/'; }
  cpu() { grep '^broadcast to' "$1" | sed -E 's/.*\(([0-9.]+) µs per delivery\).*/\1/'; }
  rate() { grep '^single users' "$1" | sed -E 's/.* = ([0-9]+) msgs\/s.*/\1/'; }
  row "push: memory per idle WebSocket connection" "$(mem "$f")" "centrifuge $(mem "$p")" "—" "≤ 16 KiB"
  row "push: broadcast to $n connections" "$(p99 "$f"), $(cpu "$f") µs CPU per delivery" \
    "centrifuge $(p99 "$p"), $(cpu "$p") µs" "$(ratio "$(cpu "$f")" "$(cpu "$p")") (CPU)" "p99 ≤ 250 ms"
  row "push: single users, $rate/s offered" "$(rate "$f") msgs/s, $(grep '^single users' "$f" | sed -E 's/.*dropped ([0-9]+).*/\1/') dropped" \
    "centrifuge $(rate "$p") msgs/s" "$(ratio "$(rate "$f")" "$(rate "$p")")" "50 000/s, none dropped"
}

measure_mcp() {
  # one test binary, the two benchmarks in alternating rounds (the machine's load moves between
  # rounds more than between the two calls of one round), the median of each
  go test -c -o "$BIN/mcp.test" ./mcp/
  local r n
  n="$(quick && echo 5 || echo 9)"
  : >"$LOGS/mcp.log"
  for ((r = 0; r < n; r++)); do
    (cd mcp && "$BIN/mcp.test" -test.run '^$' -test.bench 'APICall$|ToolsCall$' -test.benchtime "$(quick && echo 10000x || echo 20000x)") | tee -a "$LOGS/mcp.log"
  done
  local api tools
  api="$(grep '^BenchmarkAPICall' "$LOGS/mcp.log" | awk '{for (k = 1; k < NF; k++) if ($(k+1) == "cpu-ns/op") print $k}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')"
  tools="$(grep '^BenchmarkToolsCall' "$LOGS/mcp.log" | awk '{for (k = 1; k < NF; k++) if ($(k+1) == "cpu-ns/op") print $k}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')"
  row "MCP tools/call of an operation tool (CPU per call, in process)" "$(awk -v n="$tools" 'BEGIN{printf "%.1f µs", n/1000}')" \
    "the same call on /api $(awk -v n="$api" 'BEGIN{printf "%.1f µs", n/1000}')" "$(ratio "$tools" "$api" 1)×" "≤ 2×"
}

# measure_mcpquery: bench/mcpquery (issue #42 item 3): database_query's hostile answers and two
# answers just under the cap on the shipped binary, the peak RSS over idle and the slowest call.
measure_mcpquery() {
  log mcpquery go run ./bench/mcpquery -bin "$SVC_BIN" -rounds "$(quick && echo 3 || echo 10)"
  local m
  m="$(grep 'RESULT idle_rss_mib' "$LOGS/mcpquery.log")"
  row "MCP database_query, issue #42's answers (100–300 MB encoded) and two just under the 4 MiB cap: peak RSS over idle, slowest call" \
    "+$(field "$m" peak_over_idle_mib) MiB, $(field "$m" slowest_ms) ms" "idle $(field "$m" idle_rss_mib) MiB" "—" "≤ +64 MiB, ≤ 13 s"
}

started=$(date +%s)
echo "bench/run.sh $MODE: ${selected[*]}"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
go build -o "$SVC_BIN" ./cmd/svc
go build -o "$BIN/bare" ./bench/api/bare
for m in "${selected[@]}"; do
  echo "== $m"
  t0=$(date +%s)
  "measure_$m"
  echo "== $m: $(($(date +%s) - t0)) s"
done
wall=$(($(date +%s) - started))
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

table="$LOGS/table.md"
{
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') by \`bench/run.sh $MODE\` in $wall s on $(nproc) cores" \
    "($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go env GOVERSION), load average" \
    "after the run $load_after; the machine is shared, so absolute figures move with its load while the" \
    "ratios to the reference measured in the same run move much less)."
  echo
  echo "| figure | svc (shipped binary unless noted) | reference, same run | ratio | target |"
  echo "|---|---|---|---|---|"
  cat "$rows"
} >"$table"
echo
cat "$table"
echo
echo "wall time: $wall s ($MODE)"
if [ $# -eq 0 ]; then
  doc=docs/performance.md
  begin='<!-- bench-table:begin (written by bench/run.sh; do not edit by hand) -->'
  end='<!-- bench-table:end -->'
  grep -qF "$begin" "$doc" || { echo "$doc has no bench-table markers" >&2; exit 1; }
  awk -v b="$begin" -v e="$end" -v t="$table" '
    $0 == b { print; while ((getline l < t) > 0) print l; skip = 1; next }
    $0 == e { skip = 0 }
    !skip' "$doc" >"$doc.tmp"
  mv "$doc.tmp" "$doc"
  echo "table written into $doc"
fi
