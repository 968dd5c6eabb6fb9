package svctest

import (
	"context"
	"fmt"
	"hash/fnv"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/kv"
)

// Environment variables that point the real-service tests at running servers (CONVENTIONS:
// tests layer 3). A test that needs a service whose variable is unset is skipped, or fails when
// EnvRequireServices is "1".
const (
	// EnvPostgresDSN is a PostgreSQL URL, e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
	EnvPostgresDSN = testservice.EnvPostgresDSN
	// EnvMySQLDSN is a go-sql-driver DSN, e.g. root@tcp(127.0.0.1:3306)/test?parseTime=true.
	EnvMySQLDSN = testservice.EnvMySQLDSN
	// EnvRedisAddr is host:port of a Redis server, or the path of its unix socket.
	EnvRedisAddr = testservice.EnvRedisAddr
	// EnvS3Endpoint is the S3 endpoint: host:port, or a URL whose scheme selects TLS.
	EnvS3Endpoint = testservice.EnvS3Endpoint
	// EnvS3AccessKey is the S3 access key.
	EnvS3AccessKey = testservice.EnvS3AccessKey
	// EnvS3SecretKey is the S3 secret key.
	EnvS3SecretKey = testservice.EnvS3SecretKey
	// EnvS3Region is the S3 region (default us-east-1).
	EnvS3Region = testservice.EnvS3Region
	// EnvRequireServices set to "1" (as CI does) turns a missing service into a test failure.
	EnvRequireServices = testservice.EnvRequireServices
)

// processNonce is random per test binary run: it keeps UniquePrefix apart between packages that
// `go test` runs in parallel and between runs against the same server. It is the one piece of
// package state in svctest, read-only after first use.
var processNonce = sync.OnceValue(func() string { return testservice.Suffix(4) })

// UniquePrefix returns a key prefix that belongs to t alone, for Redis keys, stream and channel
// names and the like: "svctest:<run nonce>:<test name>:<hash>:". It is the same on every call in
// one test, so clean-up code can find the keys again, and differs between tests (the hash covers
// the full test name), between parallel packages and between runs.
func UniquePrefix(t testing.TB) string {
	name := t.Name()
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	short := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
	if len(short) > 40 {
		short = short[:40]
	}
	return fmt.Sprintf("svctest:%s:%s:%08x:", processNonce(), short, h.Sum32())
}

// RedisConfig returns an enabled config.KVStore for the server in SVC_TEST_REDIS_ADDR (host:port,
// or a socket path starting with "/"), database 0. It skips or fails the test per
// testservice.Require when the variable is unset (skip, or fail under SVC_TEST_REQUIRE_SERVICES=1).
func RedisConfig(t testing.TB) config.KVStore {
	t.Helper()
	addr := testservice.Require(t, EnvRedisAddr)
	if strings.HasPrefix(addr, "/") {
		return config.KVStore{Enabled: true, Network: "unix", Host: addr}
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("%s=%q: want host:port or a socket path: %v", EnvRedisAddr, addr, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		t.Fatalf("%s=%q: port: %v", EnvRedisAddr, addr, err)
	}
	return config.KVStore{Enabled: true, Network: "tcp", Host: host, Port: uint16(port)}
}

// Redis returns a client for the server in SVC_TEST_REDIS_ADDR (see RedisConfig), closed when
// the test ends. The server is shared, so tests must isolate their data with UniquePrefix(t) on
// every key and never FLUSHDB; at clean-up the keys under UniquePrefix(t) are deleted.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testservice.Timeout)
	defer cancel()
	client, err := kv.Open(ctx, RedisConfig(t))
	if err != nil {
		t.Fatalf("svctest: redis: %v", err)
	}
	prefix := UniquePrefix(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testservice.Timeout)
		defer cancel()
		if err := deleteKeys(ctx, client, prefix+"*"); err != nil {
			t.Errorf("svctest: delete redis keys %s*: %v", prefix, err)
		}
		_ = client.Close()
	})
	return client
}

// deleteKeys removes every key matching pattern, one SCAN page at a time.
func deleteKeys(ctx context.Context, client *redis.Client, pattern string) error {
	iter := client.Scan(ctx, 0, pattern, 500).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			if err := client.Unlink(ctx, batch...).Err(); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		return client.Unlink(ctx, batch...).Err()
	}
	return nil
}

// S3Config locates the S3-compatible server of the real-service tests: Endpoint (host:port,
// without scheme), AccessKey, SecretKey, Bucket (a name unique to the test; creating it is the
// caller's job, RemoveBucket removes it), Region (SVC_TEST_S3_REGION, default us-east-1) and
// UseSSL (the endpoint was given as an https:// URL); its ObjStore method gives the matching
// svc.storage.objstore section.
type S3Config = testservice.S3Config

// S3 returns the S3 server of SVC_TEST_S3_ENDPOINT, SVC_TEST_S3_ACCESS_KEY and
// SVC_TEST_S3_SECRET_KEY with a fresh bucket name ("svctest-" and 16 hex digits, valid under the
// S3 naming rules). It skips the test when a variable is unset, or fails it when
// SVC_TEST_REQUIRE_SERVICES=1.
func S3(t testing.TB) S3Config {
	t.Helper()
	return testservice.S3Server(t)
}

// RemoveBucket deletes every object and open multipart upload of the test's bucket, then the
// bucket; a bucket that was never created is not an error. Register it with t.Cleanup after
// creating the bucket.
func RemoveBucket(t testing.TB, s3 S3Config) {
	t.Helper()
	testservice.RemoveBucket(t, s3)
}
