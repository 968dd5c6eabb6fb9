#!/bin/sh
# Runs the cron engine benchmark (bench/cron/main.go) for the issue #16 targets:
#   PostgreSQL, three nodes: >= 1 000 fires/s sustained, fire lag p99 <= 1 s when not overloaded;
#   SQLite, one node: >= 200 fires/s.
# Needs SVC_TEST_POSTGRES_DSN (eval "$(scripts/services.sh)").
#
# Recorded on the shared 2-core build machine with load average 27-35 from other jobs during
# every run (so figures vary widely from run to run), after the claim/outcome changes of
# branch crn; warm-up 5 s, window 20 s, batch 64, max_concurrent 128:
#   sqlite   1 node   400 offered: fires/s=400   lag p50=34ms  p99=376ms   (twice: p99 239ms)
#   postgres 3 nodes 1000 offered: fires/s=1000  lag p50=32ms  p99=330ms
#                                  fires/s=1000  lag p50=33ms  p99=804ms
#                                  fires/s=938 (+1249 skipped) lag p50=1.2s p99=1.6s  (missed)
#   postgres 3 nodes 1200 offered: fires/s=1200 p99=594ms once; 1103 and 708 (backlog) in others
# So the PostgreSQL target (>= 1000 fires/s, p99 <= 1 s) is reached in some runs only here.
set -eu
cd "$(dirname "$0")/../.."
go build -o /tmp/svc-bench-cron ./bench/cron
/tmp/svc-bench-cron -db sqlite -nodes 1 -schedules 400
/tmp/svc-bench-cron -db postgres -nodes 3 -schedules 300
/tmp/svc-bench-cron -db postgres -nodes 3 -schedules 1000
/tmp/svc-bench-cron -db postgres -nodes 3 -schedules 1200
