#!/usr/bin/env bash
# bench/sandbox/run.sh — issue #42's memory bounds of the script sandbox, checked on the shipped
# binary: `svc serve` of the shipped configuration (integration module on) with
# svc.integration.script.memory_limit = LIMIT_MIB, hostile scripts sent through the real /api
# operation integration/ops dry_run as the admin, while a sampler reads every 50 ms the server's
# Anonymous memory (/proc/PID/smaps_rollup) and its worker processes' (children of the server)
# Anonymous and RSS.
#
#   bench/sandbox/run.sh                               # 128 MiB limit, 3 s run_timeout
#   LIMIT_MIB=64 TIMEOUT_S=5 bench/sandbox/run.sh
#   SVC_BIN=/tmp/svc bench/sandbox/run.sh              # another binary
#
# Per hostile case it asserts: the answer is an error (failureKind script "memory limit exceeded",
# or timeout when the construct is slower than the deadline; the endless loop: timeout) within
# run_timeout + 1 s; the server's peak Anonymous is at most idle + 64 MiB (idle
# after login, before any script); every worker's peak Anonymous is at most the limit + 8 MiB
# (RLIMIT_DATA covers private writable mappings; the slack is stacks) and its RSS at most the limit
# + the binary's size (its text is file-backed); a benign dry_run right after succeeds; and the
# children's CPU time does not grow over one second once the runs are answered (no worker keeps
# burning a CPU). Then, as information, the largest 'x'.repeat(n) a script still gets answered
# (doubling from 1 MiB; at least 1 MiB must fit, or the limit leaves scripts no room: at 64 MiB
# nothing of 1 MiB fits, docs/performance.md). Prints one row per case and exits 1 on any violation.
# The sampler misses a worker that dies within one 50 ms interval: the worker columns are lower
# bounds of its peak; the RLIMIT_DATA of the worker is the bound, the server's columns the check.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
LIMIT_MIB="${LIMIT_MIB:-128}"
TIMEOUT_S="${TIMEOUT_S:-3}"
PORT="${PORT:-$((20000 + RANDOM % 40000))}"
PASSWORD="bench-Password-1"
. "$ROOT/bench/lib.sh"

scratch_dir

if [ -n "${SVC_BIN:-}" ]; then cp "$SVC_BIN" "$work/svc"; else go build -o "$work/svc" ./cmd/svc; fi
cp configs/application.toml "$work/application.toml"
cd "$work"
export SVC_SECURITY_LOGIN_RATE_LIMIT=1000000 SVC_API_RATE_LIMIT_MAX=1000000
echo "$PASSWORD" | ./svc --config application.toml user add bench --roles admin --password-stdin >/dev/null
SVC_APP_PORT="$PORT" SVC_INTEGRATION_SCRIPT_MEMORY_LIMIT="${LIMIT_MIB}MiB" SVC_INTEGRATION_RUN_TIMEOUT="${TIMEOUT_S}s" \
  ./svc --config application.toml serve 2>"$work/serve.log" >/dev/null &
srv=$!
pids+=("$srv")
wait_http "$PORT"

