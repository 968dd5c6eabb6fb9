#!/bin/sh
# Runs the cron engine benchmark (bench/cron/main.go) for the issue #16 targets:
#   PostgreSQL, three nodes: >= 1 000 fires/s sustained, fire lag p99 <= 1 s when not overloaded;
#   SQLite, one node: >= 200 fires/s.
# Needs SVC_TEST_POSTGRES_DSN (eval "$(scripts/services.sh)").
#
# Recorded 2026-11-24 01:00 UTC, 2 cores, load average 6-8 from other jobs; warm-up 5 s,
# window 20 s, batch 64, max_concurrent 128 (targets met in every run):
#   sqlite   1 node    300 offered: fires/s=300   lag p50=4ms   p99=97ms
#   sqlite   1 node    400 offered: fires/s=400   lag p50=17ms  p99=98ms
#   postgres 3 nodes  1000 offered: fires/s=1000  lag p50=2ms   p99=31ms
#   postgres 3 nodes  1200 offered: fires/s=1200  lag p50=2-3ms p99=28-49ms (two runs)
# Earlier runs with load average 27-35 from other jobs reached the PostgreSQL target in some
# runs only (p99 330 ms-1.6 s): the lag measures the machine as much as the engine.
#
#   bench/cron/run.sh                                        # the four runs above
#   RUNS="sqlite:1:400" WARMUP=2s MEASURE=5s bench/cron/run.sh   # db:nodes:schedules runs, shorter
set -eu
cd "$(dirname "$0")/../.."
RUNS="${RUNS:-sqlite:1:400 postgres:3:300 postgres:3:1000 postgres:3:1200}"
bin="$(mktemp -d)/cron"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./bench/cron
for r in $RUNS; do
	IFS=: read -r db nodes schedules <<EOF2
$r
EOF2
	"$bin" -db "$db" -nodes "$nodes" -schedules "$schedules" -warmup "${WARMUP:-5s}" -measure "${MEASURE:-20s}"
done
