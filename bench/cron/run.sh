#!/bin/sh
# Runs the cron engine benchmark (bench/cron/main.go) for the issue #16 targets:
#   PostgreSQL, three nodes: >= 1 000 fires/s sustained, fire lag p99 <= 1 s when not overloaded;
#   SQLite, one node: >= 200 fires/s.
# Needs SVC_TEST_POSTGRES_DSN (eval "$(scripts/services.sh)").
#
# Recorded on the shared 2-core build machine (load average 23-30 from other jobs during every
# run, so the figures are lower bounds), commit of this file's branch:
#   sqlite   1 node   400 offered: fires/s=400  lag p50=9ms    p99=239ms
#   postgres 3 nodes  300 offered: fires/s=300  lag p50=25ms   p99=153ms
#   postgres 3 nodes 1000 offered: fires/s=993 (+132 skipped/forbid) lag p50=1.1s p99=1.7s
#   postgres 3 nodes 1200 offered: fires/s=1029 (overloaded: lag p99 4.9s)
# Numbers of the latest run are in the report of the branch (see docs/cron.md#benchmark).
set -eu
cd "$(dirname "$0")/../.."
go build -o /tmp/svc-bench-cron ./bench/cron
/tmp/svc-bench-cron -db sqlite -nodes 1 -schedules 400
/tmp/svc-bench-cron -db postgres -nodes 3 -schedules 300
/tmp/svc-bench-cron -db postgres -nodes 3 -schedules 1000
/tmp/svc-bench-cron -db postgres -nodes 3 -schedules 1200
