#!/usr/bin/env bash
# console.sh builds and checks the operator console's assets (console/web → console/dist).
#
#   scripts/console.sh build   npm ci, then the production build into console/dist
#   scripts/console.sh types   regenerate console/web/src/api/ops.gen.ts, the operation map, from
#                              the engine the binary builds (after adding or changing an operation)
#   scripts/console.sh check   fail when ops.gen.ts differs from the registered operations, run the
#                              unit tests (vitest), rebuild into a temporary directory and fail when
#                              it differs from the committed console/dist (CI: sources and build agree)
#   scripts/console.sh e2e     the browser tests (console/web/e2e) against a freshly built svc
#                              (starts the test services of scripts/services.sh: Redis is needed);
#                              E2E_STEPS=<regexp> runs only the matching areas ("core" or a
#                              steps-*.mjs file name, e.g. E2E_STEPS=approval)
#   scripts/console.sh chromium  install Debian's chromium when /usr/bin/chromium is missing
#
# The build is reproducible: content-hashed file names, no timestamps, pinned versions in
# console/web/package-lock.json. Node.js and npm are needed only here, never by `svc serve`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WEB="$ROOT/console/web"
DIST="$ROOT/console/dist"

deps() {
	# npm ci only when the lock file changed since the last install (CI caches node_modules).
	local stamp="$WEB/node_modules/.svc-lock"
	if [[ ! -f "$stamp" ]] || ! cmp -s "$stamp" "$WEB/package-lock.json"; then
		(cd "$WEB" && npm ci --no-audit --no-fund --loglevel=error)
		cp "$WEB/package-lock.json" "$stamp"
	fi
}

build_into() {
	(cd "$WEB" && CONSOLE_OUT_DIR="$1" npm run --silent build)
}

chromium() {
	# A CJK font lets the zh-CN screenshots show their text (the console itself ships no font).
	[[ -x /usr/bin/chromium && -d /usr/share/fonts/truetype/wqy ]] && return 0
	local sudo=""
	((EUID == 0)) || sudo="sudo"
	$sudo apt-get install -y --no-install-recommends chromium fonts-wqy-microhei >/dev/null ||
		{ $sudo apt-get update >/dev/null && $sudo apt-get install -y --no-install-recommends chromium fonts-wqy-microhei >/dev/null; }
}

# types_test runs the Go test that generates the operation map; extra arguments go to go test.
types_test() {
	(cd "$ROOT" && go test -count=1 -run '^TestConsoleOperationTypes$' ./cmd/svc "$@")
}

case "${1:-}" in
types)
	types_test -update
	echo "console/web/src/api/ops.gen.ts regenerated"
	;;
build)
	deps
	build_into "$DIST"
	;;
check)
	deps
	types_test >/dev/null || {
		echo "console/web/src/api/ops.gen.ts differs from the engine's operations: run scripts/console.sh types and commit it" >&2
		exit 1
	}
	(cd "$WEB" && npm run --silent test)
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	build_into "$tmp/dist" >/dev/null
	if ! diff -r "$DIST" "$tmp/dist"; then
		echo "console/dist differs from a build of console/web: run scripts/console.sh build and commit console/dist" >&2
		exit 1
	fi
	echo "console/dist matches its sources"
	;;
e2e)
	deps
	chromium
	mkdir -p "$ROOT/.cache"
	# The events steps relay the outbox to Redis Streams: start the test services when the caller
	# has not (scripts/test.sh already has).
	[[ -n "${SVC_TEST_REDIS_ADDR:-}" ]] || eval "$("$ROOT/scripts/services.sh")"
	(cd "$ROOT" && go build -o "$ROOT/.cache/console-e2e-svc" ./cmd/svc)
	(cd "$WEB" && SVC_BIN="$ROOT/.cache/console-e2e-svc" SHOTS_DIR="$ROOT/.cache/console-shots" node e2e/run.mjs)
	;;
chromium)
	chromium
	;;
*)
	echo "usage: scripts/console.sh types|build|check|e2e|chromium" >&2
	exit 2
	;;
esac
