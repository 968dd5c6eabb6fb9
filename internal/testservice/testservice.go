// Package testservice is the one place that locates the real services of the tests
// (PostgreSQL, MySQL/MariaDB, Redis, S3) and gives each test storage of its own on them:
//
//   - the rule: a service's address comes from an SVC_TEST_* environment variable; when the
//     variable is unset the test is skipped, or fails when SVC_TEST_REQUIRE_SERVICES=1 (CI);
//   - DataSource and OpenDB: an isolated SQLite file, PostgreSQL schema or MySQL database per
//     call, dropped when the test ends;
//   - S3Server and RemoveBucket: the S3 server with a bucket name unique to the test;
//   - EachDB, Clock and Eventually: the database matrix, the fake clock and polling with a
//     deadline.
//
// It imports config, db and storage/objstore (for the endpoint form), nothing that boots a
// server, so both svctest and module-internal tests, which cannot import svctest without an
// import cycle, use it.
// svctest re-exports it for host applications.
package testservice

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"
)

// Environment variables that point the real-service tests at running servers.
const (
	// EnvPostgresDSN is a PostgreSQL URL, e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
	EnvPostgresDSN = "SVC_TEST_POSTGRES_DSN"
	// EnvMySQLDSN is a go-sql-driver DSN, e.g. root@tcp(127.0.0.1:3306)/test?parseTime=true.
	EnvMySQLDSN = "SVC_TEST_MYSQL_DSN"
	// EnvRedisAddr is host:port of a Redis server, or the path of its unix socket.
	EnvRedisAddr = "SVC_TEST_REDIS_ADDR"
	// EnvS3Endpoint is the S3 endpoint: host:port, or a URL whose scheme selects TLS.
	EnvS3Endpoint = "SVC_TEST_S3_ENDPOINT"
	// EnvS3AccessKey is the S3 access key.
	EnvS3AccessKey = "SVC_TEST_S3_ACCESS_KEY"
	// EnvS3SecretKey is the S3 secret key.
	EnvS3SecretKey = "SVC_TEST_S3_SECRET_KEY"
	// EnvS3Region is the S3 region (default us-east-1).
	EnvS3Region = "SVC_TEST_S3_REGION"
	// EnvRequireServices set to "1" (as CI does) turns a missing service into a test failure.
	EnvRequireServices = "SVC_TEST_REQUIRE_SERVICES"
)

// Timeout bounds each set-up and clean-up call against a real service.
const Timeout = 30 * time.Second

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

// Suffix returns n random bytes as lowercase hex, for names of databases, schemas, buckets and
// keys that must not collide between tests, runs or machines.
func Suffix(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
