#!/bin/sh
# Runs BenchmarkOutboxPostgres and BenchmarkPostgresCommitCeiling alternately (ROUNDS rounds,
# default 5), so both see the same load of a shared machine, and prints each round and the
# medians: the outbox figure is bounded by the ceiling (one commit per event), so the ratio of
# the two is the outbox's own cost; the absolute figures follow the machine's load.
# Needs SVC_TEST_POSTGRES_DSN (eval "$(scripts/services.sh)").
#
#   ROUNDS=3 sh bench/event/ratio.sh
#   DB=SQLite ROUNDS=1 BENCHTIME=2000x sh bench/event/ratio.sh   # the same on a SQLite file
set -eu
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-5}
db=${DB:-Postgres}
benchtime=${BENCHTIME:-2s}
bin=$(mktemp -d)/event.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" ./bench/event/
out=$(mktemp)
for i in $(seq "$rounds"); do
	"$bin" -test.run '^$' -test.bench "Outbox$db\$" -test.benchtime "$benchtime" | grep '^Benchmark' | tee -a "$out"
	"$bin" -test.run '^$' -test.bench "${db}CommitCeiling" -test.benchtime "$benchtime" | grep '^Benchmark' | tee -a "$out"
done
awk -v db="$db" '
function median(a, n,   i, j, t) {
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$1 ~ "^BenchmarkOutbox" db "-" { for (k = 1; k < NF; k++) { if ($(k+1) == "events/s") ev[++ne] = $k; if ($(k+1) == "p50-ms") p50[++np] = $k; if ($(k+1) == "p99-ms") p99[++nq] = $k } }
$1 ~ "^Benchmark" db "CommitCeiling-" { for (k = 1; k < NF; k++) if ($(k+1) == "commits/s") ce[++nc] = $k }
END {
	e = median(ev, ne); c = median(ce, nc)
	printf "median: outbox %.0f events/s (p50 %.1f ms, p99 %.1f ms), ceiling %.0f commits/s, outbox/ceiling %.2f\n", e, median(p50, np), median(p99, nq), c, e / c
}' "$out"
rm -f "$out"
