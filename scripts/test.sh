#!/usr/bin/env bash
# test.sh is the project's one test command (CI runs it through .ci/run):
# start the real services, then gofmt, go vet, staticcheck and the race-enabled test suite
# with SVC_TEST_REQUIRE_SERVICES=1, so a missing service fails instead of
# skipping. Optional arguments replace the package pattern ./... for vet and
# test, e.g. `scripts/test.sh ./db/...`.
#
# It needs root (or sudo) and apt-get the first time, to install and start the
# services; the ones it started are stopped at the end (SVC_TEST_KEEP_SERVICES=1
# keeps them running). A first run on a cold machine is long: see README.md.
#
# Every check runs even when an earlier one failed, so one run reports all of
# them; the exit status is non-zero when any failed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

pkgs=("$@")
((${#pkgs[@]})) || pkgs=(./...)
timeout="${SVC_TEST_TIMEOUT:-30m}"

section() { printf '\n==> %s\n' "$*"; }
failed=()

section "services (scripts/services.sh)"
# The services this run brings up (not those that were already running) are stopped when it
# ends, whatever the outcome, unless SVC_TEST_KEEP_SERVICES=1.
started_file="$(mktemp)"
stop_started() {
	local names
	mapfile -t names <"$started_file"
	rm -f "$started_file"
	((${#names[@]})) || return 0
	if [[ ${SVC_TEST_KEEP_SERVICES:-0} == 1 ]]; then
		section "services left running (SVC_TEST_KEEP_SERVICES=1): ${names[*]}"
		return 0
	fi
	section "stopping the services this run started: ${names[*]} (SVC_TEST_KEEP_SERVICES=1 keeps them)"
	scripts/services.sh stop "${names[@]}" || true
}
trap stop_started EXIT
# Assign first: `eval "$(cmd)"` alone would hide a failing cmd from set -e.
env_lines="$(SVC_SERVICES_STARTED="$started_file" scripts/services.sh)"
eval "$env_lines"
export SVC_TEST_REQUIRE_SERVICES=1

section "gofmt -l"
# Module code only: skip the caches, nested tools modules' build output and
# testdata, which may hold deliberately malformed Go.
mapfile -t unformatted < <(
	find . \( -path ./.git -o -path ./.cache -o -name testdata -o -name node_modules \) -prune \
		-o -type f -name '*.go' -print0 | xargs -0 -r gofmt -l
)
if ((${#unformatted[@]})); then
	echo "these files need gofmt -w:"
	printf '  %s\n' "${unformatted[@]}"
	failed+=("gofmt")
else
	echo "ok"
fi

section "go vet ${pkgs[*]}"
if go vet "${pkgs[@]}"; then echo "ok"; else failed+=("go vet"); fi

section "staticcheck ${pkgs[*]} (pinned in tools/staticcheck)"
# Built from the pinned tools module; go's build cache makes a rebuild take seconds.
if (cd tools/staticcheck && GOWORK=off go build -o "$ROOT/.cache/bin/staticcheck" honnef.co/go/tools/cmd/staticcheck) &&
	"$ROOT/.cache/bin/staticcheck" "${pkgs[@]}"; then
	echo "ok"
else
	failed+=("staticcheck")
fi

section "go test -race -count=1 -timeout $timeout ${pkgs[*]}"
if go test -race -count=1 -timeout "$timeout" "${pkgs[@]}"; then
	echo "ok"
else
	failed+=("go test")
fi

# Resident-set bounds hold for the server, not for the race detector's shadow memory: the tests
# that measure them check their bound in a plain build (under -race they check the rest).
if ((${#@} == 0)); then
	section "memory bounds without the race detector (integration)"
	if go test -count=1 -run 'TestInboundMemoryWithoutCredentials|TestSandboxHostileMemory' ./integration/; then
		echo "ok"
	else
		failed+=("memory bounds")
	fi
fi

section "bypass guard tests with SVC_BYPASS_OFF=1 (internal/bypass)"
if SVC_BYPASS_OFF=1 go test -count=1 -run 'TestFastCall|TestSDKOnly|TestSmallBuffers|TestFrames|TestLowerPriority' ./mcp ./push ./backup; then
	echo "ok"
else
	failed+=("bypass guard tests")
fi

# The short fault-injection run (docs/testing.md): only with the default package pattern, and
# SVC_TEST_FAULTS=0 skips it. Fixed seeds, about 3.5 minutes on 2 cores, plus the upgraded
# build (the rolling upgrade is on). No clock skew (-skew 0): its build recompiles everything
# over an overlaid time package (10–18 minutes on a cold cache); run it by hand (docs/testing.md).
if ((${#@} == 0)) && [[ ${SVC_TEST_FAULTS:-1} != 0 ]]; then
	section "fault-injection short run (bench/faults, PostgreSQL seed 1, MariaDB seed 2)"
	if go run ./bench/faults -db postgres -seed 1 -duration 90s -skew 0 &&
		go run ./bench/faults -db mysql -seed 2 -duration 50s -skew 0; then
		echo "ok"
	else
		failed+=("bench/faults")
	fi
fi

# The console (console/web → console/dist): the committed build must match its sources, and the
# browser tests drive headless Chromium against the built binary (about a minute). Only on a
# full run: a package pattern asks for Go packages alone.
if (($# == 0)); then
	section "console: committed build matches sources (scripts/console.sh check)"
	if scripts/console.sh check; then echo "ok"; else failed+=("console check"); fi
	section "console: browser tests (scripts/console.sh e2e)"
	if scripts/console.sh e2e; then echo "ok"; else failed+=("console e2e"); fi
fi

if ((${#failed[@]})); then
	section "FAILED: ${failed[*]}"
	exit 1
fi
section "all checks passed"
