# Entry points; the scripts hold the logic (see docs/testing.md).
SHELL := bash
.SHELLFLAGS := -euo pipefail -c

# Package pattern and benchmark regexp for `make bench`, e.g.
#   make bench PKG=./rpc/... BENCH=Dispatch
PKG ?= ./...
BENCH ?= .

.PHONY: test run build bench services

# The full suite against real services, exactly as CI runs it.
test:
	scripts/test.sh

# Serve with the default configuration.
run:
	go run ./cmd/svc serve

# The binary in bin/svc, stamped with the commit Go records (-buildvcs, forced on: some
# environments turn it off through GOFLAGS) and the build time (sys/monitor get_build_info,
# `svc version`).
build:
	go build -buildvcs=true -ldflags "-X github.com/svc-framework/svc/app.buildTime=$$(date -u +%Y-%m-%dT%H:%M:%SZ)" -o bin/svc ./cmd/svc

# Go benchmarks with the real services' settings exported.
bench:
	env_lines="$$(scripts/services.sh)"; eval "$$env_lines"; \
	go test -run '^$$' -bench '$(BENCH)' -benchmem $(PKG)

# Start (or check) the services only; prints the export lines.
services:
	scripts/services.sh
