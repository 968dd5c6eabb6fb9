#!/usr/bin/env bash
# run.sh benchmarks the storage upload path (see main.go): a 256 MiB upload with the server's
# part plan and 3 parts in flight, against a raw cp of the same file on the same disk measured
# in the same run, on the filesystem backend and on the local S3 server of scripts/services.sh.
#
#   bench/upload/run.sh                 # both providers
#   bench/upload/run.sh filesystem      # one provider
#   RUNS=7 SIZE=512 bench/upload/run.sh
#   SVC_BIN=.cache/bin/svc bench/upload/run.sh   # an already built binary (bench/run.sh)
#
# The targets (issue #6): upload throughput >= 40 % of cp's, server peak RSS <= idle + 64 MiB.
# The numbers of the last recorded run are in docs/modules/storage.md ("Benchmark").
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
providers=("${@:-filesystem objstore}")
# shellcheck disable=SC2206 # split the default list on purpose
providers=(${providers[*]})

bin="$(mktemp -d)/svc"
trap 'rm -rf "$(dirname "$bin")"' EXIT
if [ -n "${SVC_BIN:-}" ]; then cp "$SVC_BIN" "$bin"; else go build -o "$bin" ./cmd/svc; fi

for p in "${providers[@]}"; do
	if [[ $p == objstore && -z ${SVC_TEST_S3_ENDPOINT:-} ]]; then
		env_lines="$(scripts/services.sh)"
		eval "$env_lines"
	fi
	echo "== $p"
	go run ./bench/upload -provider "$p" -bin "$bin" -runs "${RUNS:-5}" -size "${SIZE:-256}" -v
	echo
done
