// Package testservice holds the one rule for tests that need a real service (PostgreSQL,
// MySQL/MariaDB, Redis, S3): its address comes from an SVC_TEST_* environment variable; when the
// variable is unset the test is skipped, or fails when SVC_TEST_REQUIRE_SERVICES=1 (CI). It is a
// leaf package so both svctest and module-internal test helpers (which cannot import svctest
// without an import cycle) share the rule.
package testservice

import (
	"os"
	"testing"
)

// EnvRequireServices turns a missing service into a test failure.
const EnvRequireServices = "SVC_TEST_REQUIRE_SERVICES"

// Require returns the value of envVar. When it is empty the test is skipped with a message
// naming the variable, or fails when SVC_TEST_REQUIRE_SERVICES=1.
func Require(t testing.TB, envVar string) string {
	t.Helper()
	if v := os.Getenv(envVar); v != "" {
		return v
	}
	if os.Getenv(EnvRequireServices) == "1" {
		t.Fatalf("%s is not set, and %s=1 requires the real service", envVar, EnvRequireServices)
	}
	t.Skipf("%s is not set: skipping the test against the real service", envVar)
	return ""
}
