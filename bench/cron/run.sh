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
set -eu
cd "$(dirname "$0")/../.."
go build -o /tmp/svc-bench-cron ./bench/cron
/tmp/svc-bench-cron -db sqlite -nodes 1 -schedules 400
/tmp/svc-bench-cron -db postgres -nodes 3 -schedules 300
/tmp/svc-bench-cron -db postgres -nodes 3 -schedules 1000
/tmp/svc-bench-cron -db postgres -nodes 3 -schedules 1200
