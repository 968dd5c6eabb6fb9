#!/usr/bin/env bash
# bench/instr/run.sh — instructions per request of the bare net/http handler, get_user_info and
# logout on the shipped binary, counted by valgrind's callgrind (issue #43). Wall-clock rates on a
# shared machine move with the other jobs' load; an instruction count does not, so this is the
# figure to compare two builds with on a busy machine (a quiet run's req/s and CPU µs stay the
# figures users see: bench/run.sh).
#
#   bench/instr/run.sh                  # N=2000 requests per phase over C=8 connections
#   N=5000 C=16 bench/instr/run.sh
#   SVC_BIN=/tmp/svc-before bench/instr/run.sh   # count another build of cmd/svc
#   KEEP=/tmp/instr bench/instr/run.sh  # keep the callgrind dumps and the per-function
#                                       # annotations (callgrind_annotate --inclusive=yes)
#
# The flow is the one users run: `svc serve` on configs/application.toml in a scratch directory
# (SQLite, built-in user store, real tokens minted by bench/logout/mint, default logging: one
# access line per request on stderr), driven by bench/real/load from another process. The server
# runs under callgrind from its start; before each phase the counters are zeroed
# (callgrind_control -z) and after it dumped (-d), so a phase's count is every instruction the
# server process executed during the phase — every goroutine and thread, the collector and the
# runtime's background work included — divided by its requests:
#
#   bare          the bench/api/bare handler, N calls (its own process, also under callgrind)
#   get_user_info one token, N calls (the verified-token cache answers after the first)
#   first use     N fresh tokens, each calling get_user_info once (signature check, cache fill)
#   logout        the same N tokens logged out (a token used before, then logged out)
#
# The count is instructions, not time: a cache miss or a system call's kernel side costs no
# instruction here (--collect-systime=no), so a change that trades instructions for memory
# traffic must be confirmed by the CPU per request of a quiet run.
#
#   idle          IDLE seconds (default 20) of no requests: the background's rate, subtracted
#
# Output: one RESULT line per phase (instr= per request, net of the background; raw= before
# that) and the ratios the issue's targets are stated in (logout / get_user_info;
# get_user_info / bare). Valgrind runs the server about 50×
# slower: N=2000 takes a few minutes on a busy machine.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
N="${N:-2000}"
C="${C:-8}"
KEEP="${KEEP:-}"
PORT="${PORT:-$((20000 + RANDOM % 30000))}"
BARE_PORT=$((PORT + 1))
PASSWORD="bench-Password-1"
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${SVC_BIN:-}" ]; then cp "$SVC_BIN" "$work/svc"; else go build -o "$work/svc" ./cmd/svc; fi
go build -o "$work/bare" ./bench/api/bare
go build -o "$work/load" ./bench/real/load
go build -o "$work/mint" ./bench/logout/mint
cp configs/application.toml "$work/application.toml"
. "$ROOT/bench/lib.sh"
cd "$work"
echo "$PASSWORD" | ./svc --config application.toml user add bench --roles admin --password-stdin >/dev/null
./mint -config application.toml -password "$PASSWORD" -n "$N" -c 4 -out tokens.logout 2>mint.log
./mint -config application.toml -password "$PASSWORD" -n 1 -c 1 -out tokens.one 2>>mint.log
for ((i = 0; i < N; i++)); do cat tokens.one; done >tokens.info
head -n 50 tokens.info >tokens.warm

# vg NAME CMD...: run CMD under callgrind. Go's asynchronous preemption signal trips an
# assertion of callgrind 3.19 (threads.c, vgCallgrind_post_signal), so it is off for the counted
# processes: goroutines then yield at function calls only, which changes no request's work.
# Valgrind 3.19 also cannot run RDTSCP, which the runtime's cputicks uses where the CPU has it:
# cpu.rdtscp=off makes it use RDTSC.
vg() {
  GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1" --dump-instr=no \
    --collect-systime=no "${@:2}" 2>"$work/vg.$1.log" >/dev/null &
}
# phase PID NAME LOAD-ARGS...: zero the counters, run the load (or sleep, for "idle NAME
# SECONDS"), dump; prints the instructions and the phase's wall time in ms.
phase() {
  local pid="$1" name="$2" t0 t1 file
  callgrind_control -z "$pid" >/dev/null 2>&1
  t0="$(date +%s%N)"
  if [ "$3" = sleep ]; then sleep "$4"; else
    ./load "${@:3}" >"$work/load.$name" || { echo "load failed: $name" >&2; exit 1; }
  fi
  t1="$(date +%s%N)"
  callgrind_control -d "$name" "$pid" >/dev/null 2>&1
  file="$(ls -t "$work"/cg.* | grep -v '\.log$' | head -n 1)"
  cp "$file" "$work/dump.$name"
  echo "$(awk '/^(summary|totals):/ {print $2; exit}' "$work/dump.$name") $(((t1 - t0) / 1000000))"
}

