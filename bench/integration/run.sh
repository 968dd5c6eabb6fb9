#!/bin/sh
# Runs the integration benchmark (bench/integration/main.go) for the issue #21 targets:
#   inbound deliveries through `return dispatch(JSON.parse(request.body))` >= 2 000/s, p99 <= 50 ms;
#   outbound invocations, one local HTTP call each, >= 1 500/s.
# PostgreSQL runs need SVC_TEST_POSTGRES_DSN (eval "$(scripts/services.sh)").
#
# Recorded on the shared 2-core build machine (load average 8-10 from other helpers' jobs
# during every run; the load generator runs in the same process), window 10 s, warm-up 3 s:
#   inbound  sqlite   c=32: 3619/s  p50=7.0ms p99=36.2ms
#   inbound  sqlite   c=16: 2813/s  p50=4.1ms p99=25.7ms
#   inbound  postgres c=16: 2415/s  p50=4.6ms p99=33.3ms
#   outbound sqlite   c=32: 3145/s  p50=8.0ms p99=47.5ms
#   outbound sqlite   c=16: 3051/s  p50=3.5ms p99=23.2ms
#   outbound postgres c=16: 2957/s  p50=4.0ms p99=25.2ms
set -eu
cd "$(dirname "$0")/../.."
go build -o /tmp/svc-bench-itg ./bench/integration
/tmp/svc-bench-itg -mode inbound -c 16 -d 10s
/tmp/svc-bench-itg -mode inbound -c 32 -d 10s
/tmp/svc-bench-itg -mode outbound -c 16 -d 10s
/tmp/svc-bench-itg -mode outbound -c 32 -d 10s
if [ -n "${SVC_TEST_POSTGRES_DSN:-}" ]; then
	/tmp/svc-bench-itg -mode inbound -db postgres -c 16 -d 10s
	/tmp/svc-bench-itg -mode outbound -db postgres -c 16 -d 10s
fi