# api RESOURCE ACTION PARAMS: the /api answer's body.
api() {
  curl -s -X POST "http://127.0.0.1:$PORT/api" -H 'Content-Type: application/json' ${TOKEN:+-H "Authorization: Bearer $TOKEN"} \
    --data-binary "{\"resource\":\"$1\",\"action\":\"$2\",\"version\":\"v1\",\"params\":$3}"
}
# js EXPR: EXPR evaluated over the JSON document on stdin as d (python3).
js() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
TOKEN=""
TOKEN="$(api security/auth login "{\"type\":\"password\",\"principal\":\"bench\",\"credentials\":\"$PASSWORD\"}" | js "d['data']['tokens']['accessToken']")"
for r in "integration/system {\"code\":\"S\",\"name\":\"sandbox\",\"baseUrl\":\"http://127.0.0.1:9\"}" \
  "integration/contract {\"code\":\"S.op\",\"name\":\"sandbox\"}"; do
  [ "$(api "${r%% *}" create "${r#* }" | js "d['code']")" = 0 ] || { echo "create ${r%% *} failed" >&2; exit 1; }
done

kib() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/smaps_rollup"; }
idle_anon="$(kib "$srv" Anonymous)"
idle_pss="$(kib "$srv" Pss)"
bin_kib="$(($(stat -c %s ./svc) / 1024))"

# The sampler: every 50 ms the server's Anonymous and each child's Anonymous and RSS; on SIGTERM
# it writes "server_anon_max worker_anon_max worker_rss_max samples" (KiB) to its file.
# shellcheck disable=SC2016
sampler='
import glob, signal, sys, time
pid, out = sys.argv[1], sys.argv[2]
def rollup(p):
    r = {}
    try:
        for line in open("/proc/%s/smaps_rollup" % p):
            f = line.split()
            if len(f) == 3 and f[2] == "kB":
                r[f[0].rstrip(":")] = int(f[1])
    except OSError:
        pass
    return r
def children():
    c = []
    for f in glob.glob("/proc/%s/task/*/children" % pid):
        try:
            c += open(f).read().split()
        except OSError:
            pass
    return c
m = [0, 0, 0, 0]
def done(*_):
    open(out, "w").write(" ".join(map(str, m)) + "\n")
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
open(out + ".ready", "w").close()
while True:
    m[0] = max(m[0], rollup(pid).get("Anonymous", 0))
    for c in children():
        r = rollup(c)
        m[1] = max(m[1], r.get("Anonymous", 0))
        m[2] = max(m[2], r.get("Rss", 0))
    m[3] += 1
    time.sleep(0.05)
'
# children_cpu: the summed utime + stime (ticks) of the server's children.
children_cpu() {
  local t=0 c
  for c in $(cat /proc/"$srv"/task/*/children 2>/dev/null); do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$c/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}

benign='{"systemCode":"S","contractCode":"S.op","script":"return {ok: 1 + 1}"}'
fail=0
violation() { echo "VIOLATION: $*" >&2; fail=1; }
# A first benign run starts the worker pool (concurrency + 1 workers).
[ "$(api integration/ops dry_run "$benign" | js "json.dumps(d['data']['output'])")" = '{"ok": 2}' ] || violation "first benign dry_run"
sleep 1

cases=(
  "concat-double|let s = 'x'; for (;;) s += s"
  "template-double|let s = 'x'; for (;;) s = \`\${s}\${s}\`"
  "repeat-2^28|return 'x'.repeat(2 ** 28).length"
  "array-join-1e9|return Array(1e9).join('x').length"
  "stringify-grow|let o = ['x'.repeat(1024)]; for (;;) { o = [o, o]; JSON.stringify(o) }"
  "slow-push|const a = []; for (;;) { a.push('x'.repeat(1 << 16) + a.length); const t = Date.now(); while (Date.now() - t < 1) {} }"
  "infinite-loop|for (;;) {}"
)
tck="$(getconf CLK_TCK)"
printf '%-16s %-66s %10s %22s %17s %16s %s\n' case answer elapsed_ms server_peak_anon_over_idle worker_peak_anon worker_peak_rss cpu_after_ms
rows=()
for c in "${cases[@]}"; do
  name="${c%%|*}"
  script="${c#*|}"
  params="$(python3 -c 'import json,sys; print(json.dumps({"systemCode":"S","contractCode":"S.op","script":sys.argv[1]}))' "$script")"
  python3 -c "$sampler" "$srv" "$work/peak" &
  sp=$!
  until [ -e "$work/peak.ready" ]; do sleep 0.02; done
  rm -f "$work/peak.ready"
  t0="$(date +%s%N)"
  ans="$(api integration/ops dry_run "$params")"
  t1="$(date +%s%N)"
  kill -TERM "$sp"; wait "$sp" || true
  read -r s_anon w_anon w_rss _ <"$work/peak"
  ms=$(((t1 - t0) / 1000000))
  answer="$(js "'%s %s: %s' % (d['code'], (d.get('data') or {}).get('failureKind', ''), ((d.get('data') or {}).get('error') or d.get('message', ''))[:52].strip())" <<<"$ans")"
  kind="$(js "(d.get('data') or {}).get('failureKind', '')" <<<"$ans")"
  # The benign run after it; then no child burns CPU over one second.
  [ "$(api integration/ops dry_run "$benign" | js "json.dumps(d['data']['output'])")" = '{"ok": 2}' ] || violation "$name: benign dry_run after it failed"
  sleep 0.5
  c0="$(children_cpu)"; sleep 1; c1="$(children_cpu)"
  cpu_ms=$(((c1 - c0) * 1000 / tck))
  over=$(((s_anon - idle_anon) / 1024))
  printf '%-16s %-66s %10d %22d %17d %16d %d\n' "$name" "$answer" "$ms" "$over" "$((w_anon / 1024))" "$((w_rss / 1024))" "$cpu_ms"
  rows+=("| \`$name\` | $answer | $ms | $over | $((w_anon / 1024)) | $((w_rss / 1024)) | $cpu_ms |")
  case "$name" in
    infinite-loop) [ "$kind" = timeout ] || violation "$name: answer $answer, want timeout" ;;
    *) [[ "$kind" = timeout || ("$kind" = script && "$ans" == *"memory limit"*) ]] || violation "$name: answer $answer, want script/memory limit exceeded or timeout" ;;
  esac
  [ "$ms" -le $((TIMEOUT_S * 1000 + 1000)) ] || violation "$name: answered after $ms ms (run_timeout ${TIMEOUT_S}s + 1 s)"
  [ "$s_anon" -le $((idle_anon + 64 * 1024)) ] || violation "$name: server Anonymous peak $((s_anon / 1024)) MiB over idle $((idle_anon / 1024)) MiB + 64 MiB"
  [ "$w_anon" -le $(((LIMIT_MIB + 8) * 1024)) ] || violation "$name: worker Anonymous peak $((w_anon / 1024)) MiB over the limit + 8 MiB"
  [ "$w_rss" -le $((LIMIT_MIB * 1024 + bin_kib)) ] || violation "$name: worker RSS peak $((w_rss / 1024)) MiB over the limit + the binary's $((bin_kib / 1024)) MiB"
  [ "$cpu_ms" -le 100 ] || violation "$name: the children used $cpu_ms ms of CPU over one second after the answers"
done
# Information: the largest string a script holds under the limit ('x'.repeat(MiB), doubling).
fits=0
for m in 1 2 4 8 16 32 64 128; do
  p="{\"systemCode\":\"S\",\"contractCode\":\"S.op\",\"script\":\"return 'x'.repeat($m * 1048576).length\"}"
  [ "$(api integration/ops dry_run "$p" | js "json.dumps(d['data']['output'])")" = "$((m * 1048576))" ] || break
  fits=$m
done
echo "largest 'x'.repeat(n) answered under the ${LIMIT_MIB} MiB limit: ${fits} MiB (doubling from 1 MiB)"
[ "$fits" -ge 1 ] || violation "a 1 MiB string does not fit under the limit"
echo "idle after login: server Anonymous $((idle_anon / 1024)) MiB, Pss $((idle_pss / 1024)) MiB; after the runs: Anonymous $(($(kib "$srv" Anonymous) / 1024)) MiB, Pss $(($(kib "$srv" Pss) / 1024)) MiB; limit ${LIMIT_MIB} MiB, run_timeout ${TIMEOUT_S}s; load: $(uptime | sed 's/.*load/load/')"
echo
echo '| case | answer (code kind: error) | elapsed ms | server peak Anonymous over idle, MiB | worker peak Anonymous, MiB | worker peak RSS, MiB | children CPU over 1 s after, ms |'
echo '|---|---|---|---|---|---|---|'
printf '%s\n' "${rows[@]}"
if [ "$fail" != 0 ]; then echo "FAIL" >&2; exit 1; fi
echo "RESULT sandbox=ok"