SVC_APP_PORT="$PORT" SVC_SECURITY_LOGIN_RATE_LIMIT=1000000000 SVC_API_RATE_LIMIT_MAX=1000000000 \
  vg svc ./svc --config application.toml serve
svc_pid=$!
pids+=("$svc_pid")
vg bare ./bare -addr "127.0.0.1:$BARE_PORT"
bare_pid=$!
pids+=("$bare_pid")
# under valgrind a start takes tens of seconds: wait up to five minutes
wait_http "$PORT" 3000 || { tail -n 20 "$work/vg.svc.log" >&2; exit 1; }
wait_http "$BARE_PORT" 3000
url="http://127.0.0.1:$PORT"
burl="http://127.0.0.1:$BARE_PORT"
./load -mode use -url "$url" -tokens tokens.warm -c "$C" >/dev/null
./load -mode use -url "$burl" -tokens tokens.warm -c "$C" >/dev/null
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

bare="$(phase "$bare_pid" bare -mode use -url "$burl" -tokens tokens.info -c "$C")"
info="$(phase "$svc_pid" info -mode use -url "$url" -tokens tokens.info -c "$C")"
first="$(phase "$svc_pid" first -mode use -url "$url" -tokens tokens.logout -c "$C")"
logout="$(phase "$svc_pid" logout -mode logout -url "$url" -tokens tokens.logout -c "$C")"
for f in load.info load.first load.logout; do
  grep -q ' errors=0' "$f" || { echo "$f: some answers were not code 0: $(cat "$f")" >&2; exit 1; }
done
# The server's background work (the monitor's sampler, the security change feed's poll, the
# workers, the log flusher) runs by the clock, and under valgrind a phase lasts about 50 times
# longer than it would natively: its rate at idle, measured over IDLE seconds, is subtracted
# from each phase in proportion to the phase's wall time (the bare handler has none).
IDLE="${IDLE:-20}"
idle="$(phase "$svc_pid" idle sleep "$IDLE")"

# net TOTAL MS [IDLE-TOTAL IDLE-MS]: instructions per request, less the background's share.
net() {
  awk -v a="$1" -v ms="$2" -v ia="${3:-0}" -v ims="${4:-1}" -v n="$N" \
    'BEGIN {printf "%.0f", (a - ia * ms / ims) / n}'
}
raw() { awk -v a="$1" -v n="$N" 'BEGIN {printf "%.0f", a / n}'; }
read -r ia ims <<<"$idle"
echo "RESULT phase=idle seconds=$((ims / 1000)) instr_per_s=$(awk -v a="$ia" -v ms="$ims" 'BEGIN {printf "%.0f", a * 1000 / ms}')"
for p in bare info first logout; do
  read -r a ms <<<"${!p}"
  if [ "$p" = bare ]; then n="$(raw "$a")"; else n="$(net "$a" "$ms" "$ia" "$ims")"; fi
  printf -v "net_$p" '%s' "$n"
  label="${p/info/get_user_info}"
  echo "RESULT phase=${label/first/first_use} requests=$N instr=$n raw=$(raw "$a") wall_ms=$ms"
done
awk -v b="$net_bare" -v i="$net_info" -v l="$net_logout" 'BEGIN {
  printf "RESULT get_user_info/bare=%.2f logout/get_user_info=%.2f (targets: throughput >= 0.90 of bare, logout CPU <= 1.6x)\n", i / b, l / i }'

if [ -n "$KEEP" ]; then
  mkdir -p "$KEEP"
  for p in bare info first logout idle; do
    cp "dump.$p" "$KEEP/callgrind.$p"
    callgrind_annotate --inclusive=yes "dump.$p" >"$KEEP/inclusive.$p.txt" 2>/dev/null || true
    callgrind_annotate "dump.$p" >"$KEEP/self.$p.txt" 2>/dev/null || true
  done
  echo "callgrind dumps and annotations in $KEEP" >&2
fi
